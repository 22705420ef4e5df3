"""Reading and damaging run logs in tests: which messages an agent answered, and a crash
simulated by cutting a log right after its nth record of a kind."""

from __future__ import annotations

import itertools
from pathlib import Path

from gateway.log.events import Asked, Event, Replied, Said
from gateway.log.runlog import iter_records


def answered(events: list[Event]) -> list[str]:
    """The messages the agent answered, in order."""
    out = []
    for sent, nxt in itertools.pairwise(events):
        if isinstance(sent, (Said, Asked)) and isinstance(nxt, Replied):
            out.append(sent.text)
    return out


def cut_after(path: Path, kind: str, nth: int) -> None:
    """Simulate a crash right after the nth record of `kind` reached the disk."""
    seen = 0
    for end, record in iter_records(path):
        if record.get("t") == kind:
            seen += 1
            if seen == nth:
                with open(path, "r+b") as f:
                    f.truncate(end)
                return
    raise AssertionError(f"fewer than {nth} {kind} records")
