"""The runs of a recordings folder, as the viewer lists and opens them.

What a caller may rely on: a run id names a folder directly under the recordings folder or
nothing (no traversal); only the `OPEN_RUNS` run pages opened last keep their details in
memory, so a folder of many long runs stays small.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path

from gateway.log.runlog import EVENTS_FILE
from gateway.viewer.watch import RunWatch

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
OPEN_RUNS = 8  # run pages whose details stay in memory (a reopened one is read again)


class Recordings:
    """The runs under one folder, each followed on demand: every run's counters (for the list),
    and the details of the `OPEN_RUNS` run pages opened last (or still streaming)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.watches: dict[str, RunWatch] = {}  # counters only
        self.open: OrderedDict[str, RunWatch] = OrderedDict()  # detailed, least recently opened first

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
        they are separate recordings folders, listed so the page can point at them."""
        counts: dict[str, int] = {}
        for log in self.root.glob(f"*/*/{EVENTS_FILE}"):
            folder = log.parent.parent
            if not (folder / EVENTS_FILE).exists():
                counts[folder.name] = counts.get(folder.name, 0) + 1
        return dict(sorted(counts.items()))

    async def all(self) -> list[RunWatch]:
        ids = sorted(p.parent.name for p in self.root.glob(f"*/{EVENTS_FILE}"))
        watches = [w for w in [await self.watch(i, detailed=False) for i in ids] if w is not None]
        return sorted(watches, key=lambda w: -(w.header.created if w.header else 0))


