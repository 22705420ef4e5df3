"""What an agent's reply quotes: the user's own words (or tool output), not a claim of the
agent's — so a quoted «не помню» is no never-told claim — unless the quote is the value itself
("it's "HomeBase5G"", «называется «Пышечная»»). Used by the never-told and stall readings."""

from __future__ import annotations

import re

from persona.grading.never_told_phrasings import phrasings

_QUOTED = re.compile(r"«[^»]*»|\"[^\"\n]*\"|“[^”]*”|„[^“]*“")


def unquoted(answer: str) -> str:
    """The answer without the words it quotes (the user's own, not a claim of the agent's) —
    but a quote given as the value ("it's "HomeBase5G"", «есть «Миша — ортодонт»») stands as a
    name the reply answers with."""
    answer = answer.replace("’", "'")
    return _QUOTED.sub(lambda m: f" {_QUOTED_VALUE} " if _quotes_value(m) else " ", answer)


def _quotes_value(m: re.Match[str]) -> bool:
    """A quote given as the value: after "it's", «есть», its words a name or a code ("HomeBase5G",
    «Пышечная»), not a description ("the guy in 4B") or tool output ("0 matches")."""
    inside = m.group(0)[1:-1].strip()
    return (
        bool(_VALUE_BEFORE.search(m.string, 0, m.start()))
        and inside[:1].isupper()
        and not any(lang.claims.search(inside) for lang in phrasings())
    )


_QUOTED_VALUE = "Quoted"  # a capitalised word: what the rules read as a name
_VALUE_BEFORE = re.compile(
    r"(?<!\w)(?:it's|it is|is|was|called|named|just|это|зовут|называется|называлась|есть)\s*$",
    re.IGNORECASE,
)
