"""A reply that admits it was told and forgot — "I don't remember.", "I can't recall your
manager's name", «Не помню.», «У меня нет этой информации» — is no claim that the user never
said it (issue 61; docs/grading.md, "The retry rule's reading").

Why: the retry rule nudges a never-told claim ("I did tell you — check your memory") and counts
the nudged try at half. Read as a claim, forgetting got that nudge, and a forgotten fact became a
half-credit retry; 5 of 21 English and 4 of 21 Russian answers of a held-out corpus were such
sure false claims. What a caller may rely on: a reply that also has a word of telling or of a
note ("I don't remember you telling me", «такого не помню», "no record of it") is not read here —
that is a claim, as before. The words are data: `forgetting` in persona/languages/*.json5.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from persona.languages import known_languages, language_table


@dataclass(frozen=True)
class _Forgetting:
    admits: tuple[re.Pattern[str], ...]
    told: re.Pattern[str]


@cache
def _tables() -> tuple[_Forgetting, ...]:
    out = []
    for code in known_languages():
        table = language_table(code).get("forgetting")
        if isinstance(table, dict):
            admits = tuple(re.compile(p, re.IGNORECASE) for p in table.get("admits", []))
            out.append(_Forgetting(admits, re.compile(str(table.get("told", "(?!)")), re.IGNORECASE)))
    return tuple(out)


def admits_forgetting(reply: str) -> str:
    """The words by which `reply` admits forgetting, when that is all it says of its memory (no
    word of telling or of notes beside them); "" otherwise."""
    admitted = ""
    for table in _tables():
        if table.told.search(reply):
            return ""
        for pattern in table.admits:
            if found := pattern.search(reply):
                admitted = admitted or found.group(0)
    return admitted
