"""One teaching per fork group: every fork of a run answers from the checkpoint that run holds now.

pass^k and the "every fork starts from the same archived agent state" line rest on it. A run
taught again (`--fresh`) writes a new checkpoint with another state; its forks from the earlier
teaching are of another agent. Issue 59 found a `--fresh` fork run, interrupted and resumed as
told, keeping the earlier teaching's forks beside the new ones — reported as one group.

So: `--fresh` clears the forks of every run it teaches again before any run starts
(`clear_stale_forks`: forks of forks too, each folder's lock and the lock of each run taught again
taken first — one being written is refused, nothing cleared). A command stopped after the
clearing and before the teaching leaves the earlier checkpoint without its forks: `--fresh`
means starting over, and a fork whose log records another state than its parent's
checkpoint is refused on resume, even one that ended (`stale_fork_refusal`). What a caller may
rely on: only folders inside the recordings folder whose log names a cleared run as its parent
are removed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gateway.log.lock import RunInUse, RunLock
from gateway.log.runlog import EVENTS_FILE, RunLog, RunLogFormatError, read_header
from gateway.run.checkpoints import SavedCheckpoint


class ForkInUse(RunInUse):
    """A fork to be cleared is being written by another process: nothing was cleared."""


def stale_fork_refusal(previous: RunLog, parent: SavedCheckpoint | None, location: str) -> str | None:
    """Why the fork logged in `previous` can't go on from `parent` — the checkpoint its parent
    holds now (None: it can, or it is no fork)."""
    logged = previous.header.parent
    if parent is None or not logged:
        return None
    was = (str(logged.get("state_hash", "")), str(logged.get("archive_sha256", "")))
    if was == (parent.state_hash, parent.archive_sha256):
        return None
    return (
        f"{location}: this fork started from checkpoint {parent.name!r} of run {parent.run_id} with state "
        f"{was[0][:12]}…, and that checkpoint now holds {parent.state_hash[:12]}… ({parent.run_id} was taught "
        "again): its answers are of another teaching, and one fork group holds one — use --fresh to run it again"
    )


def forks_in(recordings: Path) -> dict[str, list[Path]]:
    """The fork folders directly inside `recordings`, by the run they fork from (read from each
    log's header; a folder without a readable log is no fork here)."""
    found: dict[str, list[Path]] = {}
    if not recordings.is_dir():
        return found
    for folder in sorted(recordings.iterdir()):
        log = folder / EVENTS_FILE
        if folder.is_symlink() or not log.is_file():
            continue
        try:
            parent = read_header(log).parent
        except (OSError, RunLogFormatError, ValueError):
            continue
        if parent and isinstance(parent.get("run"), str):
            found.setdefault(parent["run"], []).append(folder)
    return found


def clear_stale_forks(recordings: Path, taught_again: set[str]) -> list[Path]:
    """Remove every fork (and fork of a fork) of the runs in `taught_again` from `recordings`;
    returns the folders removed. Raises `ForkInUse` — before removing any — when one is being
    written."""
    by_parent = forks_in(recordings)
    doomed: list[Path] = []
    pending = sorted(taught_again)
    while pending:
        for fork in by_parent.get(pending.pop(), []):
            if fork not in doomed:
                doomed.append(fork)
                pending.append(fork.name)
    if not doomed:
        return []
    locks: list[RunLock] = []
    try:
        for run_id in sorted(taught_again):  # a parent being written now keeps its forks: they are its
            if (recordings / run_id / EVENTS_FILE).is_file() and recordings / run_id not in doomed:
                try:
                    locks.append(RunLock.acquire(recordings / run_id))
                except RunInUse as exc:
                    raise ForkInUse(f"--fresh would teach {run_id} again and clear its forks, but {exc}") from None
        for fork in doomed:
            try:
                locks.append(RunLock.acquire(fork))
            except RunInUse as exc:
                raise ForkInUse(f"--fresh would clear the fork {fork.name} of an earlier teaching, but {exc}") from None
        for fork in doomed:
            shutil.rmtree(fork)
    finally:
        for lock in locks:
            lock.release()
    return doomed
