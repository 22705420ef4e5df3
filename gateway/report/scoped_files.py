"""Text files under a folder that globs pick, read whole — where the agent's memory is
(gateway/report/memory_state.py) or where a deletion reaches (deletion_scope.py).

What a caller may rely on: files over `MAX_FILE_BYTES`, binary files, links and files past the
folder's `MAX_READ_BYTES` are listed in `not_read` with the reason, never skipped in silence; a
binary file is known from its first 4 KiB (a 8 MiB sparse file costs 4 KiB, not 8 MiB); so a
reading's memory stays under `MAX_READ_BYTES` + one file, whatever the folder holds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from adapters.state_folder import shown_name

MAX_FILE_BYTES = 8 * 1024 * 1024  # a file past it is listed, not read
MAX_READ_BYTES = 64 * 1024 * 1024  # text read from one folder; files past it are listed, not read


@dataclass
class ScopedFiles:
    """The text files under `folder` that globs picked: relative path → text."""

    folder: Path
    texts: dict[str, str] = field(default_factory=dict)
    not_read: list[str] = field(default_factory=list)  # "path (why)"
    text_bytes: int = 0  # bytes of text kept: one folder's reading is bounded, whatever it holds

    def take(self, where: str, size: int, source: IO[bytes]) -> None:
        """Keep the file `where` (`size` bytes, read from `source`) as text, or list why not: past
        `MAX_FILE_BYTES`, binary (known from its first 4 KiB, the rest never read), or past the
        folder's `MAX_READ_BYTES`. The same rules for a folder and a checkpoint's archive."""
        if size > MAX_FILE_BYTES:
            self.not_read.append(f"{where} (over {MAX_FILE_BYTES // 2**20} MiB)")
            return
        head = source.read(4096)
        if b"\0" in head:
            self.not_read.append(f"{where} (not text)")
            return
        if self.text_bytes + size > MAX_READ_BYTES:
            self.not_read.append(f"{where} (past the {MAX_READ_BYTES / 2**20:g} MiB read of one folder)")
            return
        data = head + source.read(max(size - len(head), 0))  # as big as it is: read(n) takes n first
        self.text_bytes += len(data)
        self.texts[where] = data.decode("utf-8", errors="replace")


def read_scoped(folder: Path, globs: list[str]) -> ScopedFiles:
    """Read what `globs` pick under `folder`. A pattern that would leave the folder (absolute,
    or with `..`) is refused and listed; a file that can't be read is listed, never raised."""
    found = ScopedFiles(folder)
    seen: set[Path] = set()
    for pattern in globs:
        if pattern.startswith("/") or ".." in pattern.split("/"):
            found.not_read.append(f"{pattern} (a pattern must stay under the folder)")
            continue
        for path in sorted(folder.glob(pattern)):
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            where = shown_name(str(path.relative_to(folder)))  # any name the OS allows, as text
            if path.is_symlink() or not path.resolve().is_relative_to(folder.resolve()):
                found.not_read.append(f"{where} (a link)")
                continue
            try:
                with open(path, "rb") as f:
                    found.take(where, os.fstat(f.fileno()).st_size, f)
            except OSError as exc:
                found.not_read.append(f"{where} (can't be read: {exc.strerror or exc})")
    return found
