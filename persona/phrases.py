"""The few fixed phrases the persona wraps around verbatim benchmark text, per language.

They are data (`phrases.json5` beside this module): the scripted driver's fact batches,
updates and nudges, and the introduction of a scale ladder's distractor sessions. What a
caller may rely on: `phrases_for` always returns a full table (an unknown language falls
back to English) and never changes between calls. A leaf module: it imports nothing of
marathonbench.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import json5

PHRASES = Path(__file__).parent / "phrases.json5"


@cache
def _phrases() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = json5.loads(PHRASES.read_text(encoding="utf-8"))
    return data


def phrases_for(language: str) -> dict[str, str]:
    table = _phrases()
    return table.get(language.split("-")[0].lower(), table["en"])
