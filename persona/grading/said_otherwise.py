"""A missing value that may be there in other words: another prefix or a diminutive, a
look-alike in a list item's place, a weekday for a date. These never fail an answer surely —
they are doubts (`exact._doubt`), so a judge reads them or the question stays unresolved."""

from __future__ import annotations

import re

from persona.benchmark.model import Question
from persona.grading.cues import cues
from persona.languages import grading_words
from persona.morphology import parses
from persona.terms import UNIT_WORDS, extract_quantities, key_terms, look_alike, term_found

TITLES = frozenset(grading_words("titles"))  # "Haddad." for "Dr Haddad"
_DATE = re.compile(r"(?<!\d)\d{1,2}\s+([^\W\d_]+)")
_NAMED = re.compile(r"(?<![\w-])[A-ZА-ЯЁ][a-zа-яё]+")


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
    months = cues().month_words
    weekdays = {w for w in cues().short_forms.values() if w not in months}
    said = set(re.findall(r"[^\W\d_]+", answer.lower()))
    named = sorted(d for d in {p.lemma for w in said for p in parses(w)[:1]} | said if d in weekdays)
    if not named:
        return None
    for item in missing:
        if (m := _DATE.search(item)) and m.group(1).lower() in months:
            return f"names {named[0]!r} where the date {item!r} is missing (which date, takes a calendar)"
    return None


def words_without_figures(items: list[str], answer: str) -> str | None:
    """ "Tuesday." for "Tuesday at 9:30": every word of an item there, its figures missing and
    no other figure of their kind given — part of the value (a half, in a two-part answer), not
    a wrong one."""
    said = key_terms(answer)
    given = extract_quantities(answer)
    for item in items:
        terms = [t for t in key_terms(item) if t not in UNIT_WORDS and t not in TITLES]
        figures = extract_quantities(item)
        if terms and figures and not given and all(any(term_found(t, a) for a in said) for t in terms):
            return f"the words of {item!r} without its figures"
    return None


_YEAR = re.compile(r"(?<!\d)(?:19|20)(\d{2})(?!\d)")


def short_year(items: list[str], answer: str) -> str | None:
    """«в двенадцатом году», "back in '12" for 2012: a year by its last two figures."""
    for item in items:
        for m in _YEAR.finditer(item):
            short = m.group(1)
            if re.search(rf"(?:'|’|\b){int(short)}(?:-?(?:м|й|th))?\s*(?:год\w*|year)?\b", answer) and (
                "'" in answer or "’" in answer or re.search(r"год|year", answer, re.IGNORECASE)
            ):
                return f"{m.group(0)!r} said by its last two figures?"
    return None


def part_of_a_name(items: list[str], answer: str) -> str | None:
    """«Камино.» for «Камино де Сантьяго»: the answer says only the first word of a many-word
    name — its common short form, or another place of that name."""
    said = [a for a in key_terms(answer) if a not in TITLES]
    for item in items:
        words = item.split()
        terms = [t for t in key_terms(item) if t not in TITLES]
        if len(words) < 2 or not words[0][:1].isupper() or not said or not terms or extract_quantities(item):
            continue
        # its first word, as names are shortened («Камино»), alone or beside other words («Путь
        # святого Иакова — Камино»), not run on into another name («Камино-Реаль», «Камино Реаль»);
        # not the last word («Новгород» is another town)
        if all(term_found(terms[0], a) for a in said) or _first_word_alone(words[0], answer):
            return f"part of the name {item!r}"
    return None



def _first_word_alone(first: str, answer: str) -> bool:
    """The name's first word in the answer, not run on into another capitalised word."""
    for m in re.finditer(rf"(?<![\w-]){re.escape(first[:-1])}\w?(?![\w-])", answer, re.IGNORECASE):
        if not re.match(r"\s+[A-ZА-ЯЁ]", answer[m.end() :]):
            return True
    return False


def in_the_facts_words(question: Question, items: list[str], answer: str) -> str | None:
    """ "You eat fish these days, but no meat." for "pescatarian" (the fact: "I am pescatarian:
    since June I eat fish again"): a one-word value missing, but two words or more that the
    fact holding it says beside it — neither the question's nor the value's — in the answer:
    the value told as the fact describes it, maybe. A name, a figure or a code has no such
    paraphrase; a value of several words is matched word by word already."""
    if len(items) != 1 or not re.fullmatch(r"[a-zа-яё-]+", items[0].strip()) or not question.evidence:
        return None  # one word, no name or figure: "pescatarian", «ветеринар»
    evidence = " ".join(question.evidence)
    # the question's words, the value's and the fact's names (its people: "Marcus teaches …")
    own = {*key_terms(question.text), *key_terms(items[0]), *key_terms(" ".join(_NAMED.findall(evidence)))}
    beside = {t for t in key_terms(evidence) if len(t) >= 3 and not any(term_found(o, t) or term_found(t, o) for o in own)}
    said = key_terms(answer)
    old = set(key_terms(" ".join(question.superseded))) - set(key_terms(evidence))
    if any(term_found(t, a) for t in old for a in said):
        return None  # "You're vegetarian — you mentioned fish once": the old value, given
    shared = sorted(t for t in beside if any(term_found(t, a) for a in said))
    if len(shared) >= 2:
        return f"says what the fact says beside the value ({', '.join(shared[:3])}): the value in other words?"
    return None


def looks_like(items: list[str], answer: str) -> str | None:
    """An expected English word found only as a look-alike ("Dr Haddow", "Priya Ramanathan",
    "Kestral"): another name or a slip — a doubt."""
    said = key_terms(answer)
    for item in items:
        for t in (t for t in key_terms(item) if t.isascii() and len(t) >= 4):
            if t in said:
                continue
            if alike := next((a for a in said if look_alike(t, a)), None):
                return f"{alike!r} only looks like {t!r}: another name, or a slip"
    return None
