from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from gateway.log.events import Event
from gateway.log.runlog import RunLogWriteError


@dataclass
class MemoryLog:
    """A run log held in memory (what RunRecorder writes through); `broken` makes it fail."""

    events: list[Event] = field(default_factory=list)
    broken: bool = False

    def __call__(self, event: Event) -> Event:
        if self.broken:
            raise RunLogWriteError(28, "No space left on device")
        event.seq = len(self.events)
        self.events.append(event)
        return event

    def of(self, kind: type[Event]) -> list[Event]:
        return [e for e in self.events if isinstance(e, kind)]


@pytest.fixture
async def memlog() -> AsyncIterator[MemoryLog]:
    yield MemoryLog()
