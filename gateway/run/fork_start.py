"""Where a fork's agent starts: its checkpoint's state, on every start until one went through.

A fork is only a fork if its agent answers from the checkpoint's state. The restore happens as
the agent starts (gateway/run/agents.py), so a fork stopped before that — Ctrl-C in its first
second, a crash, a refused restore — has a log but never had the state: its next start restores
again. The log says which start restored (`RunStart.restored`, with `state` the checkpoint's
hash); once one did, the folder is the fork's own and a resume keeps it, as any run's.

A fork whose log shows messages answered on another state (written by a version before this
rule) can't be mended by restoring now: its earlier answers came from the wrong agent. That
start is refused with the reason — never a graded exam on the wrong state.
"""

from __future__ import annotations

from pathlib import Path

from gateway.log.events import Asked, Event, Header, RunStart, Said
from gateway.log.lineage import inherited_events
from gateway.log.runlog import EVENTS_FILE, RunLog
from gateway.run.checkpoints import CheckpointError, SavedCheckpoint


def restored_start(events: list[Event], state_hash: str) -> RunStart | None:
    """The fork's first start that restored its checkpoint (`state_hash`); in logs older than
    `RunStart.restored`, the first that found that state."""
    return next((e for e in events if isinstance(e, RunStart) and (e.restored or e.state == state_hash)), None)


def restore_at_start(parent: SavedCheckpoint | None, previous: RunLog | None, moved: bool) -> SavedCheckpoint | None:
    """The checkpoint this start restores (None: keep the state folder as it is). `moved`: the
    run resumes where its agent's state is not (another cluster node)."""
    if parent is None:
        return None
    if previous is None or moved:
        return parent
    starts = [e for e in previous.events if isinstance(e, RunStart)]
    if restored_start(previous.events, parent.state_hash) is not None:
        return None  # it started from the checkpoint; what the agent did since is the fork's own
    sent = [e for e in previous.events if isinstance(e, (Said, Asked))]
    if starts and sent:
        raise CheckpointError(
            f"this fork of {parent.run_id} at checkpoint {parent.name!r} answered {len(sent)} message(s) on "
            f"state {starts[0].state[:12]}…, not the checkpoint's {parent.state_hash[:12]}…: its answers can't "
            "stand and restoring now would not mend them — run it again with --fresh"
        )
    return parent


def inherited_prefix(
    parent: SavedCheckpoint, run_dir: Path, lineage: tuple[SavedCheckpoint, list[Event]] | None
) -> list[Event]:
    """A fork's prefix: its parent's events up to the checkpoint (never graded again: they are
    the parent's) — read from the parent's log, or given (`lineage`) on a cluster node."""
    if lineage is not None:
        return lineage[1]
    return inherited_events(run_dir / EVENTS_FILE, Header(run_id=run_dir.name, parent=parent.reference()))
