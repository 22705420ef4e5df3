"""The `marathon` command line: check, run, demo, report, compare, replay, inspect and more
(run, demo, replay, report and compare live in `gateway.cli.runs`).

Exit codes: 0 success; 1 a run failed, a benchmark is invalid or a log can't be read or repaired; 2 bad usage or config;
130 interrupted (the run log stays valid and `marathon run` resumes it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from gateway import __version__, display
from gateway.cli.benchmarks import cmd_check, cmd_new
from gateway.cli.forks import cmd_fork
from gateway.cli.gating import cmd_compare, cmd_gate
from gateway.cli.logs import cmd_inspect, cmd_repair, cmd_state
from gateway.cli.probing import cmd_probe
from gateway.cli.runs import (
    agent_settings,
    cmd_demo,
    cmd_replay,
    cmd_report,
    cmd_run,
)
from gateway.cli.stopping import interrupted_message, run_until_stopped, stop_signals_interrupt
from gateway.log.runlog import RunLogFormatError
from persona.benchmark.errors import BenchmarkErrors
from persona.drivers.protocol import close_driver

type Handler = Callable[[argparse.Namespace], int]  # one per command: its parsed arguments → exit code


def _compare(args: argparse.Namespace) -> int:
    """`compare`: the gate when a baseline is involved, else the experiment's comparison."""
    if args.baseline or args.write_baseline or args.gate or args.junit or args.json:
        return cmd_gate(args.source, args.baseline, args.write_baseline, args.gate, args.junit, args.json, args.tolerance)
    return cmd_compare(args.source, args.seed, tuple(args.split or ["heldout"]))


def _verify(args: argparse.Namespace) -> int:
    from gateway.cli.verify import cmd_verify

    return cmd_verify(args.recordings, args.json)


def _agent_choice(p: argparse.ArgumentParser, what: str) -> None:
    """The options `chat` and `probe` share: which agent (a config's run, or a profile), the
    settings overridden, where it is recorded."""
    p.add_argument("--only", metavar="ID", help="which run of the config (its id)")
    p.add_argument("--agent", help="an agent profile name instead of a config (see `marathon profiles`)")
    p.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override a setting (llm.port=8799)"
    )
    p.add_argument(
        "--recordings", type=Path, help=f"where the {what} is recorded (default: the config's, else recordings/)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    display.install()  # what agents and benchmarks say is shown on the terminal, never obeyed
    parser = argparse.ArgumentParser(
        prog="marathon", description="Long-term memory marathons for unmodified chat agents."
    )
    parser.add_argument("--version", action="version", version=f"marathonbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="validate a benchmark folder and print its shape")
    p.add_argument("benchmark", type=Path)
    p.set_defaults(handler=lambda a: cmd_check(a.benchmark))
    p = sub.add_parser("run", help="run (or resume) every run named in a config.jsonc")
    p.add_argument("config", type=Path)
    p.add_argument("--fresh", action="store_true", help="start every run over: log discarded, agent state reset")
    p.add_argument(
        "--only",
        action="append",
        metavar="ID",
        help="run only this run, matrix entry or experiment (repeatable)",
    )
    p.add_argument(
        "--persona", help="override every run's persona: scripted | anthropic:MODEL | openai:URL#MODEL"
    )
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        help="where the runs execute: in this process, or one Ray task each (docs/scale-out.md); "
        "default: the config's `executor`",
    )
    p.add_argument(
        "--address", help="the Ray cluster: auto | HOST:PORT of its head | local (implies --executor ray)"
    )
    p.set_defaults(handler=lambda a: cmd_run(
            a.config, fresh=a.fresh, only=a.only, persona=a.persona, executor=a.executor, address=a.address
        ))
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
    p.set_defaults(handler=lambda a: cmd_demo(a.recordings, fresh=a.fresh, persona=a.persona, surface=a.surface))
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
    p.set_defaults(handler=lambda a: cmd_proxy(a.upstream, a.profile, a.port, a.recordings))
    p = sub.add_parser(
        "rescore", help="re-grade a run's exam with another grader, blind; compare with the persona's grades"
    )
    p.add_argument("run", type=Path, help="a run folder")
    p.add_argument("--grader", help="exact (the default) | anthropic:MODEL | openai:URL#MODEL")
    p.add_argument("--base-url", help="the judge model's base URL (Anthropic)")
    p.add_argument(
        "--traffic",
        action="store_true",
        help="instead of grading: re-derive the recorded LLM traffic's readings (call shapes, background "
        "work, compactions, memory calls per question, evidence) with today's rules and profiles",
    )
    p.set_defaults(handler=_rescore)
    p = sub.add_parser(
        "judge-check", help="how right a grader is: on the calibration set, or your own labelled answers"
    )
    p.add_argument("--grader", default="exact", help="exact | anthropic:MODEL | openai:URL#MODEL")
    p.add_argument("--base-url", help="the judge model's base URL (Anthropic)")
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        type=Path,
        metavar="FILE.jsonl",
        help="a set of labelled answers (repeatable; docs/grading.md has the format)",
    )
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument(
        "--items", action="store_true", help="every item's verdict too: certain, score, low–high, reason"
    )
    p.set_defaults(handler=cmd_grade)
    p = sub.add_parser("import", help="convert another benchmark format into marathonbench benchmarks")
    p.add_argument("format", choices=["longmemeval"])
    p.add_argument("file", type=Path)
    p.add_argument("out_dir", type=Path)
    p.set_defaults(handler=lambda a: cmd_import(a.file, a.out_dir))
    p = sub.add_parser("profiles", help="list the known agent profiles")
    p.set_defaults(handler=lambda a: cmd_profiles())
    p = sub.add_parser(
        "chat", help="type as the persona to an agent, through the gateway, recorded (for trying a profile)"
    )
    p.add_argument("--config", type=Path, help="a config.jsonc: chat with one of its runs' agent (--only ID)")
    _agent_choice(p, "chat")
    p.set_defaults(handler=lambda a: cmd_chat(a.config, a.only, a.agent, a.set, a.recordings))
    p = sub.add_parser(
        "probe",
        help="a one-minute preflight of a run's agent: replies, sessions, recorded LLM calls, memory tools",
    )
    p.add_argument(
        "config", type=Path, nargs="?", help="a config.jsonc (with --only ID when it has several runs)"
    )
    _agent_choice(p, "probe")
    p.set_defaults(handler=lambda a: cmd_probe(a.config, a.only, a.agent, a.set, a.recordings))
    p = sub.add_parser(
        "report", help="rebuild the cross-run report (budget tables, A/B, report.html) from recordings"
    )
    p.add_argument("recordings", type=Path, nargs="?", default=Path("recordings"))
    p.set_defaults(handler=lambda a: cmd_report(a.recordings))
    p = sub.add_parser(
        "compare", help="paired A/B: wins per question group, bootstrap intervals, time and cost"
    )
    p.add_argument("source", type=Path, help="an experiment's NAME.runs.jsonl, or a recordings folder")
    p.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    p.add_argument(
        "--split",
        action="append",
        choices=["heldout", "tuning"],
        help="which tasks to compare (default: heldout only; repeat for both)",
    )
    p.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="a stored .runs.jsonl, or the baseline's recordings folder: compare SOURCE's runs with it",
    )
    p.add_argument("--write-baseline", type=Path, metavar="FILE", help="store SOURCE's runs as a baseline")
    p.add_argument("--gate", action="store_true", help="exit 0 accept, 1 regression, 3 no decision")
    p.add_argument("--junit", type=Path, metavar="FILE", help="one JUnit test case per question group")
    p.add_argument("--json", action="store_true", help="print the whole comparison as JSON")
    p.add_argument("--tolerance", type=int, default=0, metavar="N", help="regressed questions allowed per group")
    p.set_defaults(handler=_compare)
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
    p.set_defaults(handler=lambda a: cmd_replay(a.run, a.agent, a.id, a.recordings, a.fresh, a.rung))
    p = sub.add_parser("view", help="a live web viewer for the runs under a recordings folder (read-only)")
    p.add_argument("recordings", type=Path, nargs="?", default=Path("recordings"))
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0 = a free one)")
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default loopback; others get a warning)"
    )
    p.set_defaults(handler=lambda a: cmd_view(a.recordings, a.host, a.port))
    p = sub.add_parser("fork", help="runs that go on from a run's checkpoint (docs/experiments.md)")
    p.add_argument("run", type=Path, help="the run folder to fork from")
    p.add_argument("--at", required=True, metavar="NAME", help="the checkpoint (marathon inspect lists them)")
    p.add_argument("--runs", type=int, default=1, metavar="K", help="how many forks (default 1)")
    p.add_argument("--parallel", type=int, default=1, metavar="N", help="forks at once (default 1)")
    p.add_argument("--fresh", action="store_true", help="start the forks over, discarding their logs")
    p.set_defaults(handler=lambda a: cmd_fork(a.run, a.at, a.runs, max(1, a.parallel), a.fresh))
    p = sub.add_parser(
        "verify", help="check the invariants of recorded runs and print the manifest of what their figures depend on"
    )
    p.add_argument("recordings", type=Path, nargs="?", default=Path("recordings"), help="a recordings or run folder")
    p.add_argument("--json", action="store_true", help="print only the JSON manifest")
    p.set_defaults(handler=_verify)
    p = sub.add_parser("inspect", help="print a run's timeline from its log")
    p.add_argument("run", type=Path, help="a run folder or its events.msgpack")
    p.add_argument("--limit", type=int, default=0, help="print at most this many events (0 = all)")
    p.set_defaults(handler=lambda a: cmd_inspect(a.run, a.limit))
    p = sub.add_parser("autopsy", help="where each wrong answer's fact was lost in the agent's memory")
    p.add_argument("run", type=Path, help="a run folder")
    p.add_argument(
        "--fact", "--question", dest="fact", metavar="ID",
        help="a fact (FILE:ID, e.g. home:1.3) or a question id: its timeline — told, written, read, in input, graded",
    )  # fmt: skip
    p.set_defaults(handler=lambda a: _autopsy(a))
    p = sub.add_parser(
        "repair",
        help="cut a damaged run log back to its intact records before the damage (the original is kept aside)",
    )
    p.add_argument("run", type=Path, help="a run folder or its events.msgpack")
    p.set_defaults(handler=lambda a: cmd_repair(a.run))
    p = sub.add_parser("new", help="write a small valid benchmark to start from (benchmarks/AUTHORING.md)")
    p.add_argument("folder", type=Path)
    p.add_argument("--language", default="en", help="the persona's language (en, ru)")
    p.set_defaults(handler=lambda a: cmd_new(a.folder, a.language))
    p = sub.add_parser(
        "state",
        help="a run's state from its log (phase, messages, grades); writes its live facts files to RUN/facts/",
    )
    p.add_argument("run", type=Path, help="a run folder")
    p.add_argument("--json", action="store_true", help="print the whole state as JSON")
    p.set_defaults(handler=lambda a: cmd_state(a.run, a.json))
    args = parser.parse_args(argv)
    # recordings hold people's conversations and agents' memories: files 0600, folders 0700,
    # for everything this process (and the agents it starts) creates
    os.umask(0o077)
    stop_signals_interrupt()
    try:
        handler: Handler = args.handler
        return handler(args)
    except BrokenPipeError:  # `marathon inspect RUN | head`
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keep Python from failing at exit
        return 0
    except KeyboardInterrupt:
        print(f"\n{interrupted_message(args.command, bool(getattr(args, 'fresh', False)))}", file=sys.stderr)
        return 130


# -- view, proxy, import, profiles, chat, judge -----------------------------------------------


def cmd_view(recordings: Path, host: str, port: int) -> int:
    from adapters.http_server import serve
    from gateway.viewer.app import make_app

    if not recordings.is_dir():
        print(f"error: {recordings} is not a folder (run `marathon demo` first?)", file=sys.stderr)
        return 2

    async def go() -> None:
        try:
            served = await serve(make_app(recordings, host), host, port)
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
        run_until_stopped(go())
    except KeyboardInterrupt:
        print("viewer: stopped")
    return 0


def cmd_proxy(upstream: str, profile: str | None, port: int, recordings: Path) -> int:
    if not upstream.startswith(("http://", "https://")):
        print(f"error: --upstream must be an http:// or https:// URL, not {upstream!r}", file=sys.stderr)
        return 2
    from gateway.traffic.watch import watch  # mitmproxy loads only for this command

    try:
        run_until_stopped(
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
    except KeyboardInterrupt:  # the log is closed and says how many calls it holds: nothing to resume
        return 0
    return 0


def cmd_import(source: Path, out_dir: Path) -> int:
    from persona.benchmark.longmemeval import ImportError_, import_longmemeval

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
    from adapters.profiles import describe_profile, profile_names

    for name in profile_names():
        print("\n".join(describe_profile(name)))
    return 0


def cmd_chat(
    config: Path | None, only: str | None, profile: str | None, sets: list[str], recordings: Path | None
) -> int:
    from gateway.run.chat import chat

    chosen = agent_settings(config, only, profile, sets, recordings)
    if isinstance(chosen, int):
        return chosen
    try:
        prompt = _prompt if sys.stdin.isatty() else None  # a person at a terminal; not a pipe
        run_until_stopped(chat(chosen.settings, chosen.recordings.resolve(), sys.stdin, print, prompt))
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the chat's log ends `interrupted`; a chat is not resumed
        print("\nchat: stopped; what was said is recorded", file=sys.stderr)
        return 130
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    from gateway.report.judge_check import check_sets, render_set_result
    from gateway.report.labelled_sets import SetError, calibration_sets
    from gateway.report.rescore import rescore
    from persona.grading.judge import make_judge

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
                checked = await check_sets(judge, args.sets or calibration_sets())
                print(
                    json.dumps(checked.to_json(items=args.items), ensure_ascii=False, indent=1)
                    if args.json
                    else render_set_result(checked, items=args.items)
                )
                for reason in checked.unscored if args.json else []:
                    print(f"unscored: {reason}", file=sys.stderr)
                return 1 if checked.unscored else 0
            results, out = await rescore(args.run, judge)
            print(f"{judge.name}: re-graded {len(results)} questions; report: {out}")
            return 0
        finally:
            await close_driver(judge)

    try:
        return run_until_stopped(go())
    except SetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, RunLogFormatError, BenchmarkErrors, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _rescore(args: argparse.Namespace) -> int:
    if args.traffic:
        if args.grader or args.base_url:
            print("error: --traffic re-reads the traffic, not the grades: give it alone, or --grader alone", file=sys.stderr)
            return 2
        from gateway.cli.traffic import cmd_rescore_traffic

        return cmd_rescore_traffic(args.run)
    args.grader = args.grader or "exact"
    return cmd_grade(args)


def _autopsy(args: argparse.Namespace) -> int:
    from gateway.cli.autopsies import cmd_autopsy

    return cmd_autopsy(args.run, args.fact)


if __name__ == "__main__":
    raise SystemExit(main())


def _prompt(text: str) -> None:
    print(text, end="", flush=True)
