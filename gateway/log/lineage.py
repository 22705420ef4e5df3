"""A fork's inherited prefix: the parent's events up to the checkpoint it started from.

A fork's log refers to its parent's prefix instead of copying it (design §9b): its header's
`parent` names the run, the checkpoint and the checkpoint event's `seq`. The parent's log is a
sibling folder in the same recordings folder. What a caller may rely on: `inherited_events`
returns the whole chain's prefix, oldest first (a fork of a fork inherits its parent's
inheritance), each parent log read once per process while its file is unchanged; a missing
parent, or one whose checkpoint event is not where the header says, is a `LineageError` naming
it — never a silently shorter history.
"""

from __future__ import annotations

from pathlib import Path

from gateway.log.events import CheckpointSaved, Event, Header
from gateway.log.runlog import EVENTS_FILE, RunLog, read_log

MAX_DEPTH = 32  # forks of forks: deeper than this is a loop, not a lineage


class LineageError(ValueError):
    """A fork's parent can't be read as its header describes it."""


_CACHE: dict[Path, tuple[tuple[int, int], RunLog]] = {}


def parent_log_path(log_path: Path, header: Header) -> Path | None:
    """Where a fork's parent log is (None: not a fork). A `parent` that is not what a fork's
    header holds (a run name that is no folder name, a `seq` that is no whole number — a log
    edited by hand or crafted) is a `LineageError`, never a traceback."""
    if not header.parent:
        return None
    run, seq, name = (header.parent.get(k) for k in ("run", "seq", "checkpoint"))
    if not isinstance(run, str) or not run or run in (".", "..") or "/" in run or "\\" in run:
        raise LineageError(f"{log_path}: its header's parent run {run!r} is not the name of a run folder")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise LineageError(f"{log_path}: its header's parent checkpoint position {seq!r} is not a whole number")
    if not isinstance(name, str):
        raise LineageError(f"{log_path}: its header's parent checkpoint name {name!r} is not a name")
    return log_path.parent.parent / run / EVENTS_FILE


def inherited_events(log_path: Path, header: Header, depth: int = 0) -> list[Event]:
    """The events this run inherits: [] for a run that is not a fork."""
    parent_path = parent_log_path(log_path, header)
    if parent_path is None or header.parent.get("prefix") is False:
        return []  # not a fork; or one that took only its parent's agent state (a prepared memory)
    if depth >= MAX_DEPTH:
        raise LineageError(
            f"{log_path}: forks of forks {MAX_DEPTH} deep — a loop in the `parent` references?"
        )
    parent = _read_cached(parent_path, header)
    seq = int(header.parent["seq"])  # checked by parent_log_path
    name = str(header.parent["checkpoint"])
    marker = next((e for e in parent.events if e.seq == seq), None)
    if not isinstance(marker, CheckpointSaved) or marker.name != name:
        raise LineageError(
            f"{log_path}: forked from checkpoint {name!r} at event {seq} of {parent_path}, which holds no such "
            "checkpoint there (was the parent run started over?)"
        )
    if header.parent.get("archive_sha256") not in (None, marker.archive_sha256):
        raise LineageError(
            f"{log_path}: the parent's checkpoint {name!r} is not the one this run was forked from"
        )
    earlier = inherited_events(parent_path, parent.header, depth + 1)
    return earlier + [e for e in parent.events if e.seq <= seq]


def _read_cached(path: Path, child: Header) -> RunLog:
    try:
        st = path.stat()
    except OSError:
        raise LineageError(
            f"run {child.run_id} is a fork of {child.parent.get('run')}, whose log {path} is not there: "
            "a fork's report and resume need its parent's run folder beside it"
        ) from None
    key = (st.st_size, st.st_mtime_ns)
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    log = read_log(path)
    _CACHE[path] = (key, log)
    return log
