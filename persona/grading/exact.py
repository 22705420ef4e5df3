"""Grading an answer against the expected one: the `Grader` protocol and the exact grader.

Scores are 0–10 (MarathonMemBench): a single expected value scores 0 or 10, a list scores in
proportion to the items found. The exact grader works offline and is deliberately strict:
the specific value must be in the answer (numbers compared as numbers, units checked when
both sides name one; text by normalised key terms). It never raises on odd text and always
says why it gave a score; the LLM judge (a later grader) re-grades what it cannot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from persona.benchmark.model import Question
from persona.grading.never_told import says_never_told
from persona.terms import (
    IDENTIFIER,
    UNIT_WORDS,
    Quantity,
    extract_identifiers,
    extract_quantities,
    key_terms,
    split_items,
    terms_match,
)

# A binary outcome (rescore agreement, Pass@B, A/B wins) counts a score ≥ 5 as correct: a
# right answer after the search-memory nudge (×0.5) or a list mostly right.
PASS_SCORE = 5.0


@dataclass(frozen=True)
class Grade:
    score: float
    reason: str
    never_told: bool = False

    @property
    def correct(self) -> bool:
        return self.score >= 10


class Grader(Protocol):
    """Question, expected answer, agent's answer → score with a reason. Must never raise."""

    def grade(self, question: Question, expected: str, answer: str) -> Grade: ...


# -- the grader --------------------------------------------------------------------------


class ExactGrader:
    """Offline grading by numbers and key terms; strict, explainable, never raises."""

    def grade(self, question: Question, expected: str, answer: str) -> Grade:
        try:
            return self._grade(question, expected, answer)
        except Exception as exc:  # odd text must never crash a marathon
            return Grade(0.0, f"exact grader could not read the answer ({type(exc).__name__}); scored 0")

    def _grade(self, question: Question, expected: str, answer: str) -> Grade:
        never = says_never_told(answer)
        if question.abstain:
            if never:
                return Grade(10.0, "correctly said it was never told", never_told=True)
            return Grade(0.0, "should have said it was never told; answered instead", never_told=False)
        if not answer.strip():
            return Grade(0.0, "empty answer", never_told=never)
        items = split_items(expected)
        answer_qty = extract_quantities(answer)
        answer_terms = key_terms(answer)
        answer_ids = extract_identifiers(answer)
        found: list[str] = []
        missing: list[str] = []
        for item in items:
            (found if _item_found(item, answer_qty, answer_terms, answer_ids) else missing).append(item)
        score = round(10.0 * len(found) / len(items), 1)
        if not missing:
            reason = "all expected found" if len(items) > 1 else f"found {items[0]!r}"
        elif not found:
            reason = f"missing {'; '.join(repr(m) for m in missing)}"
            if never:
                reason += " (agent said it was never told)"
        else:
            reason = f"{len(found)} of {len(items)} items; missing {'; '.join(repr(m) for m in missing)}"
        return Grade(score, reason, never_told=never and score < 10)


def _item_found(item: str, answer_qty: list[Quantity], answer_terms: list[str], answer_ids: set[str]) -> bool:
    wanted_ids = extract_identifiers(item)
    if not wanted_ids <= answer_ids:
        return False
    if wanted_ids:
        item = IDENTIFIER.sub(
            lambda m: "" if m.group(0).replace("-", "").upper() in wanted_ids else m.group(0), item
        )
    wanted_qty = extract_quantities(item)
    if not all(any(w.matches(a) for a in answer_qty) for w in wanted_qty):
        return False
    terms = [t for t in key_terms(item) if t not in UNIT_WORDS]
    if not terms:
        return bool(wanted_qty or wanted_ids)
    hits = sum(1 for t in terms if any(terms_match(t, a) for a in answer_terms))
    needed = math.ceil(len(terms) / 2) if wanted_qty else math.ceil(len(terms) * 2 / 3)
    return hits >= needed


def contains_expected(expected: str, text: str) -> bool:
    """Does `text` hold the whole expected answer, by the exact grader's rules? Used to tell
    whether evidence was still in an agent's context when it was asked."""
    probe = Question("evidence", "", expected, (), "", 0)
    return ExactGrader().grade(probe, expected, text).correct
