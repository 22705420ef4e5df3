"""Text files under a folder that globs pick, read whole — where the agent's memory is
(gateway/report/memory_state.py) or where a deletion reaches (deletion_scope.py).

What a caller may rely on: files over `MAX_FILE_BYTES`, binary files and links are listed in
`not_read` with the reason, never skipped in silence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

MAX_FILE_BYTES = 8 * 1024 * 1024


@dataclass
class ScopedFiles:
    """The text files under `folder` that globs picked: relative path → text."""

    folder: Path
    texts: dict[str, str] = field(default_factory=dict)
    not_read: list[str] = field(default_factory=list)  # "path (why)"


def read_scoped(folder: Path, globs: list[str]) -> ScopedFiles:
    found = ScopedFiles(folder)
    seen: set[Path] = set()
    for pattern in globs:
        for path in sorted(folder.glob(pattern)):
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            where = str(path.relative_to(folder))
            if path.is_symlink():
                found.not_read.append(f"{where} (a link)")
                continue
            if path.stat().st_size > MAX_FILE_BYTES:
                found.not_read.append(f"{where} (over {MAX_FILE_BYTES // 2**20} MiB)")
                continue
            data = path.read_bytes()
            if b"\0" in data[:4096]:
                found.not_read.append(f"{where} (not text)")
                continue
            found.texts[where] = data.decode("utf-8", errors="replace")
    return found
