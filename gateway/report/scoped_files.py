"""Text files under a folder that globs pick, read whole — where the agent's memory is
(gateway/report/memory_state.py) or where a deletion reaches (deletion_scope.py).

What a caller may rely on: files over `MAX_FILE_BYTES`, binary files and links are listed in
`not_read` with the reason, never skipped in silence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from adapters.state_folder import shown_name

MAX_FILE_BYTES = 8 * 1024 * 1024


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
                if path.stat().st_size > MAX_FILE_BYTES:
                    found.not_read.append(f"{where} (over {MAX_FILE_BYTES // 2**20} MiB)")
                    continue
                data = path.read_bytes()
            except OSError as exc:
                found.not_read.append(f"{where} (can't be read: {exc.strerror or exc})")
                continue
            if b"\0" in data[:4096]:
                found.not_read.append(f"{where} (not text)")
                continue
            found.texts[where] = data.decode("utf-8", errors="replace")
    return found
