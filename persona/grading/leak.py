"""Whether an answer states content the person asked the agent to forget.

A `[deleted]` question fails for many reasons (an empty reply, a wrong claim); only one of them
is the agent recalling what it was asked to forget — the one the experiment blocker
`deleted_recalled` counts. The deleted facts' own names and numbers decide it, in any form an
answer may give them: lowercase ("stolbukhin"), inflected (a name's first six letters), a
number in words ("eighty-eight").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from persona.benchmark.model import Question
from persona.benchmark.screening import marks
from persona.terms import extract_identifiers, extract_quantities


def states_deleted(deleted_texts: Iterable[str], answer: str) -> list[str]:
    """The names and numbers of the deleted facts that `answer` states (empty: none)."""
    said = [w.replace("ё", "е") for w in re.findall(r"[^\W\d_][\w'-]*", answer.lower()) if len(w) >= 3]
    # a name's first six letters, or a shorter name with an ending («о Вадиме» for "Vadim")
    words = {w[:6] for w in said} | {w[:n] for w in said for n in range(3, 6) if len(w) - n <= 2}
    numbers = {str(q.value) for q in extract_quantities(answer)} | extract_identifiers(answer)
    found: list[str] = []
    for text in deleted_texts:
        m = marks(text)
        found += sorted(e for e in m.entities if e in words)
        found += sorted(n for n in m.numbers if n in numbers)
    # a whole number as it is written: "4817", not the value's "4817.0" (issue 62: the report showed it)
    return list(dict.fromkeys(n.removesuffix(".0") if _WHOLE.fullmatch(n) else n for n in found))


_WHOLE = re.compile(r"\d+\.0")


def deleted_stated(question: Question, answer: str) -> list[str]:
    """The names and numbers of what was deleted before a `[deleted]` question
    (`question.superseded`) that `answer` states — leaving out the question's own words, what a
    live fact (`question.known`) holds too ("London") and numbers of one or two digits (a
    date's day is no leak of "12 years")."""
    stated = [
        w
        for w in states_deleted(question.superseded, answer)
        if not (re.fullmatch(r"[\d.]+", w) and len(re.sub(r"\D", "", w.removesuffix(".0"))) < 3)
    ]
    # a short number is a leak with its unit: "you split up three years ago" restates "broke up
    # three years ago", while a date's "12" is no leak of "12 years"
    said = [q for q in extract_quantities(answer) if q.unit]
    stated += [
        f"{q.value:g} {q.unit}"
        for text in question.superseded
        for q in extract_quantities(text)
        if q.unit and isinstance(q.value, float) and any(q.matches(s) for s in said)
    ]
    if not stated:  # most answers: the live facts need no reading
        return []
    shared = set(states_deleted(question.known, answer)) | set(
        states_deleted(question.superseded, question.text)
    )
    return [w for w in stated if w not in shared]
