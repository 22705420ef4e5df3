"""The distractor pool's format: irrelevant sessions for the scale ladder.

A pool is a folder with `pool.json5` (`language`, default "en"; `screen_against`: evidence
benchmark folders, relative to the pool) and one facts file per session (`# Topic`,
`## N. …`, `N.M …`). A distractor must share no entity (a capitalised name), number or date
with any evidence benchmark — otherwise it could hand an agent a wrong answer or a right one
by accident, and the ladder would no longer keep the evidence fixed (the screening is in
`persona.benchmark.screening`). A benchmark may only use a pool in its own language.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5

from persona.benchmark.errors import BenchmarkError, BenchmarkErrors, SourceLocation

POOL_FILE = "pool.json5"


def is_pool(folder: Path) -> bool:
    return (folder / POOL_FILE).is_file()


@dataclass(frozen=True)
class Pool:
    root: Path
    sessions: dict[str, list[tuple[int, str]]]  # file → (line, fact text)
    evidence: tuple[str, ...]
    titles: dict[str, str] = field(default_factory=dict)  # file → its `# ` heading
    language: str = "en"


def pool_settings(folder: Path) -> dict[str, Any]:
    """The pool's `pool.json5`; `BenchmarkErrors` (file, line) when it can't be read or is no object."""
    config_path = folder / POOL_FILE
    try:
        config = json5.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchmarkErrors(
            [BenchmarkError(SourceLocation(config_path, 1), f"can't read the pool settings: {exc}")]
        ) from None
    if not isinstance(config, dict):
        raise BenchmarkErrors(
            [BenchmarkError(SourceLocation(config_path, 1), "the pool settings must be an object `{...}`")]
        )
    return config


def pool_language(folder: Path) -> str:
    """The language the pool's sessions are written in (`language`, default "en", as a benchmark's)."""
    return str(pool_settings(folder).get("language", "en"))
