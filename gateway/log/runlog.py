"""The run log: an append-only msgpack stream, one file per run (design §6).

Writing: one `os.write` per record on an `O_APPEND` descriptor, so every record is either
wholly in the file or (after a SIGKILL mid-write) a torn tail. Before appending to an existing
log, the torn tail is cut off — appending after it would make a reader swallow every later
record. A record that can't be written raises `RunLogWriteError`: the run stops rather than
going on unrecorded (fail closed).

Reading never raises on damage: it returns every intact record before the first bad byte and
says how much was left unread, and whether that is a torn tail (a record cut by a crash at the
end: dropped on resume) or damage with intact records after it (`RunLog.damage`: resume
refuses, `repair_log` keeps what comes before it and moves the original aside). Format 2 checks
every record with a CRC (`frames.py`); format-1 logs are read, resumed and repaired in their
own framing. A log of a newer format is refused with an upgrade hint; older formats migrate
through `MIGRATIONS`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import msgpack

from gateway.log.bounds import max_log_records
from gateway.log.errors import RunLogDamaged, RunLogFormatError, RunLogTooLarge, RunLogWriteError
from gateway.log.events import (
    FORMAT_VERSION,
    MAGIC,
    Blob,
    Event,
    Header,
    InvalidEvent,
    RunEnded,
    RunStart,
)
from gateway.log.frames import (
    FRAME_HEAD,
    FRAME_PREFIX,
    Damage,
    find_damage,
    frame,
    frame_length,
    is_framed,
    records,
)
from gateway.log.header_fields import header_field_problem
from gateway.log.lazy_blob import LazyBlob
from gateway.log.lock import RunLock
from gateway.log.migrations import migrate
from gateway.log.records import event_from_record
from gateway.log.redact import DEFAULT, Redactor
from gateway.log.scrub import scrub
from gateway.log.vocabulary import TerminationReason

EVENTS_FILE = "events.msgpack"
# the log's errors, defined in errors.py, are read from here by the rest of the code
__all__ = ["RunLogDamaged", "RunLogFormatError", "RunLogTooLarge", "RunLogWriteError"]

FIRST_FRAMED_FORMAT = 2
MIN_FREE_BYTES = 4 << 20  # room a streamed LLM answer's records need, with a margin


# what the recorder answers an agent's model call it could not log (a 503): an agent error
# quoting it was caused by marathon's log, not by the agent (older runs logged it as the agent's)
REFUSED_TRAFFIC = "marathonbench recorder cannot write its log; refusing unrecorded traffic"


def disk_full_message(path: Path, free: int) -> str:
    """Names the disk and its free space: a full disk is marathon's failure, never the agent's."""
    return (
        f"the disk holding the run log {path} has {free:,} bytes free; recording an LLM answer "
        f"needs {MIN_FREE_BYTES:,} (free some space, then run the same command again to resume)"
    )


@dataclass
class RunLog:
    path: Path
    header: Header
    events: list[Event] = field(default_factory=list)
    valid_length: int = 0  # bytes of intact records from the start; `events` are exactly these
    unread_bytes: int = 0
    format: int = FORMAT_VERSION  # as written on disk (events are migrated to the current one)
    damage: Damage | None = None
    # how a reader read it beyond the bytes, one line each (a `rescore --traffic` re-derivation
    # put in place, or one that could not be: gateway/report/traffic_overlay.py)
    notes: list[str] = field(default_factory=list)

    @property
    def torn(self) -> bool:
        """Something at the end was not read (a torn tail, or damage: see `damage`)."""
        return self.unread_bytes > 0

    def damage_text(self) -> str:
        """One line for a reader to show, or "" for an intact log."""
        if self.damage:
            return (
                f"damaged at byte {self.damage.offset:,}: {self.damage.records_after} intact "
                f"record(s) after it are not shown (`marathon repair` keeps what comes before)"
            )
        if self.unread_bytes:
            return f"the last {self.unread_bytes} bytes are a torn record (cut by a crash) and were ignored"
        return ""


def pack_record(record: dict[str, Any]) -> bytes:
    try:
        data: bytes = msgpack.packb(record, use_bin_type=True)
    except UnicodeEncodeError:  # a lone surrogate the boundary missed: never an unwritable log
        data = msgpack.packb(scrub(record)[0], use_bin_type=True)
    return data


def _read_header(path: Path, data: bytes) -> tuple[int, Header, int, bool]:
    """The header record of a log's bytes: (its end, the header, the format, framed?)."""
    framed = is_framed(data)
    first = next(records(data, 0, framed), None)
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
    if framed != (version >= FIRST_FRAMED_FORMAT):
        raise RunLogFormatError(f"{path}: format {version} header in the wrong framing")
    header = event_from_record(migrate(raw_header, version))
    if not isinstance(header, Header):
        why = f" ({header.problem})" if isinstance(header, InvalidEvent) else ""
        raise RunLogFormatError(f"{path}: malformed header record{why}")
    if wrong := header_field_problem(header):
        raise RunLogFormatError(f"{path}: malformed header record ({wrong})")
    return end, header, version, framed




def read_header(path: Path) -> Header:
    """The log's header alone, without reading its events (a report sorting 10,000 runs).
    Raises `RunLogFormatError` as `read_log` does for a file that is not a run log."""
    with open(path, "rb") as f:
        data = f.read(1 << 16)
        try:
            return _read_header(path, data)[1]
        except RunLogFormatError:
            if len(data) < 1 << 16:
                raise
        return _read_header(path, data + f.read())[1]  # a header past 64 KiB: read on


def iter_records(path: Path, offset: int = 0) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(end offset, record)` for each intact record from byte `offset` (a record
    boundary), in either format; stop silently at damage or at a record still being written."""
    with open(path, "rb") as f:
        framed = is_framed(f.read(len(FRAME_HEAD)))
        f.seek(offset)
        data = f.read()
    for end, record in records(data, 0, framed):
        yield offset + end, record


def read_log(path: Path | str, *, blobs_in_memory: bool = False) -> RunLog:
    """Read a run log. A torn tail is left out (`RunLog.unread_bytes`); damage with intact
    records after it is described in `RunLog.damage`, and only the records before it are
    returned (what comes after may build on what the damage hid).

    Streamed: the file is read a frame at a time (never whole, never mapped — a log cut back by
    its writer while read is a torn tail, not a crash), and a blob's bytes stay in the file
    (`LazyBlob`). A log of more records than `max_log_records()` is refused (`RunLogTooLarge`) as
    soon as it passes it. `blobs_in_memory`: blobs read whole (a caller that will write the
    events to this same path)."""
    path = Path(path)
    with open(path, "rb") as f:
        inode = os.fstat(f.fileno()).st_ino
        head = f.read(1 << 16)
        if not head:
            raise RunLogFormatError(f"{path}: not a marathonbench run log (an empty file)")
        if not is_framed(head):  # format 1 (no frame lengths to stream by): an older, smaller log
            return _read_records(path, head + f.read(), None if blobs_in_memory else inode)
        try:
            header_end, header, version, _ = _read_header(path, head)
        except RunLogFormatError:
            if len(head) < 1 << 16:
                raise
            head += f.read()  # a header past 64 KiB: read on
            header_end, header, version, _ = _read_header(path, head)
        log = RunLog(path, header, valid_length=header_end, format=version)
        stream = _FrameStream(f, header_end, head)
        _take(log, stream.records(), None if blobs_in_memory else inode)
        rest = stream.rest()
        log.unread_bytes = len(rest)
        if rest:
            log.damage = find_damage(rest, 0, True, log.events[-1].seq if log.events else header.seq)
            if log.damage is not None:
                offset = log.valid_length
                log.damage = Damage(offset, offset + log.damage.next_intact, log.damage.records_after)
    return log


class _FrameStream:
    """A framed log's records read from its file one frame at a time, from `start`; `rest()`:
    the bytes after the last intact frame (a torn tail, or damage)."""

    def __init__(self, f: BinaryIO, start: int, head: bytes) -> None:
        self.f, self.pos = f, start
        self.buffer, self.base = bytearray(head), 0  # bytes of the file from `base`

    def _have(self, end: int) -> bool:
        """The buffer holds the file up to `end` (reading on), or the file is shorter."""
        while self.base + len(self.buffer) < end:
            if self.pos - self.base > 1 << 20:  # drop what was read before the record now read
                del self.buffer[: self.pos - self.base]
                self.base = self.pos
            chunk = self.f.read(max(end - self.base - len(self.buffer), 1 << 16))
            if not chunk:
                return False
            self.buffer += chunk
        return True

    def _bytes(self, length: int) -> bytes:
        at = self.pos - self.base
        return bytes(self.buffer[at : at + length])

    def records(self) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """`(start, end, record)` of each intact frame."""
        while True:
            self._have(self.pos + FRAME_PREFIX)
            length = frame_length(self._bytes(FRAME_PREFIX))
            if length is None or not self._have(self.pos + length):
                return
            found = next(records(self._bytes(length), 0, True), None)
            if found is None or found[0] != length:
                return
            yield self.pos, self.pos + length, found[1]
            self.pos += length

    def rest(self) -> bytes:
        return bytes(self.buffer[self.pos - self.base :]) + self.f.read()


def _read_records(path: Path, data: bytes, inode: int | None) -> RunLog:
    """A format-1 log, read from its bytes."""
    header_end, header, version, framed = _read_header(path, data)
    log = RunLog(path, header, valid_length=header_end, format=version)
    starts = [header_end]

    def spans() -> Iterator[tuple[int, int, dict[str, Any]]]:
        for end, record in records(data, header_end, framed):
            yield starts[-1], end, record
            starts.append(end)

    _take(log, spans(), inode)
    log.unread_bytes = len(data) - log.valid_length
    if log.unread_bytes:
        log.damage = find_damage(data, log.valid_length, framed, log.events[-1].seq if log.events else header.seq)
    return log


def _take(log: RunLog, found: Iterator[tuple[int, int, dict[str, Any]]], inode: int | None) -> None:
    """Each record as its event, into `log` — a blob as a `LazyBlob` when `inode` is given (its
    fields checked as any record's first)."""
    limit = max_log_records()
    for start, end, record in found:
        if len(log.events) >= limit:
            raise RunLogTooLarge(
                f"{log.path}: holds more than {limit:,} records, the most a reader takes "
                "(MARATHON_MAX_LOG_RECORDS; docs/security.md) — not read, so as not to exhaust memory"
            )
        event = event_from_record(migrate(record, log.format))
        if inode is not None and type(event) is Blob:
            event = LazyBlob(
                event.ref, seq=event.seq, ts=event.ts, where=(log.path, inode, start, end, log.format)
            )
        log.events.append(event)
        log.valid_length = end


class RunLogWriter:
    """Appends typed events to one log; not shared between processes or threads."""

    def __init__(self, path: Path, next_seq: int, framed: bool = True) -> None:
        self.path = path
        self._next_seq = next_seq
        self._framed = framed  # False only to append to a format-1 log
        self.redactor: Redactor = DEFAULT  # a run sets its own: its secret values too
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
        """Open an existing log for appending, after cutting off a torn tail. Raises
        `RunLogDamaged` for damage with intact records after it, leaving the file untouched."""
        log = read_log(path)
        if log.damage:
            raise RunLogDamaged(
                f"{path}: damaged at byte {log.damage.offset:,}, and {log.damage.records_after} "
                "intact record(s) follow — the run went on past the damage, so resuming would drop "
                "them and re-drive the agent over what it already saw. `marathon repair "
                f"{path.parent}` keeps the records before the damage in a new log and moves this "
                "file aside (nothing is deleted); `--fresh` starts the run over"
            )
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
        return cls(path, next_seq=last_seq + 1, framed=log.format >= FIRST_FRAMED_FORMAT), log

    def append(self, event: Event) -> Event:
        """Stamp `event` (the next sequence number, the time) and write it; the stamped event."""
        if self._fd is None:
            raise RunLogWriteError("run log is closed")
        event.seq = self._next_seq
        event.ts = time.time()
        event = self.redactor.event(event)  # no text reaches the log without passing here
        self._write(pack_record(event.to_record()))
        return event

    @property
    def next_seq(self) -> int:
        return self._next_seq

    def append_packed(self, seq: int, record: bytes) -> bool:
        """Write a record stamped and packed elsewhere (a run on another machine streams its log
        here: `gateway.cluster`). Its `seq` must be the next one: a record already written (a
        batch sent twice) is skipped — False — and a gap raises, since the log would be missing
        records between."""
        if self._fd is None:
            raise RunLogWriteError("run log is closed")
        if seq < self._next_seq:
            return False
        if seq > self._next_seq:
            raise RunLogWriteError(
                f"run log {self.path}: record {seq} arrived while {self._next_seq} is the next; "
                "records in between were lost on the way"
            )
        self._write(record)
        return True

    def _write(self, data: bytes) -> None:
        if self._fd is None:
            raise RunLogWriteError("run log is closed")
        if self._framed:
            data = frame(data)
        before = self._size()
        written = 0
        try:
            while written < len(data):  # a write may take part of a record: the rest, or the error
                taken = os.write(self._fd, data[written:])
                if not taken:
                    raise OSError(errno.ENOSPC, "the disk took no more bytes")
                written += taken
        except OSError as exc:
            self._cut_back(before)  # a partial record followed by more would read as damage
            room = ""
            if exc.errno == errno.ENOSPC:
                with contextlib.suppress(OSError):
                    fs = os.fstatvfs(self._fd)
                    room = f" ({fs.f_bavail * fs.f_frsize:,} bytes free on its disk)"
            raise RunLogWriteError(exc.errno, f"can't write run log {self.path}: {exc.strerror}{room}") from exc
        self._next_seq += 1

    def flush(self) -> None:
        """Nothing to do: every append is written at once (a relayed log batches; see
        `gateway.cluster.remote_log`). The runner calls it before a message leaves."""

    def size(self) -> int | None:
        """The log's bytes now (None: unknown)."""
        return self._size()

    def _size(self) -> int | None:
        try:
            return os.fstat(self._fd).st_size if self._fd is not None else None
        except OSError:
            return None

    def _cut_back(self, size: int | None) -> None:
        """Best effort: drop what a failed write left, so the log ends on a whole record."""
        if size is not None and self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, size)

    def check_writable(self) -> None:
        """Raise `RunLogWriteError` when an append would fail for lack of room (less than
        `MIN_FREE_BYTES` free for this user on the log's file system) or a closed log. A
        check, not a promise: an append can still fail, and then raises as always."""
        if self._fd is None:
            raise RunLogWriteError("run log is closed")
        try:
            fs = os.fstatvfs(self._fd)
        except OSError as exc:
            raise RunLogWriteError(exc.errno, f"can't check run log {self.path}: {exc.strerror}") from exc
        free = fs.f_bavail * fs.f_frsize
        if fs.f_blocks and free < MIN_FREE_BYTES:
            raise RunLogWriteError(28, disk_full_message(self.path, free))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Repair:
    kept_events: int
    kept_bytes: int
    dropped_bytes: int
    records_after_damage: int
    original: Path  # where the log as it was now lies


def repair_log(path: Path) -> Repair | None:
    """Cut a log back to its intact records before the first damage: the kept bytes become
    the log, the original is moved beside it (`events.damaged-<time>.msgpack`), never deleted.
    None when there is nothing to repair. Takes the run's lock, so a run writing it is refused
    (`RunInUse`)."""
    lock = RunLock.acquire(path.parent)
    try:
        log = read_log(path)
        if not log.unread_bytes:
            return None
        stamp = time.strftime("%Y%m%d-%H%M%S")
        original = path.with_name(f"events.damaged-{stamp}.msgpack")
        staged = path.with_name(f".{path.name}.repair")
        try:
            with open(path, "rb") as src, open(staged, "wb") as dst:
                os.fchmod(dst.fileno(), 0o600)
                dst.write(src.read(log.valid_length))
                dst.flush()
                os.fsync(dst.fileno())
        except OSError as exc:  # a full disk: nothing changed, nothing left behind
            staged.unlink(missing_ok=True)
            free = shutil.disk_usage(path.parent).free
            raise RunLogWriteError(
                exc.errno, f"can't repair {path}: {exc.strerror} ({free:,} bytes free on its disk); the log is untouched"
            ) from exc
        shutil.move(path, original)
        os.replace(staged, path)
        return Repair(
            kept_events=len(log.events),
            kept_bytes=log.valid_length,
            dropped_bytes=log.unread_bytes,
            records_after_damage=log.damage.records_after if log.damage else 0,
            original=original,
        )
    finally:
        lock.release()


def run_status(log: RunLog) -> TerminationReason | None:
    """How the log's last start ended; None when it never wrote an `end` (killed, or running)."""
    last_end: RunEnded | None = None
    for event in log.events:
        if isinstance(event, RunStart):
            last_end = None
        elif isinstance(event, RunEnded):
            last_end = event
    return TerminationReason(last_end.reason) if last_end else None
