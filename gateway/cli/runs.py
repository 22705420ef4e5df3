"""Running from the command line: `marathon run` (a matrix of runs, at once, with a progress
board), `demo`, `replay`, and the reports across runs (`report`, `compare`).

What a caller may rely on: a bad benchmark, agent or persona setting fails before any run
starts; Ctrl-C interrupts every run cleanly and the same command resumes them; the exit code
is 0 only when every run completed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

from adapters.profiles import with_overrides
from gateway.cli.scheduling import choose_executor, run_all
from gateway.cluster.ray_runs import ExecutorUnavailable
from gateway.display import safe_text
from gateway.log.lock import RunInUse
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError, read_log, run_status
from gateway.log.vocabulary import TerminationReason
from gateway.report.budget import render_ladder
from gateway.report.comparison import render_comparison
from gateway.report.forks import render_forks
from gateway.report.markdown import refresh_run_report, reports_behind
from gateway.report.matrix import MatrixReport, write_matrix_report
from gateway.report.recordings import load_run
from gateway.run.agents import (
    check_agent_can_play,
    check_agent_settings,
    describe_agent,
    initial_state_promise,
)
from gateway.run.config import ConfigError, Experiment, RunSpec, load_config
from gateway.run.definition import run_definition
from gateway.run.forking import check_can_checkpoint
from gateway.run.personas import check_persona_settings
from gateway.run.placement import RayExecutor, resources_for
from gateway.run.run_header import ResumeError, RunOutcome
from persona.benchmark.errors import BenchmarkErrors

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_BENCHMARK = REPO_ROOT / "benchmarks" / "demo-en"


def print_errors(exc: BenchmarkErrors, summary: str = "") -> None:
    """Each error of a benchmark or pool on its own line (file:line: what was expected), then `summary`."""
    for error in exc.errors:
        print(f"error: {error}", file=sys.stderr)
    if summary:
        print(f"{len(exc.errors)} error(s){summary}", file=sys.stderr)


# -- run / demo --------------------------------------------------------------------------------


def _print_outcome(outcome: RunOutcome, brief: bool = False) -> bool:
    """One run's ending; True when its agent ran on the offline stand-in."""
    if outcome.skipped:
        print(f"[{outcome.run_id}] already ended ({outcome.reason}); use --fresh to run it again")
        return False
    s = load_run(outcome.run_dir).summary
    mean = s.describe_mean(str(outcome.run_dir))
    if brief:
        print(
            f"[{outcome.run_id}]{'*' if s.stand_in else ''} {outcome.reason}: mean {mean}, "
            f"graded {len(s.evaluations)}/{len(s.planned)} → {outcome.report}"
        )
        _print_why(outcome)
        return s.stand_in
    print(
        f"[{outcome.run_id}] {outcome.reason}: mean {mean}, graded {len(s.evaluations)}/{len(s.planned)}, "
        f"coverage {'complete' if s.coverage_complete else 'incomplete'}"
        + (
            f", resumed ({outcome.resent} message(s) re-sent now, {s.resent} over the run, as its report counts)"
            if outcome.resumed
            else ""
        )
    )
    _print_why(outcome)
    if s.stand_in:
        print(f"[{outcome.run_id}] note: the agent ran on the offline rule-based stand-in, not an LLM")
    print(f"[{outcome.run_id}] report: {outcome.report}")
    return s.stand_in


def _command() -> str:
    """The command as the user runs it: `./marathon` in the checkout (its launcher is there),
    else `marathon` (installed)."""
    return "./marathon" if Path("marathon").is_file() and Path("pyproject.toml").is_file() else "marathon"


def _print_why(outcome: RunOutcome) -> None:
    """A run that did not complete says why in one sentence, where to look, and how to go on."""
    if outcome.reason in (None, TerminationReason.COMPLETED) or not outcome.detail:
        return
    look = [str(outcome.report)]
    if (outcome.run_dir / "agent.log").exists():
        look.append(str(outcome.run_dir / "agent.log"))
    # one line, even when an agent's error body was HTML or held control sequences; an agent's
    # words are cut (a whole error page is no reason), ours are printed whole — their fix is at the end
    why = safe_text(" ".join(outcome.detail.split()), one_line=True)
    theirs = outcome.reason in (TerminationReason.AGENT_FAILED, TerminationReason.AGENT_LLM_FAILED)
    print(f"[{outcome.run_id}] why: {why[:239] + '…' if theirs and len(why) > 240 else why}")
    if outcome.reason == TerminationReason.LIMIT_REACHED:
        print(
            f"[{outcome.run_id}] see {' and '.join(look)}; the run used up its limits and stays as it ended"
        )
        return
    print(f"[{outcome.run_id}] see {' and '.join(look)}; run the same command again to resume")
    if outcome.reason in (TerminationReason.AGENT_FAILED, TerminationReason.AGENT_LLM_FAILED) and _early(
        outcome
    ):
        run = outcome.run_id.split(".")[0]
        print(
            f"[{outcome.run_id}] hint: it failed early — `marathon probe CONFIG --only {run}` checks the agent in a minute"
        )


def _early(outcome: RunOutcome) -> bool:
    """Did the run fail within its first minutes (a setup problem, not a long run's accident)?"""
    try:
        return load_run(outcome.run_dir).summary.active_seconds < 180
    except (OSError, ValueError, BenchmarkErrors):
        return False


def cmd_run(
    config_path: Path,
    fresh: bool,
    only: list[str] | None,
    persona: str | None = None,
    executor: str | None = None,
    address: str | None = None,
) -> int:
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        chosen_executor = choose_executor(config.executor, executor, address)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    # --only takes a run's id, the id of a matrix entry (all its rungs and repeats) or an
    # experiment's name (all its runs)
    names = set(only or [])

    def chosen(spec: RunSpec) -> set[str]:
        return names & {spec.id, spec.run_meta.id, spec.run_meta.experiment}

    specs = [s for s in config.runs if not only or chosen(s)]
    unknown = names - set().union(*(chosen(s) for s in specs)) if only else set()
    if unknown:
        print(f"error: no run named {', '.join(sorted(unknown))} in {config_path}", file=sys.stderr)
        return 2
    if persona:
        specs = [replace(s, persona={**s.persona, "driver": persona}) for s in specs]
    if config.experiment is not None and any(s.run_meta.experiment for s in specs):
        try:
            of_it = [s for s in config.runs if s.run_meta.experiment == config.experiment.name]
            defines = run_definition(of_it[0].persona, of_it[0].limits) if of_it else {}
            _write_plan(config.experiment, config.recordings, fresh, defines)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return _run_and_report(specs, config.recordings, fresh, config.parallel, executor=chosen_executor)


def _write_plan(experiment: Experiment, recordings: Path, fresh: bool, defines: dict[str, Any]) -> None:
    """The experiment's seed, the order drawn for each pair and its decision rule, beside its
    run lines — before the first run. A decision rule is fixed then: changing it once runs of
    the experiment exist raises ValueError (a rule chosen after seeing results is no rule)."""
    recordings.mkdir(parents=True, exist_ok=True)
    path = recordings / f"{experiment.name}.plan.json"
    decision = experiment.decision.to_json() if experiment.decision else None
    started = any(
        p.parent.name.startswith(f"{experiment.name}.") for p in recordings.glob(f"*/{EVENTS_FILE}")
    )
    if path.exists() and started and not fresh:
        try:
            fixed = json.loads(path.read_text(encoding="utf-8")).get("decision")
        except (OSError, ValueError):
            fixed = None
        if fixed != decision:
            raise ValueError(
                f"{path}: the decision rule was fixed before the runs ({json.dumps(fixed)}); changing "
                "it once runs exist is refused — keep it, or start a new experiment (another `name`, "
                "or --fresh to run every run again)"
            )
    plan = {
        "experiment": experiment.name,
        "seed": experiment.seed,
        "repeats": experiment.repeats,
        "tasks": list(experiment.tasks),
        "baseline": experiment.names["A"],  # A in the protocol: without the added memory
        "variants": {
            experiment.names[role]: describe_agent(agent) for role, agent in experiment.variants.items()
        },
        # 001: both variants start "from the same initial state" — or the plan says it can't
        "initial_state": {
            experiment.names[role]: initial_state_promise(agent) for role, agent in experiment.variants.items()
        },
        "pairs": [
            {"pair": p, "task": t, "repeat": k, "order": [experiment.names[r] for r in order]}
            for p, t, k, order in experiment.pairs
        ],
        "decision": decision,
        # limits, correctness rule, persona (driver, model, prompt hash), grader and judge: the same
        # for both variants, as every run's header and run line repeat them
        "defines": defines,
    }
    path.write_text(json.dumps(plan, indent=1) + "\n", encoding="utf-8")


def preflight(specs: Sequence[RunSpec]) -> int | None:
    """A bad benchmark, agent or persona setting (a missing key too) fails before any run
    starts: the exit code after saying why, else None."""
    try:
        for spec in specs:
            benchmark = spec.played_benchmark()
            check_agent_settings(spec.agent)
            check_agent_can_play(spec.agent, benchmark)
            if refusal := check_can_checkpoint(spec.agent, benchmark, spec.parent is not None):
                raise ValueError(f"run {spec.id}: {refusal}")
            check_persona_settings(spec.persona, benchmark)
            resources_for(spec.resources, spec.agent)
    except BenchmarkErrors as exc:
        print_errors(exc)
        return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return None


def _run_and_report(
    specs: Sequence[RunSpec],
    recordings: Path,
    fresh: bool,
    parallel: int = 1,
    charts: bool = True,
    executor: RayExecutor | None = None,
) -> int:
    """Run the specs; print each ending and the cross-run report. `charts`: also (re)write
    `recordings/report.html` after a single run (a matrix always does)."""
    if (failed := preflight(specs)) is not None:
        return failed
    try:
        results = run_all(specs, recordings, fresh, parallel, executor)
    except BenchmarkErrors as exc:
        print_errors(exc)
        return 1
    except (ResumeError, RunLogFormatError, ValueError, OSError, ExecutorUnavailable, RunInUse) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    ok = True
    brief = len(specs) > 1
    stand_in = False
    for spec, result in zip(specs, results, strict=True):
        if isinstance(result, KeyboardInterrupt | asyncio.CancelledError):
            raise KeyboardInterrupt
        if isinstance(result, BaseException):
            if not isinstance(result, ResumeError | RunInUse | RunLogFormatError | ValueError | OSError):
                raise result
            print(f"error: [{spec.id}] {result}", file=sys.stderr)
            ok = False
            continue
        stand_in = _print_outcome(result, brief) or stand_in
        ok = ok and result.reason == TerminationReason.COMPLETED
    if brief and stand_in:
        print("note: agents marked * ran on the offline rule-based stand-in, not an LLM")
    if brief or any(s.rung or s.run_meta.experiment or s.parent for s in specs):
        _print_matrix(recordings)
    elif charts:
        try:
            print(f"charts: {write_matrix_report(recordings).html}")
        except OSError as exc:
            print(f"error: can't write the HTML report under {recordings}: {exc}", file=sys.stderr)
            ok = False
    return 0 if ok else 1


def cmd_demo(recordings: Path, fresh: bool, persona: str = "scripted", surface: str = "http") -> int:
    # a small context window, so the reference agent compacts its context while being told facts
    agent = {"adapter": "reference", "context_tokens": 400, "surface": surface}
    spec = RunSpec(
        "demo" if surface == "http" else f"demo-{surface}", DEMO_BENCHMARK, agent, {"driver": persona}
    )
    if (failed := preflight([spec])) is not None:
        return failed
    log_path = recordings / spec.id / EVENTS_FILE
    if not fresh and log_path.exists():
        try:
            status = run_status(read_log(log_path))
        except RunLogFormatError:
            status = TerminationReason.COMPLETED  # unreadable: nothing to resume, start over
        fresh = status == TerminationReason.COMPLETED
        if fresh:  # unlike `marathon run`, which never runs a finished run again without --fresh
            print(f"demo: the demo in {log_path.parent} had completed; starting a new one in its place")
        else:
            print("demo: resuming the unfinished demo run")
    if persona == "scripted":
        print(
            "demo: scripted persona × reference agent on the offline rule-based model stand-in (no network, no key)"
        )
    else:
        print(
            f"demo: the persona on {persona} (a live model: network and its key needed) × the reference "
            "agent on the offline rule-based model stand-in"
        )
    started = time.monotonic()
    code = _run_and_report([spec], recordings.resolve(), fresh, charts=False)  # written just below
    try:
        html: Path | str = write_matrix_report(recordings.resolve()).html
    except OSError as exc:
        print(f"error: can't write the HTML report: {exc}", file=sys.stderr)
        html, code = "not written", code or 1
    ended = "done" if code == 0 else "stopped (see the error above)"
    print(
        f"demo: {ended} after {time.monotonic() - started:.1f} s; all runs: {recordings.resolve() / 'report.md'}; "
        f"charts: {html}"
    )
    view = f"{_command()} view" + ("" if recordings == Path("recordings") else f" {recordings}")
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
    for group in matrix.forks:  # pass^k, pass@k and the noise floor of every forked exam
        print(render_forks(group))
    for comparison, verdict in zip(matrix.comparisons, matrix.verdicts, strict=True):
        print(render_comparison(comparison) + verdict)
    for path in matrix.run_lines:
        print(f"run lines: {path}")
    for problem in matrix.problems:
        print(f"skipped {problem}", file=sys.stderr)
    print(f"across runs: {matrix.markdown}; charts: {matrix.html}; browse: {_command()} view {recordings}")
    return matrix


def cmd_report(recordings: Path) -> int:
    if not recordings.is_dir():
        print(f"error: {recordings} is not a folder", file=sys.stderr)
        return 2
    _write_missing_reports(recordings.resolve())
    matrix = _print_matrix(recordings.resolve())
    if matrix is None:
        return 1
    if not matrix.runs:
        print(f"error: no run logs under {recordings}", file=sys.stderr)
        return 1
    return 0


def _write_missing_reports(recordings: Path) -> None:
    """Each run's report.md that is missing or older than its log (its process was stopped
    before writing it, or it was deleted), written as the run's end writes it. One edited by
    hand — newer than its log — is left for `marathon verify` to name."""
    for log_path in sorted(recordings.rglob(EVENTS_FILE)):
        run_dir = log_path.parent
        if not reports_behind(run_dir):
            continue
        try:
            run = load_run(run_dir)
            refresh_run_report(run.log, run.benchmark, run_dir)
        except (OSError, RunLogFormatError, BenchmarkErrors, ValueError) as exc:
            print(f"skipped {run_dir.name}: its report.md can't be written: {exc}", file=sys.stderr)
            continue
        print(f"[{run_dir.name}] wrote its report.md (missing or older than its log)")


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
    pool = log.header.benchmark.get("pool")
    specs = [
        RunSpec(
            f"{base}.{rung}" if rungs else base,
            Path(log.header.benchmark["path"]),
            {"profile": agent},
            {"driver": "replay", "from": str((run / EVENTS_FILE).resolve())},
            rung,
            {"replay_of": log.header.run_id},
            Path(pool) if isinstance(pool, str) else None,
        )
        for rung in rungs or [recorded_rung]
    ]
    on = f" on rung {', '.join(rungs)}" if rungs else ""
    print(f"replay: {log.header.run_id}'s persona side → agent profile {agent}{on}")
    return _run_and_report(specs, (recordings or run.parent).resolve(), fresh)


class ChosenAgent(NamedTuple):
    settings: dict[str, Any]
    recordings: Path
    run: RunSpec | None  # the config's run it came from (None for a profile)
    config: Path | None


def agent_settings(
    config: Path | None, only: str | None, profile: str | None, sets: list[str], recordings: Path | None
) -> ChosenAgent | int:
    """The agent a command points at — a config's run (`--only ID` picks it) or a profile —
    with `--set` overrides applied; an exit code (after saying why) when that is unclear.
    Where it records: `recordings` when given (`--recordings`), else the config's, else
    `recordings/`."""
    if (config is None) == (profile is None):
        print("error: give --agent PROFILE, or a config (and --only ID)", file=sys.stderr)
        return 2
    settings: dict[str, Any] = {"profile": profile}
    run = None
    if config is not None:
        try:
            loaded = load_config(config)
        except ConfigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        runs = [s for s in loaded.runs if only in (None, s.id, s.run_meta.id)]
        agents = {json.dumps(s.agent, sort_keys=True): s.agent for s in runs}
        if len(agents) != 1:
            names = ", ".join(sorted({s.run_meta.id or s.id for s in loaded.runs}))
            if only is not None and not runs:
                print(f"error: the config has no run {only!r} (its runs: {names})", file=sys.stderr)
            else:
                print(f"error: pick one run with --only (the config's runs: {names})", file=sys.stderr)
            return 2
        settings, run = next(iter(agents.values())), runs[0]
        recordings = recordings or loaded.recordings
    try:
        return ChosenAgent(with_overrides(settings, sets), recordings or Path("recordings"), run, config)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
