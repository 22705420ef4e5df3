"""How records sit in a log file, and how damage is told from a torn tail.

Format 2 wraps each record in a frame that is itself msgpack — an array of the record's CRC-32
(always a 4-byte uint32) and the record's msgpack bytes as a `bin` — so any msgpack tool still
reads the file, and a reader can check every record:

    92 ce <crc: 4 bytes> c4|c5|c6 <length> <record bytes>

Why a checksum: without one a flipped bit inside a string reads back as a different text, and
a flipped structural byte stops the reader without saying whether anything came after it.
Why a fixed frame head: after damage, the reader finds the next intact frame by searching for
`92 ce` and accepting only a frame whose checksum matches, so "damage followed by N intact
records" (refuse to resume, offer repair) is told apart from "a record cut by a crash at the
end" (drop it). Format 1 logs (plain msgpack maps, each starting with its `"t"` key) get the
same distinction from a weaker search: a map whose first key is `"t"` and which carries an
integer `seq` above the last good one.

Callers may rely on: `records()` never raises on damage and never yields a record that
failed its checksum; `find_damage()` returns None exactly when nothing intact follows the
point where reading stopped.
"""

from __future__ import annotations

import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgpack

FRAME_HEAD = b"\x92\xce"
_FRAME_START = struct.Struct(">2sIB")  # the head, the CRC, the bin marker
_LENGTH_WIDTH = {0xC4: 1, 0xC5: 2, 0xC6: 4}
_UNPACK_ERRORS = (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError)
# a format-1 record: a map (fixmap, or map16 past 15 fields) whose first key is "t"
# (Event.to_record puts it first)
_V1_RECORD_START = re.compile(rb"(?:[\x81-\x8f]|\xde\x00[\x10-\xff])\xa1t")


def frame(record: bytes) -> bytes:
    """The bytes format 2 stores for one packed record."""
    n = len(record)
    if n < 1 << 8:
        length = b"\xc4" + n.to_bytes(1, "big")
    elif n < 1 << 16:
        length = b"\xc5" + n.to_bytes(2, "big")
    else:
        length = b"\xc6" + n.to_bytes(4, "big")
    return FRAME_HEAD + zlib.crc32(record).to_bytes(4, "big") + length + record


def is_framed(head: bytes) -> bool:
    """Whether a log whose first bytes are `head` is written in frames (format ≥ 2)."""
    return head[: len(FRAME_HEAD)] == FRAME_HEAD


@dataclass(frozen=True)
class Damage:
    """Bytes that are not an intact record, with intact records after them."""

    offset: int  # the first byte that is not part of an intact record
    next_intact: int  # where intact records start again
    records_after: int  # intact records from there to the end of the file


FRAME_PREFIX = _FRAME_START.size + 4  # bytes that give a frame's whole length (`frame_length`)


def frame_length(prefix: bytes) -> int | None:
    """A frame's whole length in bytes, from its first `FRAME_PREFIX` bytes (or fewer, for a short
    length field); None when they are not a frame's start."""
    try:
        head, _, kind = _FRAME_START.unpack_from(prefix, 0)
        width = _LENGTH_WIDTH[kind]
    except (struct.error, KeyError):
        return None
    start = _FRAME_START.size + width
    if head != FRAME_HEAD or len(prefix) < start:
        return None
    return start + int.from_bytes(prefix[_FRAME_START.size : start], "big")


def _framed_record(data: bytes, pos: int) -> tuple[int, dict[str, Any]] | None:
    """The intact frame at `pos` as (end, record), or None (damaged, or not all there yet)."""
    length = frame_length(data[pos : pos + FRAME_PREFIX])
    if length is None or pos + length > len(data):
        return None
    _, crc, kind = _FRAME_START.unpack_from(data, pos)
    start = pos + _FRAME_START.size + _LENGTH_WIDTH[kind]
    payload = memoryview(data)[start : pos + length]
    if zlib.crc32(payload) != crc:
        return None
    try:
        record = msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except _UNPACK_ERRORS:
        return None
    return (pos + length, record) if isinstance(record, dict) else None


def _plain_records(data: bytes, pos: int) -> Iterator[tuple[int, dict[str, Any]]]:
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=1 << 30)
    chunk = 1 << 20
    fed = pos
    view = memoryview(data)
    while fed < len(data):
        unpacker.feed(view[fed : fed + chunk])
        fed += chunk
        while True:
            try:
                record = unpacker.unpack()
            except msgpack.OutOfData:
                break
            except _UNPACK_ERRORS:
                return  # damage (a flipped bit can even make a map key unhashable): stop here
            if not isinstance(record, dict):
                return
            yield pos + unpacker.tell(), record


def records(data: bytes, pos: int, framed: bool) -> Iterator[tuple[int, dict[str, Any]]]:
    """`(end offset, record)` for each intact record from `pos` (a record boundary); stops
    silently at the first byte that isn't one — damage, or a record still being written."""
    if not framed:
        yield from _plain_records(data, pos)
        return
    while (found := _framed_record(data, pos)) is not None:
        yield found
        pos = found[0]


def _next_intact(data: bytes, pos: int, framed: bool, after_seq: int) -> int | None:
    """Where the next intact record starts at or after `pos`, if anywhere."""
    if framed:
        at = data.find(FRAME_HEAD, pos)
        while at != -1:
            if _framed_record(data, at) is not None:
                return at
            at = data.find(FRAME_HEAD, at + 1)
        return None
    for match in _V1_RECORD_START.finditer(data, pos):
        first = next(_plain_records(data, match.start()), None)
        if first is not None:
            seq = first[1].get("seq")
            if isinstance(first[1].get("t"), str) and isinstance(seq, int) and seq > after_seq:
                return match.start()
    return None


def find_damage(data: bytes, stopped_at: int, framed: bool, last_seq: int) -> Damage | None:
    """Reading stopped at `stopped_at` before the end of `buf`: None when nothing intact
    follows (a torn tail: a record cut by a crash, safe to drop), else the damage and how many
    intact records come after it (dropping them would lose what the agent already saw)."""
    first = _next_intact(data, stopped_at + 1, framed, last_seq)
    if first is None:
        return None
    count, pos = 0, first
    while True:
        end = pos
        for record_end, record in records(data, pos, framed):
            count += 1
            last_seq = record["seq"] if isinstance(record.get("seq"), int) else last_seq
            end = record_end
        if end >= len(data):
            break
        found = _next_intact(data, end + 1, framed, last_seq)
        if found is None:
            break
        pos = found
    return Damage(stopped_at, first, count)
