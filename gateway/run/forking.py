"""Which agents can checkpoint, and the checkpoint a fork starts from (docs/experiments.md).

An agent can be checkpointed when its whole state lives in a folder we hold: the reference
agent (`agent-state/` of its run), and an agent we start (`process`) whose `state_dir` is in the
run's folder or comes from a `snapshot`. A bare `url` agent keeps its state where we can't see
it; a profile may also say `forkable: false` (with `fork_note`, why). Both are refused before a
run that needs a checkpoint starts — never a checkpoint that silently holds nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.profiles import resolve
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError, read_log
from gateway.run.checkpoints import CheckpointError, SavedCheckpoint, checkpoints_in
from persona.benchmark.directives import CHECKPOINT_PREFIX
from persona.benchmark.model import Benchmark


def fork_refusal(settings: dict[str, Any]) -> str | None:
    """Why this agent's state can't be checkpointed (None: it can)."""
    settings = resolve(settings)
    if settings.get("forkable") is False:
        return str(settings.get("fork_note") or "its profile says `forkable: false`")
    if settings.get("adapter") == "reference":
        return None
    process = settings.get("process")
    if not isinstance(process, dict):
        return (
            "marathonbench does not start this agent (no `process`): its state lives where we can't "
            "archive it, so it can't be checkpointed or forked"
        )
    state = str(process.get("state_dir", "${RUN_DIR}/agent-state"))
    if "${RUN_DIR}" not in state and not process.get("snapshot"):
        return (
            f"its state folder {state} is outside the run and has no snapshot: forks would share it "
            '(give it `state_dir: "${RUN_DIR}/agent-state"`)'
        )
    return None


def checkpoint_names(bench: Benchmark) -> list[str]:
    return [
        a.removeprefix(CHECKPOINT_PREFIX)
        for p in bench.phases
        for a in p.actions
        if a.startswith(CHECKPOINT_PREFIX)
    ]


def check_can_checkpoint(settings: dict[str, Any], bench: Benchmark, forked: bool) -> str | None:
    """Before a run: a benchmark (as played) that checkpoints, or a fork, on an agent that can't."""
    names = checkpoint_names(bench)
    if not names and not forked:
        return None
    refusal = fork_refusal(settings)
    if refusal is None:
        return None
    what = "forked from a checkpoint" if forked else f"checkpointed ({', '.join(repr(n) for n in names)})"
    return f"this run is {what}, but the agent can't be: {refusal}"


def find_checkpoint(recordings: Path, run_id: str, name: str) -> SavedCheckpoint:
    """Checkpoint `name` of run `run_id` in `recordings`; `CheckpointError` naming what is there."""
    run_dir = recordings / run_id
    try:
        log = read_log(run_dir / EVENTS_FILE)
    except FileNotFoundError:
        raise CheckpointError(f"no run {run_id!r} in {recordings} to fork from") from None
    except (OSError, RunLogFormatError) as exc:
        raise CheckpointError(f"can't read run {run_id!r} to fork from: {exc}") from None
    found = checkpoints_in(run_id, run_dir, log.events)
    for checkpoint in found:
        if checkpoint.name == name:
            return checkpoint
    have = ", ".join(repr(c.name) for c in found) or "none (yet: has it reached its checkpoint?)"
    raise CheckpointError(f"run {run_id!r} has no checkpoint {name!r}; its checkpoints: {have}")
