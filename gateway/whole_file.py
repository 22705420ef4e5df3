"""Writing a file whole or not at all: a reader — a browser on report.html, another viewer on
an index — never sees half of it. The text goes to a partial file beside it (named by the
writing process, so two writers never share one), which then replaces the file in one
rename; whatever happens, the partial file does not stay behind. Raises `OSError` as the
write does (a full disk): the file is then as it was."""

from __future__ import annotations

import os
from pathlib import Path


def write_whole(path: Path, text: str) -> None:
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
