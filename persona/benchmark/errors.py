"""Errors raised while loading a benchmark.

Every error names the file and line it is about and what was expected there, so that an
author can fix a benchmark without reading our code. `BenchmarkError` also inherits
`ValueError`: callers that only know builtins still catch it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SourceLocation:
    """A place in a benchmark file; `line` is 1-based, 0 when the whole file is meant."""

    path: Path
    line: int = 0

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else str(self.path)


class BenchmarkError(ValueError):
    """One problem in a benchmark, located by file and line."""

    def __init__(self, location: SourceLocation, message: str) -> None:
        super().__init__(f"{location}: {message}")
        self.location = location
        self.message = message


class BenchmarkErrors(ValueError):
    """All problems found in one benchmark; validation reports them together, not one by one."""

    def __init__(self, errors: list[BenchmarkError]) -> None:
        super().__init__("\n".join(str(e) for e in errors))
        self.errors = errors
