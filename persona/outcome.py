"""What a grade means: the one place for the retry weight and for every definition of a pass a
report may use.

A logged grade (`Evaluation.score`) is already weighted: the try after the retry rule's nudge
counts ×`RETRY_WEIGHT`. Reports read it under one of these named definitions — never a literal
of their own, so two reports can't disagree about what "correct" was:

- **full** (`is_full`): score 10 — the grader's "right", the bar a nudge is spared by;
- **pass** (`passed`): score ≥ `PASS_SCORE` — a binary outcome over grades of any try (rescore
  agreement, a fork's pass^k, judge-check's false passes): a nudged full answer (10 × 0.5) passes;
- **C(τ) rules** (`PassRule`, `is_correct`): what an experiment counts as correct —
  `first_try` (score 10 with no nudge: the A/B table's and Pass@B's default), `any_full` (fully
  right with or without the nudge), `score>=N`.
"""

from __future__ import annotations

import re
from enum import StrEnum

FULL_SCORE = 10.0
RETRY_WEIGHT = 0.5  # the try after the search-memory nudge counts this much
PASS_SCORE = 5.0  # a binary outcome's threshold: a nudged full answer still passes


class PassRule(StrEnum):
    """A named C(τ) rule; `score>=N` rules are written as such (`is_correct`)."""

    FIRST_TRY = "first_try"
    ANY_FULL = "any_full"


_SCORE_RULE = re.compile(r"^score>=(\d+(?:\.\d+)?)$")


def most(attempts: int) -> float:
    """The highest grade a question can log: 10, or 10 × the retry weight after a nudge."""
    return FULL_SCORE * (RETRY_WEIGHT if attempts > 1 else 1.0)


def weighted(grade: float, attempts: int) -> float:
    """A try's own grade as logged: ×`RETRY_WEIGHT` for the try after the nudge."""
    return grade * (RETRY_WEIGHT if attempts > 1 else 1.0)


def unweighted(score: float, attempts: int) -> float:
    """The grade the counting try got on its own (a logged score with the retry weight undone)."""
    return score if attempts <= 1 else score / RETRY_WEIGHT


def is_full(score: float) -> bool:
    """Fully right: the grader's 10."""
    return score >= FULL_SCORE


def passed(score: float) -> bool:
    """A binary pass over a logged grade of any try (≥ `PASS_SCORE`)."""
    return score >= PASS_SCORE


def rule_problem(rule: object) -> str | None:
    """Why `rule` is not a C(τ) rule, or None."""
    if isinstance(rule, str) and (
        rule in set(PassRule) or ((m := _SCORE_RULE.match(rule)) is not None and float(m.group(1)) <= FULL_SCORE)
    ):
        return None
    return '`scale.correct` must be "first_try" (the default), "any_full" or "score>=N" (N in 0..10)'


def is_correct(rule: str, score: float, attempts: int) -> bool:
    """C(τ) under `rule`, from a logged grade (`score` already weighted after a nudge).

    first_try: a fully correct answer without a nudge (score 10, one attempt) — the paper's
    "correct final answer" with no retry the budget didn't pay for; any_full: fully correct,
    with or without the nudge; score>=N: the logged score reaches N."""
    if rule == PassRule.FIRST_TRY:
        return attempts == 1 and is_full(score)
    if rule == PassRule.ANY_FULL:
        return is_full(unweighted(score, attempts))
    m = _SCORE_RULE.match(rule)
    return m is not None and score >= float(m.group(1))
