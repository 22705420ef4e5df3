"""A never-told reading that knows when it is unsure.

The retry rule turns on one reading of the agent's first reply: does it claim it was never
told (then the persona nudges it to search its memory and counts the next answer ×0.5), or
does it answer? The rule-based detector (`never_told.py`) is right on plain replies, but on
a reply that holds a claim *and* something that may be the value — "It's Dr Okafor, though you
never gave me the number", "I don't have her birthday — only your mum's, 3 May" — only the
meaning decides, and rounds of phrase rules learnt their tuning sets' words, not that meaning
(held-out false positives of 10–20 % on such replies; docs/grading.md). So the detector's
reading is **sure** only where no such competitor is there:

- no claim cue at all: sure, an answer (or no claim);
- a claim, and nothing outside it that could be the value — no words of its own before the
  claim, no figure, name, month or quote anywhere outside it (a figure only where the question
  may ask for one, a name only where it may ask for more than a count), no guess, nothing after
  "apart from": sure, a claim;
- anything else: **unsure**, with the detector's best guess. The scripted persona nudges an
  unsure reply too and keeps both tries' grades; where they differ, the question is
  unresolved (its grade's range spans both) until a judge reads the claim.

A judge's reading (`Judge.never_told`) is always sure when it gives one: it reads the meaning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from persona.grading.cues import cues
from persona.grading.forgetting import admits_forgetting
from persona.grading.never_told import (
    MARKDOWN,
    NAMED,
    ONE,
    Spans,
    claim_spans,
    outside_claims,
    plain_word,
    says_never_told,
)
from persona.grading.never_told_phrasings import Phrasings
from persona.morphology import parses
from persona.numerals import digits_for_words
from persona.terms import key_terms, terms_match


@dataclass(frozen=True)
class NeverToldReading:
    """`claim`: whether the reply claims it was never told what was asked and gives no value
    for it; None when there is no reading (a judge's unusable output; `reason` says why).
    `certain` False: `claim` is the detector's best guess — the reply holds both a claim and
    what may be the value."""

    claim: bool | None
    reason: str
    certain: bool = True


_DIGIT = re.compile(r"\d")
_QUOTE = re.compile(r"[\"“”«»„]")


def read_never_told(answer: str, question: str = "") -> NeverToldReading:
    """The offline detector's reading of `answer` to `question`, sure or not (see the module)."""
    if len(answer) > _CACHED_CHARS:
        return _read(answer, question)
    return _read_cached(answer, question)  # a grade reads one answer several times over


_CACHED_CHARS = 1 << 14  # with 4,096 entries: at most 64 MiB kept


@lru_cache(maxsize=4096)
def _read_cached(answer: str, question: str) -> NeverToldReading:
    return _read(answer, question)


def _read(answer: str, question: str) -> NeverToldReading:
    if admitted := admits_forgetting(answer):  # told, and forgotten: no claim it was never told
        return NeverToldReading(False, f"admits forgetting ({admitted.strip()!r}), not that it was never told")
    spans = claim_spans(answer, question)
    guess = says_never_told(answer, question, spans)
    if not spans:
        return NeverToldReading(guess, "no never-told claim in it")
    if not guess:
        return NeverToldReading(False, "a never-told claim beside what reads as the answer", certain=False)
    competitor = _competitor(answer, question, spans)
    if competitor:
        return NeverToldReading(True, f"a never-told claim, and beside it {competitor}", certain=False)
    return NeverToldReading(True, "a never-told claim, and nothing else that could be the value")


def _competitor(answer: str, question: str, spans: list[Spans]) -> str:
    """What outside the claims could be the value asked for, in words; "" for nothing."""
    asked = key_terms(question)
    months = cues().month_words
    for lang, text, claims in spans:
        # the claim's own clause holds its object («Возраст Наташи мне неизвестен», "Your
        # sister's birthday I don't have"); words of an earlier clause may be the answer
        first = min(start for start, _ in claims)
        clause = max((m.end() for m in _CLAUSE_BREAK.finditer(text, 0, first)), default=0)
        own = _own_words(text[:clause], asked, lang)
        if own or _DIGIT.search(digits_for_words(text[:first])):
            return f"words of its own before the claim ({' '.join(own[:3]) or 'a figure'})"
        outside = MARKDOWN.sub(" ", outside_claims(text, claims))
        # a question of one kind ("how many", "who") is answered by a value of that kind only: a
        # figure beside a claim answers no "who", a name no "how many"
        kinds = {kind for kind, words in lang.asks_for.items() if words.search(question)}
        figures = not kinds or bool(kinds & {"count", "time", "place"})
        names = not kinds or kinds != {"count"}
        if figures and _DIGIT.search(digits_for_words(ONE.sub(" ", outside))):
            return "a figure"
        if names and (month := next((w for w in re.findall(r"\w+", outside.lower()) if w in months), None)):
            return f"a month ({month})"
        if names and (named := next((m for m in NAMED.finditer(outside) if not _other_kind(m, kinds)), None)):
            return f"a name ({named.group(0).strip()})"
        if (besides := lang.exception.search(outside)) and (own := _own_words(outside[besides.end() :], asked, lang)):
            return f"an exception ({besides.group(0)} {own[0]})"
        for part in _CLAUSE_BREAK.split(outside):
            # "Kazan, I'd guess.", «Мисо?», "— A positive?": a guess, said or asked, is an answer
            guessed = lang.guess.search(part) or (
                part.rstrip().endswith("?") and not lang.asks_back.search(part) and not lang.request.search(part[:-1])
            )
            if guessed and (own := _own_words(part, asked, lang, advice=True)):
                return f"a guess ({' '.join(own[:3])})"
            # a name opening a later sentence ("You never told me. Kazan, maybe.")
            if names and (opening := _OPENING.match(part)) and _own_words(opening.group(1), asked, lang, advice=True):
                return f"a name ({opening.group(1)})"
    if _QUOTE.search(answer):
        return "a quote"
    return ""


def _other_kind(name: re.Match[str], kinds: set[str]) -> bool:
    """A Russian place's name (pymorphy3's Geox: «в Пскове», «из Дзержинска») beside a claim to
    a question asking who or when: no value of the kind asked, so no competitor."""
    if not kinds or "place" in kinds:
        return False
    readings = parses(name.group(0).strip())
    return bool(readings) and all("Geox" in p.grammemes for p in readings)


def _own_words(text: str, asked: list[str], lang: Phrasings, advice: bool = False) -> list[str]:
    """The words of `text` that could name a value: none of the question's, of a claim's, of the
    words that name no value (`no_value`, `value_words`) — nor of advice, if `advice`."""
    return [
        w
        for w in key_terms(MARKDOWN.sub(" ", _CONTRACTION.sub("", text)))
        if not plain_word(w, lang)
        and not any(p.fullmatch(w) for p in lang.value_words.values())
        and not lang.no_value.fullmatch(w)
        and not (advice and (lang.advice.fullmatch(w) or lang.request.fullmatch(w)))
        and not any(terms_match(w, a) for a in asked)
    ]


_OPENING = re.compile(r"\s*(?!I\b)([A-ZА-ЯЁ][\w-]+)")  # a sentence's first word, capitalised
_CLAUSE_BREAK = re.compile(r"[.!?…:;,(—–]\s|\n|\s-\s")
_CONTRACTION = re.compile(r"(?<=\w)(?:'(?:ve|ll|re|d|s|m)|n't)(?!\w)", re.IGNORECASE)  # "I've", "can't"
