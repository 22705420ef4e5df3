"""`marathon fork RUN --at NAME [--runs K]`: K runs that go on from a run's checkpoint.

Each fork restores the archived state, replays the parent's persona side up to the checkpoint
(never re-graded) and plays the rest of the benchmark: K sequential rollouts of the exam, in
`RECORDINGS/RUN.NAME.fK`, reported with pass^k, pass@k and the noise floor (`matrix.md`).
The forks take the parent's logged settings. A secret read from the environment is logged as the
reference it is (hermes-http's `Authorization: "Bearer ${API_SERVER_KEY}"`), so the fork reads the
environment as its parent did. A secret written into a config was redacted and can't be forked
from here — a config's `from: {run: ID, checkpoint: NAME}` names the settings instead, and the
error says which setting it was.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gateway.cli.runs import _run_and_report
from gateway.log.redact import REDACTED
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError, read_header
from gateway.run.checkpoints import CheckpointError
from gateway.run.config import RunSpec
from gateway.run.forking import find_checkpoint

MAX_FORKS = 100
_DESCRIBED = ("model", "offline_stand_in")  # what `describe_agent` adds to the settings it logs


def fork_specs(run_dir: Path, at: str, count: int) -> list[RunSpec]:
    """The forks' specs; `ValueError` (a `CheckpointError` among them) saying why there are none."""
    if not 1 <= count <= MAX_FORKS:
        raise ValueError(f"--runs must be from 1 to {MAX_FORKS}")
    try:
        header = read_header(run_dir / EVENTS_FILE)
    except FileNotFoundError:
        raise CheckpointError(f"{run_dir} is not a run folder (no {EVENTS_FILE})") from None
    except (OSError, RunLogFormatError) as exc:
        raise CheckpointError(f"can't read {run_dir}: {exc}") from None
    find_checkpoint(run_dir.parent, run_dir.name, at)  # there, or say which are
    agent = dict(header.agent)
    lost = _redacted_paths(agent, "agent") + _redacted_paths(header.persona, "persona")
    if lost:
        raise ValueError(
            f"run {header.run_id}'s settings were logged with a secret redacted ({', '.join(lost)}), written as "
            f"it was rather than read from the environment, so they can't be taken from its log: fork it from a "
            f"config instead — a run "
            f"with `from: {{run: \"{header.run_id}\", checkpoint: \"{at}\"}}` and its settings"
        )
    if agent.get("offline_stand_in"):
        agent = {k: v for k, v in agent.items() if k not in _DESCRIBED}
    bench = header.benchmark
    persona = dict(header.persona)
    pool = bench.get("pool")
    return [
        RunSpec(
            f"{run_dir.name}.{at}.f{k}",
            Path(str(bench["path"])),
            agent,
            persona,
            str(bench.get("rung", "")),
            {"id": f"{run_dir.name}.{at}", "fork_of": run_dir.name, "exam": "sequential", "rollout": k},
            Path(pool) if isinstance(pool, str) else None,
            checkpoint_at=at,
            parent=(run_dir.name, at),
        )
        for k in range(1, count + 1)
    ]


def cmd_fork(run_dir: Path, at: str, count: int, parallel: int, fresh: bool) -> int:
    run_dir = run_dir.resolve()
    try:
        specs = fork_specs(run_dir, at, count)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _run_and_report(specs, run_dir.parent, fresh, parallel)


def _redacted_paths(value: object, path: str) -> list[str]:
    if isinstance(value, str):
        return [path] if REDACTED in value else []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _redacted_paths(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _redacted_paths(v, f"{path}[{i}]")]
    return []
