"""Grading an answer against the expected one: the `Grader` protocol and the exact grader.

Scores are 0–10 (MarathonMemBench): a single expected value scores 0 or 10, a list scores in
proportion to the items found. The exact grader works offline and is deliberately strict:
the specific value must be in the answer (numbers compared as numbers, units checked when
both sides name one; text by normalised key terms). It never raises on odd text and always
says why it gave a score; the LLM judge (a later grader) re-grades what it cannot.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from persona.benchmark.model import DELETED_MARKERS, Question
from persona.grading.beside import (
    CLAUSE,
    list_numbers_out,
    other_measure,
    other_period,
)
from persona.grading.codes import (
    DIGIT_GROUPS,
    acronym_inside_word,
)
from persona.grading.cues import cues as _cues
from persona.grading.doubt import PART_OF_NAME, doubt, first_speaking
from persona.grading.find import item_found
from persona.grading.grade import Grade
from persona.grading.name_parts import another_name_beside, names_by_part, place_written_out
from persona.grading.never_told_reading import NeverToldReading, read_never_told
from persona.grading.rules import rule
from persona.grading.tagged import grade_abstain, grade_deleted
from persona.grading.variants import (
    days_as_expected,
    in_expected_forms,
    in_expected_spelling,
)
from persona.outcome import is_full
from persona.terms import (
    extract_identifiers,
    extract_quantities,
    key_terms,
    split_items,
)


class Grader(Protocol):
    """Question, expected answer, agent's answer → score with a reason. Must never raise."""

    def grade(self, question: Question, expected: str, answer: str) -> Grade: ...


# -- the grader --------------------------------------------------------------------------


class ExactGrader:
    """Offline grading by numbers and key terms; strict, explainable, never raises.
    `superseded_rule`: an answer naming the expected value only as an old one scores 0 (off
    for evidence checks, which ask only whether a value is present in a text)."""

    def __init__(self, superseded_rule: bool = True) -> None:
        self.superseded_rule = superseded_rule

    def grade(self, question: Question, expected: str, answer: str) -> Grade:
        try:
            reading = read_never_told(answer, question.text)
            grade = self._grade(question, expected, answer, reading)
        except Exception as exc:  # odd text must never crash a marathon
            return Grade(
                0.0,
                f"exact grader could not read the answer ({type(exc).__name__}); scored 0",
                decided_by=_UNREADABLE,
            )
        if question.abstain or question.deleted or grade.correct:
            return grade  # the retry rule reads no claim there
        if grade.score > 0 and reading.claim:  # part of the answer is there: no sure claim
            return replace(
                grade,
                never_told_certain=False,
                never_told_reason="a never-told claim beside part of the answer",
            )
        return replace(grade, never_told_certain=reading.certain, never_told_reason=reading.reason)

    def _grade(self, question: Question, expected: str, answer: str, reading: NeverToldReading) -> Grade:
        rewrites: list[str] = []  # the normalise rules that changed the answer, in order
        graded = self._graded(question, expected, answer, reading, rewrites)
        return replace(graded, rewrites=tuple(rewrites)) if rewrites else graded

    def _graded(
        self, question: Question, expected: str, answer: str, reading: NeverToldReading, rewrites: list[str]
    ) -> Grade:
        def rewritten(rule_id: str, before: str, after: str) -> str:
            if after != before:
                rewrites.append(rule_id)
            return after

        never = bool(reading.claim)
        answer = rewritten(_LIST_NUMBERS, answer, list_numbers_out(answer))
        if question.abstain:
            return grade_abstain(question, answer, never)
        if question.deleted:
            return grade_deleted(question, answer, reading)
        if not answer.strip():
            return Grade(0.0, "empty answer", never_told=never, decided_by=_EMPTY)
        items = split_items(expected)
        answer = rewritten(_FORMS, answer, in_expected_forms(expected, answer))
        answer = rewritten(_SPELLING, answer, in_expected_spelling(expected, answer))
        answer = rewritten(_DAYS, answer, days_as_expected(expected, answer, question.superseded))
        # «в Нижнем»: the place as its people name it
        answer = rewritten(_PLACE, answer, place_written_out(items, answer))
        answer_qty = extract_quantities(answer)
        answer_terms = key_terms(answer)
        answer_ids = extract_identifiers(answer) | {
            re.sub(r"\D", "", m.group(0)) for m in DIGIT_GROUPS.finditer(answer)
        }
        found: list[str] = []
        missing: list[str] = []
        partial: list[str] = []  # found by part of its name only: never certain
        for item in items:
            whole = item_found(item, answer_qty, answer_terms, answer_ids) and not acronym_inside_word(
                item, answer
            )
            short = not whole and names_by_part(question.text, item, answer, items)
            if short:
                partial.append(item)
            (found if whole or short else missing).append(item)
        if found and (
            wrong := first_speaking(
                (_OTHER_PERIOD, lambda: other_period(question, answer)),
                (_OTHER_MEASURE, lambda: other_measure(question, answer)),
                (
                    _ANOTHER_NAME,
                    lambda: next(
                        (w for i in found if (w := another_name_beside(question.text, i, answer, items))),
                        None,
                    ),
                ),
            )
        ):
            return Grade(0.0, wrong[1], never_told=never, decided_by=wrong[0])
        if (
            self.superseded_rule
            and len(items) == 1
            and found
            and _given_as_old(items[0], answer, question.text)
        ):
            return Grade(
                0.0,
                f"gives {items[0]!r} as an old value, another as the current one",
                never_told=never,
                decided_by=_GIVEN_AS_OLD,
            )
        score = round(10.0 * len(found) / len(items), 1)
        unsure = doubt(question, items, found, answer, never) or (
            (PART_OF_NAME, f"only part of the name {partial[0]!r}") if partial else None
        )
        if unsure:
            return Grade(
                score,
                f"not sure: {unsure[1]}",
                never_told=never and not is_full(score),
                certain=False,
                decided_by=unsure[0],
            )
        if not missing:
            reason, decided = ("all expected found" if len(items) > 1 else f"found {items[0]!r}"), _FOUND
        elif not found:
            reason, decided = f"missing {'; '.join(repr(m) for m in missing)}", _MISSING
            if never:
                reason += " (agent said it was never told)"
        else:
            reason = f"{len(found)} of {len(items)} items; missing {'; '.join(repr(m) for m in missing)}"
            decided = _PARTLY
        return Grade(score, reason, never_told=never and not is_full(score), decided_by=decided)


# -- the exact grader's rules, by name (persona/grading/rules.py) ------------------------------

_UNREADABLE = rule("verdict.unreadable", "verdict", "the grader failed on the text: 0, said so")
_LIST_NUMBERS = rule(
    "normalise.list_numbers", "normalise", 'a numbered list\'s markers taken out ("1. Anna")'
)
_FORMS = rule(
    "normalise.expected_forms", "normalise", "words in another form of the expected one's (cases, plurals)"
)
_SPELLING = rule(
    "normalise.expected_spelling", "normalise", "a value spelt as the expected one (scripts, romanisation)"
)
_DAYS = rule("normalise.days_as_expected", "normalise", "a weekday or relative day as the expected date")
_PLACE = rule(
    "normalise.place_written_out", "normalise", "a place as its people name it («в Нижнем»)", ("ru",)
)
_EMPTY = rule("verdict.empty", "verdict", "no answer: 0")
_OTHER_PERIOD = rule("verdict.other_period", "verdict", "the value found, of another period than asked: 0")
_OTHER_MEASURE = rule("verdict.other_measure", "verdict", "the value found, of another measure than asked: 0")
_ANOTHER_NAME = rule(
    "verdict.another_name_beside", "verdict", "another name given as the answer beside it: 0"
)
_GIVEN_AS_OLD = rule(
    "verdict.given_as_old", "verdict", "the value given as an old one, another as current: 0"
)
_FOUND = rule("verdict.found", "verdict", "every expected item found, nothing in doubt: 10")
_MISSING = rule("verdict.missing", "verdict", "no expected item found, nothing that may be it: 0")
_PARTLY = rule("verdict.partly_found", "verdict", "some items of a list found: in proportion")


def _given_as_old(item: str, answer: str, question: str) -> bool:
    """Whether the answer names the expected value only as an old one ("8150 now — it was 8320
    before") while it states something else without such a word: the superseded value given
    as current. Not for a question about the past itself ("What was it before?")."""
    cues = _cues()
    if cues.past.search(question):
        return False
    clauses = [c for c in CLAUSE.split(answer) if c and c.strip()]
    holding = [
        c for c in clauses if item_found(item, extract_quantities(c), key_terms(c), extract_identifiers(c))
    ]
    if not holding:
        wanted = extract_quantities(item)
        holding = [
            c
            for c in clauses
            if wanted and all(any(w.matches(a) for a in extract_quantities(c)) for w in wanted)
        ]
    if not holding or not all(cues.past.search(c) and not cues.current.search(c) for c in holding):
        return False
    others = [c for c in clauses if c not in holding and not cues.past.search(c)]
    wanted = extract_quantities(item)
    if wanted:  # another value of the same kind stated without a past word
        return any(not any(q.matches(w) for w in wanted) for c in others for q in extract_quantities(c))
    return any(cues.current.search(c) for c in others)  # words: something else said to be current


def with_evidence(
    question: Question,
    facts: Mapping[tuple[str, str], str],
    earlier: Mapping[tuple[str, str], list[str]] | None = None,
) -> Question:
    """`question` with `evidence` (those of the live facts' texts — by (file, fact id) — that
    hold its expected answer), `near` (the live facts of their sections), `known` (all) and
    `superseded` (the texts `earlier` gives for the facts holding it, oldest first). A
    [deleted] question gets as `superseded` the texts of the facts deleted before it: what its
    answer must not state."""
    if question.deleted:  # what was deleted before it: what the answer must not state
        gone = tuple(
            old
            for key, t in facts.items()
            if t.strip() in DELETED_MARKERS
            for old in (earlier or {}).get(key, [])
        )
        alive = tuple(t for t in facts.values() if t.strip() not in DELETED_MARKERS)
        return replace(question, superseded=gone, known=alive)
    live = {key: t for key, t in facts.items() if t.strip() not in DELETED_MARKERS}
    if question.abstain:  # what it does know, that an answer may name beside "you never told me"
        return replace(question, known=tuple(live.values()))
    if not question.expected:
        return question
    held = [key for key, t in live.items() if contains_expected(question.expected, t)]
    sections = {(file, fact_id.split(".")[0]) for file, fact_id in held}
    near = tuple(t for (file, fact_id), t in live.items() if (file, fact_id.split(".")[0]) in sections)
    history = tuple(old for key in held for old in (earlier or {}).get(key, []))
    return replace(
        question,
        evidence=tuple(live[k] for k in held),
        known=tuple(live.values()),
        near=near,
        superseded=history,
    )


@dataclass(frozen=True)
class ValueMatch:
    """Is a value in a text, by the grader's rules (numbers, names, notations)? Three-valued
    like the grader: `found` True, False, or None when the grader is not sure (an unsure match
    never decides a finding); `likely` is its best guess either way."""

    found: bool | None
    likely: bool
    reason: str


@functools.lru_cache(maxsize=1 << 14)
def value_in(text: str, expected: str) -> ValueMatch:
    """Whether `text` holds the whole of `expected` — the one primitive the grader's evidence
    checks, the diagnostic chain, the persona's claims and the traffic's evidence read a value
    in a text with. Remembered (it is pure): a report over many runs of one benchmark asks it
    the same persona message and value in every run."""
    probe = Question("evidence", "", expected, (), "", 0)
    grade = ExactGrader(superseded_rule=False).grade(probe, expected, text)
    return ValueMatch(grade.correct if grade.certain else None, grade.correct, grade.reason)


def contains_expected(expected: str, text: str) -> bool:
    """`value_in`'s best guess: does `text` hold the whole expected answer? Used to tell
    whether evidence was still in an agent's context when it was asked."""
    return value_in(text, expected).likely
