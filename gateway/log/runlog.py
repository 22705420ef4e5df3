"""The run log: an append-only msgpack stream, one file per run (design §6).

Writing: one `os.write` per record on an `O_APPEND` descriptor, so every record is either
wholly in the file or (after a SIGKILL mid-write) a torn tail. Before appending to an existing
log, the torn tail is cut off — appending after it would make a reader swallow every later
record. A record that can't be written raises `RunLogWriteError`: the run stops rather than
going on unrecorded (fail closed).

Reading never raises on damage: it returns every complete record before the first bad byte and
says how much was left unread. A log of a newer format is refused with an upgrade hint; older
formats would migrate through `MIGRATIONS` (format 1 is the first, so the chain is empty).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from gateway.log.events import (
    FORMAT_VERSION,
    MAGIC,
    Event,
    Header,
    InvalidEvent,
    RunEnded,
    RunStart,
    TerminationReason,
    event_from_record,
)
from gateway.log.scrub import scrub

EVENTS_FILE = "events.msgpack"

# format N → N+1 converters for a record; applied in a chain up to FORMAT_VERSION.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


class RunLogWriteError(OSError):
    """The log could not be written (disk full, permissions): the run must stop."""


class RunLogFormatError(ValueError):
    """The file is not a run log, or was written by a newer marathonbench."""


@dataclass
class RunLog:
    path: Path
    header: Header
    events: list[Event] = field(default_factory=list)
    valid_length: int = 0
    unread_bytes: int = 0

    @property
    def torn(self) -> bool:
        return self.unread_bytes > 0


def _packb(record: dict[str, Any]) -> bytes:
    try:
        data: bytes = msgpack.packb(record, use_bin_type=True)
    except UnicodeEncodeError:  # a lone surrogate the boundary missed: never an unwritable log
        data = msgpack.packb(scrub(record)[0], use_bin_type=True)
    return data


def iter_records(path: Path, offset: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(end offset, record)` for each complete record from byte `offset` (a record
    boundary); stop silently at damage or at a record still being written."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=1 << 30)
    with open(path, "rb") as f:
        f.seek(offset)
        while chunk := f.read(1 << 20):
            unpacker.feed(chunk)
            while True:
                try:
                    record = unpacker.unpack()
                except msgpack.OutOfData:
                    break
                except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError):
                    return  # damage (a flipped bit can even make a map key unhashable): stop here
                if not isinstance(record, dict):
                    return
                yield offset + unpacker.tell(), record


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
        events: list[Event] = []
        for end, record in iter_records(self.path, self.offset):
            if self.header is None:
                version = record.get("format")
                if record.get("magic") != MAGIC or not isinstance(version, int):
                    raise RunLogFormatError(f"{self.path}: not a marathonbench run log (no header record)")
                if version > FORMAT_VERSION:
                    raise RunLogFormatError(f"{self.path}: written in a newer log format ({version})")
                self._version = version
                header = event_from_record(_migrate(record, version))
                if not isinstance(header, Header):
                    raise RunLogFormatError(f"{self.path}: malformed header record")
                self.header = header
                with open(self.path, "rb") as f:
                    self._head = f.read(end)
                events.append(header)
            else:
                events.append(event_from_record(_migrate(record, self._version)))
            self.offset = end
        return events

    def _same_head(self) -> bool:
        if not self._head:
            return True
        with open(self.path, "rb") as f:
            return f.read(len(self._head)) == self._head


def _migrate(record: dict[str, Any], version: int) -> dict[str, Any]:
    while version < FORMAT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise RunLogFormatError(f"no migration from log format {version}")
        record = step(record)
        version += 1
    return record


def read_log(path: Path | str) -> RunLog:
    """Read a run log; a torn or damaged tail is left out (see `RunLog.unread_bytes`)."""
    path = Path(path)
    size = path.stat().st_size
    records = iter_records(path)
    first = next(records, None)
    if first is None or first[1].get("magic") != MAGIC:
        raise RunLogFormatError(f"{path}: not a marathonbench run log (no header record)")
    end, raw_header = first
    version = raw_header.get("format")
    if not isinstance(version, int):
        raise RunLogFormatError(f"{path}: header has no format version")
    if version > FORMAT_VERSION:
        raise RunLogFormatError(
            f"{path}: written in log format {version} by a newer marathonbench "
            f"(this one reads up to {FORMAT_VERSION}); upgrade marathonbench to read it"
        )
    header = event_from_record(_migrate(raw_header, version))
    if not isinstance(header, Header):
        raise RunLogFormatError(f"{path}: malformed header record")
    log = RunLog(path, header, valid_length=end)
    for end, record in records:
        log.events.append(event_from_record(_migrate(record, version)))
        log.valid_length = end
    log.unread_bytes = size - log.valid_length
    return log


class RunLogWriter:
    """Appends typed events to one log; not shared between processes or threads."""

    def __init__(self, path: Path, next_seq: int) -> None:
        self.path = path
        self._next_seq = next_seq
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise RunLogWriteError(exc.errno, f"can't open run log {path}: {exc.strerror}") from exc

    @classmethod
    def create(cls, path: Path, header: Header) -> RunLogWriter:
        """Start a new log at `path` (an existing file there is replaced)."""
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.unlink(missing_ok=True)
        writer = cls(path, next_seq=0)
        header.created = header.created or time.time()
        writer.append(header)
        return writer

    @classmethod
    def resume(cls, path: Path) -> tuple[RunLogWriter, RunLog]:
        """Open an existing log for appending, after cutting off a torn tail."""
        log = read_log(path)
        invalid = [e for e in log.events if isinstance(e, InvalidEvent)]
        if invalid:
            raise RunLogFormatError(
                f"{path}: record {invalid[0].seq} is not what its type declares ({invalid[0].problem})"
                + (f", and {len(invalid) - 1} more" if len(invalid) > 1 else "")
                + "; resuming would build on it — `--fresh` starts the run over"
            )
        if log.unread_bytes:
            os.truncate(path, log.valid_length)
        last_seq = max((e.seq for e in log.events), default=log.header.seq)
        return cls(path, next_seq=last_seq + 1), log

    def append(self, event: Event) -> Event:
        if self._fd is None:
            raise RunLogWriteError("run log is closed")
        event.seq = self._next_seq
        event.ts = time.time()
        data = _packb(event.to_record())
        try:
            written = os.write(self._fd, data)
        except OSError as exc:
            raise RunLogWriteError(exc.errno, f"can't write run log {self.path}: {exc.strerror}") from exc
        if written != len(data):
            raise RunLogWriteError(f"short write to run log {self.path} ({written} of {len(data)} bytes)")
        self._next_seq += 1
        return event

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_status(log: RunLog) -> TerminationReason | None:
    """How the log's last start ended; None when it never wrote an `end` (killed, or running)."""
    last_end: RunEnded | None = None
    for event in log.events:
        if isinstance(event, RunStart):
            last_end = None
        elif isinstance(event, RunEnded):
            last_end = event
    return TerminationReason(last_end.reason) if last_end else None
