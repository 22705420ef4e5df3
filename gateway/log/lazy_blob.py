"""A blob whose bytes stay in its log file until asked for (read_log's blobs)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gateway.log.errors import RunLogFormatError
from gateway.log.events import Blob
from gateway.log.frames import is_framed, records
from gateway.log.migrations import migrate

_BlobPlace = tuple[Path, int, int, int, int]  # path, inode, start, end, format


class LazyBlob(Blob):
    """A blob read from a log file whose bytes stay in the file until asked for: a reader holds
    its `ref` and where its record is, so a log of 500 MiB of model traffic costs its events'
    memory, not its bytes. `data` reads the record again (the log is append-only: a record
    once intact stays where it is)."""

    def __init__(
        self, ref: str = "", data: bytes = b"", *, seq: int = -1, ts: float = 0.0, where: _BlobPlace | None = None
    ) -> None:
        self._where, self._data = where, data  # no place: a blob in memory (`dataclasses.replace`)
        super().__init__(ref=ref, seq=seq, ts=ts)

    @property  # a field in Blob, read from the file here
    def data(self) -> bytes:
        if self._where is None:
            return self._data
        path, inode, start, end, version = self._where
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_ino == inode:  # the same file: a log replaced is another
                f.seek(start)
                chunk = f.read(end - start)
                found = next(records(chunk, 0, is_framed(chunk)), None)
                value = migrate(found[1], version) if found is not None else {}
                if value.get("ref") == self.ref and isinstance(value.get("data"), bytes):
                    return bytes(value["data"])
        raise RunLogFormatError(
            f"{path}: the blob {self.ref[:12]}… read at byte {start:,} is no longer there (the log was "
            "replaced since it was read: read it again)"
        )

    @data.setter
    def data(self, value: bytes) -> None:
        """Blob's __init__ sets it: here the bytes are the file's."""

    def __eq__(self, other: object) -> bool:
        """Equal to the `Blob` it stands for: the same record, read now or later."""
        if not isinstance(other, Blob):
            return NotImplemented
        return (self.ref, self.seq, self.ts, self.data) == (other.ref, other.seq, other.ts, other.data)

    __hash__ = None  # type: ignore[assignment]  # as a dataclass with eq: not hashable

    def __reduce__(self) -> tuple[Any, ...]:
        return (Blob, (), {"ref": self.ref, "seq": self.seq, "ts": self.ts, "data": self.data})
