"""Text files under a folder that globs pick, read whole — where the agent's memory is
(gateway/report/memory_state.py) or where a deletion reaches (deletion_scope.py).

What a caller may rely on: files over `MAX_FILE_BYTES`, binary files, links and files past the
folder's `MAX_READ_BYTES` are listed in `not_read` with the reason, never skipped in silence; a
binary file is known from its first 4 KiB (a 8 MiB sparse file costs 4 KiB, not 8 MiB); so a
reading's memory stays under `MAX_READ_BYTES` + one file, whatever the folder holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from adapters.state_folder import shown_name

MAX_FILE_BYTES = 8 * 1024 * 1024  # a file past it is listed, not read
MAX_READ_BYTES = 64 * 1024 * 1024  # text read from one folder; files past it are listed, not read


@dataclass
class ScopedFiles:
    """The text files under `folder` that globs picked: relative path → text."""

    folder: Path
    texts: dict[str, str] = field(default_factory=dict)
    not_read: list[str] = field(default_factory=list)  # "path (why)"


def read_scoped(folder: Path, globs: list[str]) -> ScopedFiles:
    """Read what `globs` pick under `folder`. A pattern that would leave the folder (absolute,
    or with `..`) is refused and listed; a file that can't be read is listed, never raised."""
    found = ScopedFiles(folder)
    seen: set[Path] = set()
    read = 0  # bytes of text kept: one folder's reading is bounded, whatever it holds
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
                size = path.stat().st_size
                if size > MAX_FILE_BYTES:
                    found.not_read.append(f"{where} (over {MAX_FILE_BYTES // 2**20} MiB)")
                    continue
                with open(path, "rb") as f:
                    head = f.read(4096)
                    if b"\0" in head:  # binary: known from its first bytes, the rest never read
                        found.not_read.append(f"{where} (not text)")
                        continue
                    if read + size > MAX_READ_BYTES:
                        found.not_read.append(f"{where} (past the {MAX_READ_BYTES / 2**20:g} MiB read of one folder)")
                        continue
                    data = head + f.read(max(size - len(head), 0))  # as big as it is: read(n) takes n first
            except OSError as exc:
                found.not_read.append(f"{where} (can't be read: {exc.strerror or exc})")
                continue
            read += len(data)
            found.texts[where] = data.decode("utf-8", errors="replace")
    return found
