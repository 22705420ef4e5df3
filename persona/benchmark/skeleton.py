"""`marathon new DIR`: a small valid benchmark to start from, in the persona's language.

The skeletons are data (`skeletons/<language>/`): two chapters, a profile and one facts file,
an update, a new session and four tagged questions — every part of the format a first
benchmark needs. What a caller may rely on: the folder written passes `marathon check`; an
existing non-empty folder is never written into.
"""

from __future__ import annotations

import shutil
from pathlib import Path

SKELETONS = Path(__file__).parent / "skeletons"


def skeleton_languages() -> list[str]:
    return sorted(p.name for p in SKELETONS.iterdir() if p.is_dir())


def write_skeleton(folder: Path, language: str) -> list[Path]:
    """Write the skeleton of `language` into `folder`; raises ValueError for a language with
    no skeleton or a folder that already holds files."""
    source = SKELETONS / language
    if not source.is_dir():
        raise ValueError(f"no skeleton for language {language!r}; there are: {', '.join(skeleton_languages())}")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise ValueError(f"{folder} already exists and is not an empty folder; pick a new one")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(source.iterdir()):
        target = folder / path.name
        shutil.copyfile(path, target)
        written.append(target)
    config = folder / "benchmark.json"
    config.write_text(config.read_text(encoding="utf-8").replace('"NAME"', f'"{folder.name}"'), encoding="utf-8")
    return written
