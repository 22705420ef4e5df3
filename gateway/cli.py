"""The `marathon` command line: check, run, demo, report, compare, replay, inspect and more.

Exit codes: 0 success; 1 a run failed or a benchmark is invalid; 2 bad usage or config;
130 interrupted (the run log stays valid and `marathon run` resumes it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from gateway import __version__
from gateway.agents import check_agent_settings, describe_agent, shared_resources
from gateway.budget import render_ladder
from gateway.config import ConfigError, Experiment, RunSpec, load_config
from gateway.events import Blob, Event, LLMExchange, UnknownEvent
from gateway.experiment import compare, read_lines, render_comparison
from gateway.matrix_report import MatrixReport, write_matrix_report
from gateway.personas import check_persona_settings
from gateway.progress import ProgressBoard
from gateway.recordings import load_run
from gateway.runlog import EVENTS_FILE, RunLogFormatError, read_log
from gateway.runner import ResumeError, Run, RunOutcome, TerminationReason, run_status
from persona.benchmark import Benchmark, load_benchmark
from persona.errors import BenchmarkErrors
from persona.scale import apply_rung, benchmark_for

REPO_ROOT = Path(__file__).resolve().parents[1]
DEMO_BENCHMARK = REPO_ROOT / "benchmarks" / "demo-en"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="marathon", description="Long-term memory marathons for unmodified chat agents."
    )
    parser.add_argument("--version", action="version", version=f"marathonbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="validate a benchmark folder and print its shape")
    p.add_argument("benchmark", type=Path)
    p = sub.add_parser("run", help="run (or resume) every run named in a config.jsonc")
    p.add_argument("config", type=Path)
    p.add_argument("--fresh", action="store_true", help="start every run over, discarding its log")
    p.add_argument(
        "--only",
        action="append",
        metavar="ID",
        help="run only this run, matrix entry or experiment (repeatable)",
    )
    p.add_argument(
        "--persona", help="override every run's persona: scripted | anthropic:MODEL | openai:URL#MODEL"
    )
    p = sub.add_parser("demo", help="offline demo: scripted persona × reference agent on the stand-in model")
    p.add_argument("--recordings", type=Path, default=Path("recordings"))
    p.add_argument("--fresh", action="store_true", help="start over even if an unfinished demo run exists")
    p.add_argument("--persona", default="scripted", help="scripted | anthropic:MODEL | openai:URL#MODEL")
    p.add_argument(
        "--surface",
        default="http",
        choices=["http", "telegram", "websocket"],
        help="how the persona reaches the agent",
    )
    p = sub.add_parser(
        "proxy", help="record any agent's LLM traffic live and print compactions and memory calls"
    )
    p.add_argument(
        "--upstream", required=True, help="the agent's real LLM base URL, e.g. https://api.anthropic.com"
    )
    p.add_argument(
        "--profile", help="known agent: reference, openclaw, hermes, letta, anthropic (default: all)"
    )
    p.add_argument("--port", type=int, default=0, help="loopback port to listen on (default: a free one)")
    p.add_argument("--recordings", type=Path, default=Path("recordings"))
    p = sub.add_parser(
        "rescore", help="re-grade a run's exam with another grader, blind; compare with the persona's grades"
    )
    p.add_argument("run", type=Path, help="a run folder")
    p.add_argument("--grader", default="exact", help="exact | anthropic:MODEL | openai:URL#MODEL")
    p.add_argument("--base-url", help="the judge model's base URL (Anthropic)")
    p = sub.add_parser("judge-check", help="a grader's recall and specificity on the calibration set")
    p.add_argument("--grader", default="exact", help="exact | anthropic:MODEL | openai:URL#MODEL")
    p.add_argument("--base-url", help="the judge model's base URL (Anthropic)")
    p = sub.add_parser("import", help="convert another benchmark format into marathonbench benchmarks")
    p.add_argument("format", choices=["longmemeval"])
    p.add_argument("file", type=Path)
    p.add_argument("out_dir", type=Path)
    sub.add_parser("profiles", help="list the known agent profiles")
    p = sub.add_parser(
        "chat", help="type as the persona to an agent, through the gateway, recorded (for trying a profile)"
    )
    p.add_argument("--agent", required=True, help="an agent profile name (see `marathon profiles`)")
    p.add_argument("--recordings", type=Path, default=Path("recordings"))
    p = sub.add_parser(
        "report", help="rebuild the cross-run report (budget tables, A/B, report.html) from recordings"
    )
    p.add_argument("recordings", type=Path, nargs="?", default=Path("recordings"))
    p = sub.add_parser(
        "compare", help="paired A/B: wins per question group, bootstrap intervals, time and cost"
    )
    p.add_argument("source", type=Path, help="an experiment's NAME.runs.jsonl, or a recordings folder")
    p.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    p = sub.add_parser(
        "replay", help="re-drive another agent with a recorded run's persona side, word for word"
    )
    p.add_argument("run", type=Path, help="the recorded run's folder")
    p.add_argument("--agent", required=True, help="an agent profile name (see `marathon profiles`)")
    p.add_argument("--id", help="the new run's id (default RUN.replay-PROFILE)")
    p.add_argument(
        "--rung",
        action="append",
        help="play on this rung of the scale ladder (repeatable: one run each, ID.RUNG; default: the "
        "recorded rung) — the recorded evidence, word for word, with the rung's distractors",
    )
    p.add_argument(
        "--recordings", type=Path, help="where the new run goes (default: beside the recorded run)"
    )
    p.add_argument("--fresh", action="store_true", help="start the replay over, discarding its log")
    p = sub.add_parser("view", help="a live web viewer for the runs under a recordings folder (read-only)")
    p.add_argument("recordings", type=Path, nargs="?", default=Path("recordings"))
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0 = a free one)")
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default loopback; others get a warning)"
    )
    p = sub.add_parser("inspect", help="print a run's timeline from its log")
    p.add_argument("run", type=Path, help="a run folder or its events.msgpack")
    p.add_argument("--limit", type=int, default=0, help="print at most this many events (0 = all)")
    args = parser.parse_args(argv)
    # recordings hold people's conversations and agents' memories: files 0600, folders 0700,
    # for everything this process (and the agents it starts) creates
    os.umask(0o077)
    try:
        if args.command == "check":
            return cmd_check(args.benchmark)
        if args.command == "run":
            return cmd_run(args.config, fresh=args.fresh, only=args.only, persona=args.persona)
        if args.command == "demo":
            return cmd_demo(args.recordings, fresh=args.fresh, persona=args.persona, surface=args.surface)
        if args.command in ("rescore", "judge-check"):
            return cmd_grade(args)
        if args.command == "import":
            return cmd_import(args.file, args.out_dir)
        if args.command == "profiles":
            return cmd_profiles()
        if args.command == "chat":
            return cmd_chat(args.agent, args.recordings)
        if args.command == "report":
            return cmd_report(args.recordings)
        if args.command == "compare":
            return cmd_compare(args.source, args.seed)
        if args.command == "replay":
            return cmd_replay(args.run, args.agent, args.id, args.recordings, args.fresh, args.rung)
        if args.command == "view":
            return cmd_view(args.recordings, args.host, args.port)
        if args.command == "proxy":
            return cmd_proxy(args.upstream, args.profile, args.port, args.recordings)
        return cmd_inspect(args.run, args.limit)
    except BrokenPipeError:  # `marathon inspect RUN | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep Python from failing at exit
        return 0
    except KeyboardInterrupt:
        print("\ninterrupted; the run log is intact — run the same command again to resume", file=sys.stderr)
        return 130


# -- check -----------------------------------------------------------------------------------


def cmd_check(folder: Path) -> int:
    from persona.distractors import is_pool, load_pool

    if is_pool(folder):
        try:
            pool = load_pool(folder)
        except BenchmarkErrors as exc:
            for error in exc.errors:
                print(f"error: {error}", file=sys.stderr)
            print(f"{len(exc.errors)} error(s) in the distractor pool", file=sys.stderr)
            return 1
        facts = sum(len(f) for f in pool.sessions.values())
        print(f"distractor pool {folder} ({pool.language}): {len(pool.sessions)} sessions, {facts} facts")
        print(
            f"screened against: {', '.join(pool.evidence) or 'nothing'} — no shared names, numbers or dates"
        )
        return 0
    try:
        bench = load_benchmark(folder)
    except BenchmarkErrors as exc:
        for error in exc.errors:
            print(f"error: {error}", file=sys.stderr)
        print(f"{len(exc.errors)} error(s); the benchmark can't run", file=sys.stderr)
        return 1
    print(describe_benchmark(bench))
    if bench.scale is not None:
        spec = bench.scale
        try:  # every rung must be playable: the pool screened clean and large enough
            for rung in spec.rungs:
                apply_rung(bench, rung)
        except BenchmarkErrors as exc:
            for error in exc.errors:
                print(f"error: {error}", file=sys.stderr)
            return 1
        ladder = ", ".join(f"{k} = {v}" for k, v in spec.ladder.items())
        print(
            f"\nscale ladder: {ladder} distractor sessions before {spec.insert_before!r} "
            f"(pool {spec.distractors}, seed {spec.seed}); budgets {list(spec.budgets)}, target ρ = {spec.target:g}"
        )
    return 0


def describe_benchmark(bench: Benchmark) -> str:
    lines = [
        f"{bench.name} ({bench.language}) — {bench.root}",
        f"hash {bench.content_hash[:16]}",
        "",
        "phases:",
    ]
    for phase in bench.phases:
        notes = [*phase.actions]
        if phase.require_all_facts:
            notes.append("require_all_facts=" + ",".join(phase.require_all_facts))
        counts = Counter(type(item).__name__ for item in phase.items)
        parts = [
            f"{counts[k]} {label}"
            for k, label in (("Utterance", "lines"), ("FactUpdate", "updates"), ("Question", "questions"))
            if counts[k]
        ]
        extra = f" [{'; '.join(notes)}]" if notes else ""
        lines.append(
            f"  {phase.index + 1:>3}. {phase.chapter} — {phase.title}{extra}: {', '.join(parts) or 'no items'}"
        )
    lines += ["", "facts:"]
    lines += [
        f"  {name:<16} {len(ff.facts):>4} facts in {len(ff.sections)} sections ({ff.path})"
        for name, ff in bench.facts.items()
    ]
    tags = Counter(tag for q in bench.questions for tag in (q.tags or ("untagged",)))
    lines += ["", f"questions: {len(bench.questions)}"]
    lines += [f"  {tag:<16} {n:>4}" for tag, n in sorted(tags.items())]
    if bench.warnings:
        lines += ["", "warnings:", *(f"  {w}" for w in bench.warnings)]
    return "\n".join(lines)


# -- run / demo --------------------------------------------------------------------------------


def _run_all(
    specs: Sequence[RunSpec], recordings: Path, fresh: bool, parallel: int = 1
) -> list[RunOutcome | BaseException]:
    """Run `specs`, at most `parallel` at once, each isolated (its own log, agent, recorder
    listener and ports). A run that fails in our code doesn't stop the others; Ctrl-C
    interrupts all of them cleanly (each logs `interrupted`) and the same command resumes all."""

    async def go() -> list[RunOutcome | BaseException]:
        runs = [Run(spec, recordings, fresh=fresh) for spec in specs]
        gate = asyncio.Semaphore(parallel)
        board = ProgressBoard([r.progress for r in runs]) if len(runs) > 1 else None
        # the second run of an A/B pair starts when the first has ended: the drawn order holds
        first_done = {str(s.meta["pair"]): asyncio.Event() for s in specs if s.meta.get("position") == 1}

        # runs that share an agent, a fixed port or a state folder take turns
        held = {r.spec.id: sorted(shared_resources(r.spec.agent)) for r in runs}
        locks = {key: asyncio.Lock() for keys in held.values() for key in keys}

        async def one(run: Run) -> RunOutcome:
            pair = str(run.spec.meta.get("pair", ""))
            if run.spec.meta.get("position") == 2 and pair in first_done:
                await first_done[pair].wait()
            try:
                async with contextlib.AsyncExitStack() as stack:
                    for key in held[run.spec.id]:  # always in the same order: no deadlock
                        await stack.enter_async_context(locks[key])
                    return await gated(run)
            finally:
                if pair in first_done and run.spec.meta.get("position") == 1:
                    first_done[pair].set()

        async def gated(run: Run) -> RunOutcome:
            async with gate:
                if board is None:
                    print(
                        f"[{run.spec.id}] {'starting fresh' if fresh else 'starting or resuming'} → {run.run_dir}",
                        flush=True,
                    )
                return await run.execute()

        watcher = asyncio.create_task(board.watch()) if board else None
        try:
            return list(await asyncio.gather(*(one(r) for r in runs), return_exceptions=True))
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher

    return asyncio.run(go())


def _print_outcome(outcome: RunOutcome, brief: bool = False) -> bool:
    """One run's ending; True when its agent ran on the offline stand-in."""
    if outcome.skipped:
        print(f"[{outcome.run_id}] already ended ({outcome.reason}); use --fresh to run it again")
        return False
    s = load_run(outcome.run_dir).summary
    mean = "—" if s.mean is None else f"{s.mean:.2f}/10"
    if brief:
        print(
            f"[{outcome.run_id}]{'*' if s.stand_in else ''} {outcome.reason}: mean {mean}, "
            f"graded {len(s.evaluations)}/{len(s.planned)} → {outcome.report}"
        )
        return s.stand_in
    print(
        f"[{outcome.run_id}] {outcome.reason}: mean {mean}, graded {len(s.evaluations)}/{len(s.planned)}, "
        f"coverage {'complete' if s.coverage_complete else 'incomplete'}"
        + (f", resumed ({outcome.resent} re-sent)" if outcome.resumed else "")
    )
    if s.stand_in:
        print(f"[{outcome.run_id}] note: the agent ran on the offline rule-based stand-in, not an LLM")
    print(f"[{outcome.run_id}] report: {outcome.report}")
    return s.stand_in


def cmd_run(config_path: Path, fresh: bool, only: list[str] | None, persona: str | None = None) -> int:
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # --only takes a run's id, the id of a matrix entry (all its rungs and repeats) or an
    # experiment's name (all its runs)
    names = set(only or [])

    def chosen(spec: RunSpec) -> set[str]:
        return names & {spec.id, str(spec.meta.get("id", "")), str(spec.meta.get("experiment", ""))}

    specs = [s for s in config.runs if not only or chosen(s)]
    unknown = names - set().union(*(chosen(s) for s in specs)) if only else set()
    if unknown:
        print(f"error: no run named {', '.join(sorted(unknown))} in {config_path}", file=sys.stderr)
        return 2
    if persona:
        specs = [replace(s, persona={**s.persona, "driver": persona}) for s in specs]
    if config.experiment is not None and any(s.meta.get("experiment") for s in specs):
        _write_plan(config.experiment, config.recordings)
    return _run_and_report(specs, config.recordings, fresh, config.parallel)


def _write_plan(experiment: Experiment, recordings: Path) -> None:
    """The experiment's seed and the order drawn for each pair, beside its run lines."""
    recordings.mkdir(parents=True, exist_ok=True)
    plan = {
        "experiment": experiment.name,
        "seed": experiment.seed,
        "repeats": experiment.repeats,
        "tasks": list(experiment.tasks),
        "variants": {name: describe_agent(agent) for name, agent in experiment.variants.items()},  # redacted
        "pairs": [
            {"pair": p, "task": t, "repeat": k, "order": list(order)} for p, t, k, order in experiment.pairs
        ],
    }
    (recordings / f"{experiment.name}.plan.json").write_text(
        json.dumps(plan, indent=1) + "\n", encoding="utf-8"
    )


def _run_and_report(specs: Sequence[RunSpec], recordings: Path, fresh: bool, parallel: int = 1) -> int:
    try:
        for spec in specs:  # a bad benchmark or agent setting fails before any run starts
            benchmark = benchmark_for(spec.benchmark, spec.rung)
            check_agent_settings(spec.agent)
            check_persona_settings(spec.persona, benchmark)
        results = _run_all(specs, recordings, fresh, parallel)
    except BenchmarkErrors as exc:
        for error in exc.errors:
            print(f"error: {error}", file=sys.stderr)
        return 1
    except (ResumeError, RunLogFormatError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    ok = True
    brief = len(specs) > 1
    stand_in = False
    for spec, result in zip(specs, results, strict=True):
        if isinstance(result, KeyboardInterrupt | asyncio.CancelledError):
            raise KeyboardInterrupt
        if isinstance(result, BaseException):
            if not isinstance(result, ResumeError | RunLogFormatError | ValueError | OSError):
                raise result
            print(f"error: [{spec.id}] {result}", file=sys.stderr)
            ok = False
            continue
        stand_in = _print_outcome(result, brief) or stand_in
        ok = ok and result.reason == TerminationReason.COMPLETED
    if brief and stand_in:
        print("note: agents marked * ran on the offline rule-based stand-in, not an LLM")
    if brief or any(s.rung or s.meta.get("experiment") for s in specs):
        _print_matrix(recordings)
    return 0 if ok else 1


def cmd_demo(recordings: Path, fresh: bool, persona: str = "scripted", surface: str = "http") -> int:
    # a small context window, so the reference agent compacts its context while being told facts
    agent = {"adapter": "reference", "context_tokens": 400, "surface": surface}
    spec = RunSpec(
        "demo" if surface == "http" else f"demo-{surface}", DEMO_BENCHMARK, agent, {"driver": persona}
    )
    log_path = recordings / spec.id / EVENTS_FILE
    if not fresh and log_path.exists():
        try:
            status = run_status(read_log(log_path))
        except RunLogFormatError:
            status = TerminationReason.COMPLETED  # unreadable: nothing to resume, start over
        fresh = status == TerminationReason.COMPLETED
        if not fresh:
            print("demo: resuming the unfinished demo run")
    print(
        f"demo: {persona} persona × reference agent on the offline rule-based model stand-in (no network, no key)"
    )
    started = time.monotonic()
    code = _run_and_report([spec], recordings.resolve(), fresh)
    try:
        html: Path | str = write_matrix_report(recordings.resolve()).html
    except OSError as exc:
        print(f"error: can't write the HTML report: {exc}", file=sys.stderr)
        html, code = "not written", code or 1
    print(
        f"demo: done in {time.monotonic() - started:.1f} s; all runs: {recordings.resolve() / 'report.md'}; charts: {html}"
    )
    view = "./marathon view" + ("" if recordings == Path("recordings") else f" {recordings}")
    print(f"demo: browse it (live while a run goes on): {view}")
    return code


def _print_matrix(recordings: Path) -> MatrixReport | None:
    try:
        matrix = write_matrix_report(recordings)
    except OSError as exc:
        print(f"error: can't write the cross-run report under {recordings}: {exc}", file=sys.stderr)
        return None
    for ladder in matrix.ladders:
        print(render_ladder(ladder))
    for comparison in matrix.comparisons:
        print(render_comparison(comparison))
    for path in matrix.run_lines:
        print(f"run lines: {path}")
    for problem in matrix.problems:
        print(f"skipped {problem}", file=sys.stderr)
    print(f"across runs: {matrix.markdown}; charts: {matrix.html}; browse: ./marathon view {recordings}")
    return matrix


def cmd_report(recordings: Path) -> int:
    if not recordings.is_dir():
        print(f"error: {recordings} is not a folder", file=sys.stderr)
        return 2
    matrix = _print_matrix(recordings.resolve())
    if matrix is None:
        return 1
    if not matrix.runs:
        print(f"error: no run logs under {recordings}", file=sys.stderr)
        return 1
    return 0


def cmd_compare(source: Path, seed: int) -> int:
    if source.is_dir():
        files = sorted(source.glob("*.runs.jsonl"))
        if not files:
            write_matrix_report(source.resolve())
            files = sorted(source.glob("*.runs.jsonl"))
    else:
        files = [source]
    if not files:
        print(f"error: no experiment under {source} (its runs carry no `experiment`)", file=sys.stderr)
        return 1
    for path in files:
        try:
            lines = read_lines(path)
        except (OSError, ValueError) as exc:
            print(f"error: {path}: can't read the run lines: {exc}", file=sys.stderr)
            return 1
        print(render_comparison(compare(lines, seed=seed)))
    return 0


def cmd_replay(
    run: Path, agent: str, run_id: str | None, recordings: Path | None, fresh: bool, rungs: list[str] | None
) -> int:
    try:
        log = read_log(run / EVENTS_FILE)
    except (OSError, RunLogFormatError) as exc:
        print(f"error: {run}: can't read the recorded run: {exc}", file=sys.stderr)
        return 2
    try:
        check_agent_settings({"profile": agent})
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    base = run_id or f"{log.header.run_id}.replay-{agent}"
    recorded_rung = str(log.header.benchmark.get("rung", ""))
    specs = [
        RunSpec(
            f"{base}.{rung}" if rungs else base,
            Path(log.header.benchmark["path"]),
            {"profile": agent},
            {"driver": "replay", "from": str((run / EVENTS_FILE).resolve())},
            rung,
            {"replay_of": log.header.run_id},
        )
        for rung in rungs or [recorded_rung]
    ]
    on = f" on rung {', '.join(rungs)}" if rungs else ""
    print(f"replay: {log.header.run_id}'s persona side → agent profile {agent}{on}")
    return _run_and_report(specs, (recordings or run.parent).resolve(), fresh)


def cmd_view(recordings: Path, host: str, port: int) -> int:
    from adapters.http_server import serve
    from gateway.viewer import make_app

    if not recordings.is_dir():
        print(f"error: {recordings} is not a folder (run `marathon demo` first?)", file=sys.stderr)
        return 2

    async def go() -> None:
        try:
            served = await serve(make_app(recordings), host, port)
        except OSError as exc:
            print(f"error: can't listen on {host}:{port}: {exc.strerror}; try --port 0", file=sys.stderr)
            raise SystemExit(2) from None
        print(
            f"viewer: {served.url}/  (runs under {recordings.resolve()}; read-only; Ctrl-C to stop)",
            flush=True,
        )
        try:
            await asyncio.Event().wait()
        finally:
            await served.stop()

    try:
        asyncio.run(go())
    except KeyboardInterrupt:
        print("viewer: stopped")
    return 0


def cmd_proxy(upstream: str, profile: str | None, port: int, recordings: Path) -> int:
    if not upstream.startswith(("http://", "https://")):
        print(f"error: --upstream must be an http:// or https:// URL, not {upstream!r}", file=sys.stderr)
        return 2
    from gateway.traffic.watch import watch  # mitmproxy loads only for this command

    try:
        asyncio.run(
            watch(
                upstream,
                recordings.resolve(),
                profile=profile,
                port=port,
                out=lambda line: print(line, flush=True),
            )
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_import(source: Path, out_dir: Path) -> int:
    from persona.longmemeval import ImportError_, import_longmemeval

    try:
        done = import_longmemeval(source, out_dir)
    except ImportError_ as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for item in done:
        kind = " (abstention)" if item.abstain else ""
        print(f"{item.question_id}: {item.sessions} sessions{kind} → {item.folder}")
    print(
        f"{len(done)} benchmarks written; check one with `marathon check {done[0].folder if done else out_dir}`"
    )
    return 0


def cmd_profiles() -> int:
    from adapters.profiles import profile_names, read_profile

    for name in profile_names():
        profile = read_profile(name)
        print(f"{name:<20} {profile.get('adapter', '?'):<12} {profile.get('description', '')}")
    return 0


def cmd_chat(profile: str, recordings: Path) -> int:
    from gateway.chat import chat

    try:
        asyncio.run(chat({"profile": profile}, recordings.resolve(), sys.stdin, print))
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    from gateway.rescore import judge_check, rescore
    from persona.judge import make_judge

    try:
        judge = make_judge(args.grader, base_url=args.base_url)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def pct(value: float | None) -> str:
        return "—" if value is None else f"{value:.0%}"

    async def go() -> int:
        try:
            if args.command == "judge-check":
                result = await judge_check(judge)
                print(
                    f"{judge.name}: recall {pct(result.recall)} (correct answers judged correct), "
                    f"specificity {pct(result.specificity)} (wrong answers judged wrong), "
                    f"unscored {result.unscored} of {result.total}"
                )
                for miss in result.misses:
                    print(f"  miss: {miss}")
                return 0
            results, out = await rescore(args.run, judge)
            print(f"{judge.name}: re-graded {len(results)} questions; report: {out}")
            return 0
        finally:
            client = getattr(judge, "client", None)
            if client is not None:
                await client.close()

    try:
        return asyncio.run(go())
    except (OSError, RunLogFormatError, BenchmarkErrors, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


# -- inspect -----------------------------------------------------------------------------------


def _event_line(event: Event) -> str:
    fields = {k: v for k, v in event.to_record().items() if k not in ("t", "seq", "ts")}
    if isinstance(event, UnknownEvent):
        return f"{event.tag} (unknown to this version)"
    if isinstance(event, Blob):
        return f"{event.ref[:12]} ({len(event.data):,} bytes)"
    if isinstance(event, LLMExchange):
        calls = ", ".join(str(c.get("name")) for c in event.tool_calls)
        return (
            f"{event.api} {event.model} {event.kind} status={event.status} messages={len(event.message_refs)} "
            f"input_tokens={event.input_tokens}"
            + (f" tool_calls=[{calls}]" if calls else "")
            + (f" question={event.question_id}" if event.question_id else "")
        )
    text = fields.pop("text", None)
    parts = [f"{k}={v}" for k, v in fields.items() if v not in (None, "", [], {}, False)]
    if text is not None:
        parts.append(repr(text if len(text) <= 100 else text[:97] + "..."))
    return " ".join(parts)


def cmd_inspect(run: Path, limit: int) -> int:
    path = run / EVENTS_FILE if run.is_dir() else run
    try:
        log = read_log(path)
    except (OSError, RunLogFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    h = log.header
    print(f"run {h.run_id} — log format {h.format}, marathonbench {h.tool_version}")
    print(
        f"benchmark {h.benchmark.get('name')} ({str(h.benchmark.get('hash', ''))[:16]}); "
        f"persona {h.persona}; agent model {h.agent.get('model', '?')}"
    )
    if h.agent.get("offline_stand_in"):
        print("note: the agent's model is the offline rule-based stand-in, not an LLM")
    t0 = h.created
    events = log.events[:limit] if limit else log.events
    for event in events:
        print(f"{event.seq:>6} {event.ts - t0:>9.3f}s {event.type:<11} {_event_line(event)}")
    if limit and len(log.events) > limit:
        print(f"... {len(log.events) - limit} more events")
    status = run_status(log)
    print(f"status: {status.value if status else 'running, or stopped without an end record (resumable)'}")
    if log.torn:
        print(f"warning: the last {log.unread_bytes} bytes are a torn or damaged record and were ignored")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
