"""What a grade means, in one place: the retry weight and the named definitions of a pass."""

from __future__ import annotations

import pytest

from persona.outcome import (
    RETRY_WEIGHT,
    PassRule,
    is_correct,
    is_full,
    most,
    passed,
    rule_problem,
    unweighted,
    weighted,
)


def test_a_nudged_try_counts_at_the_retry_weight_and_back() -> None:
    assert RETRY_WEIGHT == 0.5
    assert weighted(10, 2) == 5.0 and weighted(10, 1) == 10.0
    assert unweighted(5.0, 2) == 10.0 and unweighted(7.0, 1) == 7.0
    assert most(1) == 10.0 and most(2) == 5.0


@pytest.mark.parametrize(
    ("score", "attempts", "first_try", "any_full", "at_least_5", "full", "pass_"),
    [
        (10.0, 1, True, True, True, True, True),  # right at once
        (5.0, 2, False, True, True, False, True),  # right after the nudge (10 × 0.5)
        (7.0, 1, False, False, True, False, True),  # mostly right
        (2.5, 2, False, False, False, False, False),  # half right after the nudge
        (0.0, 1, False, False, False, False, False),
    ],
)
def test_each_named_definition_of_a_pass(
    score: float, attempts: int, first_try: bool, any_full: bool, at_least_5: bool, full: bool, pass_: bool
) -> None:
    assert is_correct(PassRule.FIRST_TRY, score, attempts) is first_try
    assert is_correct("any_full", score, attempts) is any_full  # as a config writes it
    assert is_correct("score>=5", score, attempts) is at_least_5
    assert is_full(score) is full and passed(score) is pass_


def test_a_rule_that_is_none_is_named() -> None:
    assert rule_problem("first_try") is None and rule_problem("score>=7.5") is None
    for bad in ("first-try", "score>=11", 5, None):
        assert "must be" in (rule_problem(bad) or "")
