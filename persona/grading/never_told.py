"""Detect an agent saying it was never told (or doesn't know), in every language we have.

Used twice: the scripted persona's retry rule (a "you never told me" earns one nudge to
search memory) and abstention questions (where saying so is the right answer). The LLM
persona decides the retry itself (`log_evaluation`'s `second_attempt`), as in
MarathonMemBench. False negatives cost a retry; false positives hand out a free nudge.

A reply says so when one of the language's `never_told` phrasings appears in it — words the
agent quotes («…», "…") left out — and the reply doesn't go on to answer anyway ("You haven't
told your sister yet, but the party is on Friday"): see `answer_after` in
`persona/languages/*.json5`. Measured on a labelled corpus of agent replies
(tests/persona/grading/corpus/never_told.json5; figures in docs/persona.md). Every language's
phrasings apply to every reply: an agent may answer a Russian persona in English.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from persona.languages import known_languages, language_table

_QUOTED = re.compile(r"«[^»]*»|\"[^\"\n]*\"|“[^”]*”|„[^“]*“")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class _Phrasings:
    claims: re.Pattern[str]
    connector: re.Pattern[str]
    request: re.Pattern[str]
    stall: re.Pattern[str]


@cache
def _phrasings() -> tuple[_Phrasings, ...]:
    out = []
    for code in known_languages():
        table = language_table(code)
        claims = table.get("never_told", [])
        if not claims:
            continue
        after = table.get("answer_after", {})
        out.append(
            _Phrasings(
                claims=re.compile("|".join(f"(?:{p})" for p in claims), re.IGNORECASE),
                connector=re.compile(after.get("connector", r"(?!)"), re.IGNORECASE),
                request=re.compile(after.get("request", r"\?"), re.IGNORECASE),
                stall=re.compile("|".join(f"(?:{p})" for p in table.get("stall", [])) or r"(?!)", re.IGNORECASE),
            )
        )
    return tuple(out)


def says_never_told(answer: str) -> bool:
    """True when `answer` claims the agent was never told, doesn't know or found nothing —
    and does not then give an answer all the same."""
    text = _unquoted(answer)
    for lang in _phrasings():
        for claim in lang.claims.finditer(text):
            if not _answers_after(text[claim.end() :], lang):
                return True
    return False


def claims_never_told(answer: str) -> bool:
    """True when `answer` says anywhere that the agent was never told — even if it then adds
    what it does know ("You never mentioned a food allergy; I only know of the amoxicillin
    one"). For abstention questions, where that claim is the answer."""
    text = _unquoted(answer)
    return any(lang.claims.search(text) for lang in _phrasings())


# a stall is short: a promise, not an answer with a promise at its end
_STALL_WORDS = 40


def is_stall(reply: str) -> bool:
    """True when `reply` only promises to look ("Let me check my notes — one moment!",
    «Секунду, проверю») and gives nothing yet: no number, no claim of not knowing, a few words.
    Such a reply is not graded: the persona says go ahead once and grades what follows."""
    text = _unquoted(reply)
    if len(_WORD.findall(text)) > _STALL_WORDS or _DIGIT.search(text) or says_never_told(reply):
        return False
    return any(lang.stall.search(text) for lang in _phrasings())


def _unquoted(answer: str) -> str:
    """The answer without the words it quotes (the user's own, not a claim of the agent's)."""
    return _QUOTED.sub(" ", answer.replace("’", "'"))


def _answers_after(rest: str, lang: _Phrasings) -> bool:
    """Whether the text after a claim gives an answer: a sentence that is no question or
    request and holds a number, or goes on after a connector with words of its own."""
    for sentence in _SENTENCE_END.split(rest):
        if not sentence.strip() or sentence.rstrip().endswith("?") or lang.request.search(sentence):
            continue
        if _DIGIT.search(sentence):
            return True
        joined = lang.connector.search(sentence)
        if joined:
            tail = sentence[joined.end() :]
            if len(_WORD.findall(tail)) >= 2 and not lang.claims.search(tail):
                return True
    return False
