"""A run in one line, for reports over many runs, and the index that keeps those lines.

A folder of 10,000 runs took `marathon report` past 300 s at 8.1 GB: every log was read,
summarised and kept. A run outside any scale ladder or experiment, and not among the newest
(charted) ones, needs no more than its line — id, status, mean, stand-in or not — so that
is all the report keeps of it (`RunCard`). Lines are kept in `INDEX_FILE` in the recordings
folder (beside matrix.md, which `report` writes too) with their log's size and modification
time: a later report reads a log again only when either changed. The index is a cache:
deleting it costs a re-read, never a wrong report; an entry of the wrong shape is ignored.
Reading many logs for the first time is spread over worker processes
(`gateway.report.recordings.read_cards`).

What a caller may rely on: a card says what the run's own report.md says of it (the same
summary).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gateway.log.runlog import EVENTS_FILE
from gateway.whole_file import write_whole

INDEX_FILE = ".runs-index.json"
INDEX_FORMAT = 1

Stamp = tuple[int, int]  # the log's (size, mtime_ns)


@dataclass(frozen=True)
class RunCard:
    folder: str  # the run's folder under the recordings folder
    run_id: str
    status: str
    mean: str  # as the run's report says it (a range when grades are unresolved)
    stand_in: bool
    created: float

    def line(self, recordings: Path) -> str:
        return f"{self.run_id} — {self.status}, mean {self.mean} ({recordings / self.folder / 'report.md'})"


def stamp_of(run_dir: Path) -> Stamp | None:
    try:
        info = os.stat(run_dir / EVENTS_FILE)
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns) if stat.S_ISREG(info.st_mode) else None


class CardIndex:
    """The cards of a recordings folder as the last report left them, by their log's stamp."""

    def __init__(self, recordings: Path) -> None:
        self.path = recordings / INDEX_FILE
        self.cards: dict[str, tuple[Stamp, RunCard]] = self._read()
        self.changed = False

    def get(self, folder: str, stamp: Stamp) -> RunCard | None:
        kept = self.cards.get(folder)
        return kept[1] if kept is not None and kept[0] == stamp else None

    def put(self, stamp: Stamp, card: RunCard) -> None:
        self.cards[card.folder] = (stamp, card)
        self.changed = True

    def keep_only(self, folders: Iterable[str]) -> None:
        """Forget the runs not in `folders` (removed, or no longer plain runs)."""
        wanted = set(folders)
        for gone in set(self.cards) - wanted:
            del self.cards[gone]
            self.changed = True

    def save(self) -> None:
        """Best effort, whole or not at all: a folder the report can't write is read again
        next time, nothing worse."""
        if not self.changed:
            return
        runs = {name: [*stamp, asdict(card)] for name, (stamp, card) in sorted(self.cards.items())}
        with contextlib.suppress(OSError):
            write_whole(self.path, json.dumps({"format": INDEX_FORMAT, "runs": runs}))

    def _read(self) -> dict[str, tuple[Stamp, RunCard]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("format") != INDEX_FORMAT or not isinstance(data.get("runs"), dict):
            return {}
        out = {}
        for folder, entry in data["runs"].items():
            card = _card(folder, entry)
            if card is not None:
                out[folder] = card
        return out


def _card(folder: str, entry: Any) -> tuple[Stamp, RunCard] | None:
    """An index entry as (stamp, card), or None when it is not of the shape `save` writes."""
    if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], dict)):
        return None
    size, mtime, fields = entry
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (size, mtime)):
        return None
    types: dict[str, type | tuple[type, ...]] = {
        "folder": str, "run_id": str, "status": str, "mean": str, "stand_in": bool, "created": (int, float),
    }  # fmt: skip
    if set(fields) != set(types) or not all(isinstance(fields[k], t) for k, t in types.items()):
        return None
    if fields["folder"] != folder:
        return None
    return (size, mtime), RunCard(**fields)
