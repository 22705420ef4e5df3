"""Following a run log as it grows (the viewer, a cluster's driver): read-only, never in a
run's way."""

from __future__ import annotations

from pathlib import Path

from gateway.log.events import FORMAT_VERSION, Event, Header
from gateway.log.frames import is_framed, records
from gateway.log.migrations import migrate
from gateway.log.records import event_from_record
from gateway.log.runlog import _read_header


class LogFollower:
    """Reads a run log as it grows, for watchers (the viewer): each `read_new()` returns the
    events appended since the last call. Read-only: it never locks, truncates or writes the
    log, so a run never waits for it. A half-written last record is left for the next call; a
    log replaced by `--fresh` (another file, shorter than what was read, or — the inode being
    reused — another header) starts over, and `restarted` says so."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.header: Header | None = None
        self.offset = 0
        self.restarted = False
        self._inode: int | None = None
        self._head = b""  # the header record's bytes: a new log has another (its `created`)
        self._version = FORMAT_VERSION
        self._framed = True

    def read_new(self) -> list[Event]:
        """New events (the header first, on the first call); raises RunLogFormatError for a
        file that is not a run log or is newer than this reader."""
        stat = self.path.stat()
        self.restarted = False
        if stat.st_size == self.offset and stat.st_ino == self._inode:
            return []
        if self._inode is not None and (
            stat.st_ino != self._inode or stat.st_size < self.offset or not self._same_head()
        ):
            self.header, self.offset, self.restarted, self._head = None, 0, True, b""
        self._inode = stat.st_ino
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        events: list[Event] = []
        pos = 0
        if self.header is None:
            if next(records(data, 0, is_framed(data)), None) is None:
                return []  # the header is still being written
            pos, self.header, self._version, self._framed = _read_header(self.path, data)
            self._head = data[:pos]
            self.offset = pos
            events.append(self.header)
        for end, record in records(data, pos, self._framed):
            events.append(event_from_record(migrate(record, self._version)))
            self.offset += end - pos
            pos = end
        return events

    def _same_head(self) -> bool:
        if not self._head:
            return True
        with open(self.path, "rb") as f:
            return f.read(len(self._head)) == self._head
