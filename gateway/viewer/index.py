"""The runs of a recordings folder, as the viewer lists and opens them.

What a caller may rely on: a run id names a folder directly under the recordings folder or
nothing (no traversal); only the `OPEN_RUNS` run pages opened last keep their details in
memory, so a folder of many long runs stays small.

A folder of 10,000 runs took 88 s for the list's first answer and 2.2 s for each one after
(every log read, then every watch refreshed, every 2 s). Now the list is indexed: an ended
run's summary is kept with its log's size and modification time, in memory and in a cache
file of the user's (`index_path`: never in the recordings folder, which the viewer only
reads; deleting it costs a re-read, never a wrong list), and its log is read again only when
either changed. A list answer reads logs for at
most `LIST_BUDGET` seconds and says how many runs it has not read yet (`pending`): the next
poll goes on from there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from gateway.log.runlog import EVENTS_FILE
from gateway.viewer.watch import RunWatch
from gateway.whole_file import write_whole

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
OPEN_RUNS = 8  # run pages whose details stay in memory (a reopened one is read again)
INDEX_FORMAT = 1
LIST_BUDGET = 1.5  # seconds of log reading per list answer
SUBFOLDERS_TTL = 30.0  # seconds the list of nested recordings folders is kept


class Recordings:
    """The runs under one folder, each followed on demand: every run's counters (for the list),
    and the details of the `OPEN_RUNS` run pages opened last (or still streaming)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.watches: dict[str, RunWatch] = {}  # counters only
        self.open: OrderedDict[str, RunWatch] = OrderedDict()  # detailed, least recently opened first
        # ended runs: id → (log size, log mtime_ns, the list's summary)
        self.indexed: dict[str, tuple[int, int, dict[str, Any]]] = self._read_index()
        self._subfolders: tuple[float, dict[str, int]] = (-SUBFOLDERS_TTL, {})
        self.version = 0  # moves whenever a listing may differ from the one before (a log was read)

    def run_dir(self, run_id: str) -> Path | None:
        """The folder of `run_id`, only when it is a run directly under the recordings folder."""
        if not RUN_ID.match(run_id):
            return None
        candidate = (self.root / run_id).resolve()
        events = candidate / EVENTS_FILE
        if candidate.parent != self.root or not events.is_file():
            return None
        if events.resolve().parent != candidate:  # a log that is a symlink leading out
            return None
        return candidate

    async def watch(self, run_id: str, detailed: bool = True) -> RunWatch | None:
        """The run's watch, brought up to date; None when `run_id` names no run here."""
        run_dir = self.run_dir(run_id)
        if run_dir is None:
            return None
        watch = self.open.get(run_id)
        if watch is not None:
            if detailed:  # the list's refreshes don't count as opening a run
                self.open.move_to_end(run_id)
        elif detailed:
            watch = self.open[run_id] = RunWatch(run_dir, detailed=True)
            self.watches.pop(run_id, None)
            self._close_least_recent()
        else:
            watch = self.watches.get(run_id)
            if watch is None:
                watch = self.watches[run_id] = RunWatch(run_dir, detailed=False)
        await watch.refresh()
        return watch

    def _close_least_recent(self) -> None:
        """Keep OPEN_RUNS detailed watches; one with an open stream stays."""
        for run_id in [r for r, w in self.open.items() if w.streams == 0][
            : max(0, len(self.open) - OPEN_RUNS)
        ]:
            self.open.pop(run_id)

    def subfolders(self) -> dict[str, int]:
        """Folders below this one that hold runs of their own (an experiment's recordings):
        they are separate recordings folders, listed so the page can point at them. Looked
        for at most every `SUBFOLDERS_TTL` seconds (it lists every run's folder)."""
        taken, counts = self._subfolders
        if time.monotonic() - taken < SUBFOLDERS_TTL:
            return counts
        counts = {}
        for log in self.root.glob(f"*/*/{EVENTS_FILE}"):
            folder = log.parent.parent
            if not (folder / EVENTS_FILE).exists():
                counts[folder.name] = counts.get(folder.name, 0) + 1
        self._subfolders = (time.monotonic(), dict(sorted(counts.items())))
        return self._subfolders[1]

    async def listing(self, budget: float = LIST_BUDGET) -> tuple[list[dict[str, Any]], int]:
        """Every run's summary for the list, newest first, and how many runs were not read
        yet (their logs would take longer than `budget` seconds: the next call goes on)."""
        deadline = time.monotonic() + budget
        summaries: list[dict[str, Any]] = []
        pending = read = 0
        changed = False
        seen: set[str] = set()
        for entry in sorted(os.scandir(self.root), key=lambda e: e.name):
            stamp = self._stamp(entry)
            if stamp is None:
                continue
            seen.add(entry.name)
            kept = self.indexed.get(entry.name)
            if kept is not None and kept[:2] == stamp and entry.name not in self.open:
                summaries.append(kept[2])
                continue
            if read and time.monotonic() > deadline:  # each answer reads one log at least: it goes on
                pending += 1
                continue
            read += 1
            watch = await self.watch(entry.name, detailed=False)
            if watch is None:
                continue
            summary = watch.summary()
            summaries.append(summary)
            if watch.last_end is not None and not watch.error and watch.header is not None:
                # ended: its summary holds until the log changes (a resume appends to it)
                self.indexed[entry.name] = (*stamp, summary)
                self.watches.pop(entry.name, None)  # counters only; the index has them now
                changed = True
            elif self.indexed.pop(entry.name, None) is not None:
                changed = True
        for gone in set(self.indexed) - seen:  # a run folder removed since
            del self.indexed[gone]
            changed = True
        if changed:
            self._write_index()
        summaries.sort(key=lambda s: -(s.get("created") or 0))
        if read or changed or pending:
            self.version += 1
        return summaries, pending

    def _stamp(self, entry: os.DirEntry[str]) -> tuple[int, int] | None:
        """(size, mtime_ns) of a run's log, when `entry` is a run directly here (no links)."""
        if not RUN_ID.match(entry.name) or not entry.is_dir(follow_symlinks=False):
            return None
        try:
            info = os.lstat(os.path.join(entry.path, EVENTS_FILE))
        except OSError:
            return None
        return (info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None

    def _read_index(self) -> dict[str, tuple[int, int, dict[str, Any]]]:
        """The index a viewer of this folder left, entries of the wrong shape left out (a
        cache file: never trusted past its shape)."""
        try:
            data = json.loads(index_path(self.root).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if (
            not isinstance(data, dict) or data.get("format") != INDEX_FORMAT
            or data.get("root") != str(self.root) or not isinstance(data.get("runs"), dict)
        ):  # fmt: skip
            return {}
        out = {}
        for run_id, entry in data["runs"].items():
            if (
                isinstance(entry, list) and len(entry) == 3
                and all(isinstance(v, int) and not isinstance(v, bool) for v in entry[:2])
                and isinstance(entry[2], dict) and entry[2].get("id") == run_id and RUN_ID.match(run_id)
            ):  # fmt: skip
                out[run_id] = (entry[0], entry[1], entry[2])
        return out

    def _write_index(self) -> None:
        """Best effort, whole or not at all: a folder the viewer can't write is read again
        by the next viewer, nothing worse."""
        path = index_path(self.root)
        runs = {run_id: list(entry) for run_id, entry in sorted(self.indexed.items())}
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_whole(path, json.dumps({"format": INDEX_FORMAT, "root": str(self.root), "runs": runs}))


def index_path(root: Path) -> Path:
    """Where the viewer keeps its list index of the recordings folder `root`: the user's cache
    (`$XDG_CACHE_HOME`, else ~/.cache), one file per folder."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return cache / "marathonbench" / "viewer" / f"{root.name[:40]}-{digest}.json"


