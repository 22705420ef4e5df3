"""`marathon probe`: one agent, a short scripted check of what a marathon needs from it, before
a long run (docs/agents.md, "Before a long run")."""

from __future__ import annotations

import sys
from pathlib import Path

import json5

from gateway.cli.runs import ChosenAgent, agent_settings
from gateway.cli.stopping import run_until_stopped
from gateway.run.agents import check_agent_can_play, check_agent_settings
from gateway.run.config import RunSpec
from gateway.run.probe import Check
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.ladder import benchmark_for
from persona.benchmark.model import Benchmark


def cmd_probe(
    config: Path | None, only: str | None, profile: str | None, sets: list[str], recordings: Path | None
) -> int:
    """Probe one agent and print the checklist; exit 1 when any check failed."""
    from gateway.run.probe import probe

    chosen = agent_settings(config, only, profile, sets, recordings)
    if isinstance(chosen, int):
        return chosen
    try:
        check_agent_settings(chosen.settings)
        print("probing: a greeting with a marker, then a new session asking for it — the agent's replies:")
        run_dir, checks = run_until_stopped(probe(chosen.settings, chosen.recordings.resolve()))
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # its agent is stopped; a probe is short and not resumed: run it again
        print("\nprobe: stopped before its checks were done; run it again for the checklist", file=sys.stderr)
        return 130
    if chosen.run is not None:  # the run needs its benchmark too: better told now than at `marathon run`
        checks.append(_benchmark_check(chosen))
    print()
    for check in checks:
        print(check.line())
    print(f"recorded in {run_dir}")
    return 1 if any(c.failed for c in checks) else 0


def _benchmark_as_written(config: Path, run_id: str) -> str:
    """The run's `benchmark` as the config writes it ("" when it can't be read back)."""
    try:
        data = json5.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    runs = data.get("runs") if isinstance(data, dict) else None
    for run in runs if isinstance(runs, list) else []:
        if isinstance(run, dict) and run.get("id") == run_id and isinstance(run.get("benchmark"), str):
            return str(run["benchmark"])
    return ""


def _benchmark_check(chosen: ChosenAgent) -> Check:
    name = "the run's benchmark loads"
    assert chosen.run is not None and chosen.config is not None
    spec = chosen.run
    try:
        benchmark = spec.played_benchmark()
        check_agent_can_play(chosen.settings, benchmark)
    except BenchmarkErrors as exc:
        written = _benchmark_as_written(chosen.config, spec.run_meta.id or spec.id)
        fix = (
            f"`benchmark` is the absolute path {written}: check that this folder is the benchmark"
            if written and Path(written).is_absolute()
            else f"`benchmark` paths are relative to {chosen.config.parent.resolve()}"
        )
        return Check(name, False, str(exc.errors[0]), fix)
    except ValueError as exc:
        return Check(name, False, str(exc), "see the message")
    return Check(name, True, _benchmark_shape(spec, benchmark))


def _benchmark_shape(spec: RunSpec, played: Benchmark) -> str:
    """"NAME: N questions, M phases" — of the whole benchmark, and what this run plays of it when
    that is less (a run that teaches until a checkpoint asks none; its forks ask them)."""
    whole = benchmark_for(spec.benchmark, spec.rung, spec.pool)
    shape = f"{whole.name}: {len(whole.questions)} questions, {len(whole.phases)} phases"
    if (len(played.questions), len(played.phases)) == (len(whole.questions), len(whole.phases)):
        return shape
    part = f"this run plays {len(played.questions)} of the questions in {len(played.phases)} phases"
    if spec.until:
        part += f" — it teaches until the checkpoint {spec.until!r}; its forks ask the questions"
    return f"{shape} ({part})"
