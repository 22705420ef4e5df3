"""A missing value that may be there in other words: another prefix or a diminutive, a
look-alike in a list item's place, a weekday for a date. These never fail an answer surely —
they are doubts (`exact._doubt`), so a judge reads them or the question stays unresolved."""

from __future__ import annotations

import re

from persona.grading.cues import cues
from persona.languages import grading_words
from persona.morphology import parses
from persona.terms import UNIT_WORDS, key_terms, term_found

TITLES = frozenset(grading_words("titles"))  # "Haddad." for "Dr Haddad"
_DATE = re.compile(r"(?<!\d)\d{1,2}\s+([^\W\d_]+)")


def said_as_another(missing: list[str], answer: str) -> list[str]:
    """Missing items whose head word the answer says with other words before it («кавказская
    овчарка» for «немецкая овчарка»): another value in the item's place."""
    said = key_terms(answer)
    out = []
    for item in missing:
        terms = [t for t in key_terms(item) if t not in UNIT_WORDS]
        if len(terms) >= 2 and any(term_found(terms[-1], a) for a in said):
            out.append(f"{item!r} as another {terms[-1]!r}")
    return out


def said_otherwise(items: list[str], answer: str) -> str | None:
    """Why a miss may be the value in other words: every word of an item there but one, and
    that one a Russian verb («косит флоксы» as «скашивает флоксы», «переклеить обои» as
    «поклеить обои»: an action is often said with another prefix or aspect) or a word the answer
    begins alike («ведром» as «ведёрком», «ветеринар» as «ветврач»: a diminutive, a compound;
    «ортопеду» for «ортодонту»: a look-alike)."""
    said = key_terms(answer)
    for item in items:
        terms = [t for t in key_terms(item) if t not in UNIT_WORDS and t not in TITLES]
        missing = [t for t in terms if not any(term_found(t, a) for a in said)]
        if len(missing) != 1:
            continue
        word = missing[0]
        if len(terms) > 1 and any({"VERB", "INFN"} & p.grammemes for p in parses(word)[:1]):
            return f"every word of {item!r} but the action ({word!r}), which may be said otherwise"
        alike = [a for a in said if len(word) >= 5 and len(a) >= 5 and a[:3] == word[:3] and a != word]
        if alike and parses(word):
            return f"{alike[0]!r} begins like {word!r} (a diminutive or a compound of it?)"
    return None


def weekday_for_date(missing: list[str], answer: str) -> str | None:
    """«В воскресенье, через два дня» for «22 сентября, через 2 дня»: a weekday named where a
    date is missing — which date it is takes a calendar the grader hasn't got (no year)."""
    weekdays = {w for w in cues().short_forms.values() if w not in cues().month_words}
    said = set(re.findall(r"[^\W\d_]+", answer.lower()))
    days = {lemma.lemma for w in said for lemma in parses(w)[:1]} | said
    for item in missing:
        if (m := _DATE.search(item)) and m.group(1).lower() in cues().month_words:
            named = sorted(d for d in days if d in weekdays)
            if named:
                return f"names {named[0]!r} where the date {item!r} is missing (which date, takes a calendar)"
    return None
