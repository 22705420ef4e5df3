"""Budget metrics: the arithmetic a reader of the budget table relies on."""

from __future__ import annotations

import math

import pytest

from gateway.report.budget import Ladder, Outcome, Rung, budget_cell, percentile, wilson


def test_wilson_matches_the_textbook_values() -> None:
    lo, hi = wilson(8, 10)
    assert math.isclose(lo, 0.4902, abs_tol=1e-4) and math.isclose(hi, 0.9433, abs_tol=1e-4)
    assert wilson(0, 10)[0] == 0.0 and 0.27 < wilson(0, 10)[1] < 0.28
    assert wilson(10, 10)[1] == pytest.approx(1.0) and wilson(0, 0) == (0.0, 1.0)


def test_p90_interpolates() -> None:
    assert percentile([0, 1, 1, 2, 10], 90) == pytest.approx(6.8)
    assert percentile([3], 90) == 3


def rung(name: str, pattern: list[tuple[bool, int]], budgets: tuple[int, ...] = (1, 3)) -> Rung:
    """One rollout per question: (correct, retrieval calls)."""
    outcomes = [Outcome("r", f"q{n}", c, m) for n, (c, m) in enumerate(pattern)]
    r = Rung(name, 0, [], outcomes, True)
    r.cells = {b: budget_cell(outcomes, b) for b in budgets}
    return r


def test_pass_exhaustion_and_wrong_within_budget_sum_to_one() -> None:
    r = rung("s0", [(True, 0), (True, 2), (False, 1), (False, 5), (True, 1)])
    one = r.cells[1]
    assert (one.pass_rate, one.p_exh, one.p_wrong) == pytest.approx((2 / 5, 2 / 5, 1 / 5))
    assert one.pass_rate + one.p_exh + one.p_wrong == pytest.approx(1.0)
    assert r.cells[3].pass_rate == pytest.approx(3 / 5) and r.cells[3].p_exh == pytest.approx(1 / 5)
    assert r.p90 == pytest.approx(3.8)


def test_the_onset_is_the_first_rung_below_target_and_the_conservative_one_no_later() -> None:
    good = [(True, 1)] * 19 + [(False, 1)]  # 95 %
    fair = [(True, 1)] * 17 + [(False, 1)] * 3  # 85 %: above ρ, but not surely
    bad = [(True, 1)] * 10 + [(False, 1)] * 10  # 50 %
    ladder = Ladder("x", [rung("s0", good), rung("s1", fair), rung("s2", bad)], (1, 3), 0.8)
    point, conservative = ladder.onset(1)
    assert point == "s2" and conservative in ("s0", "s1", "s2")
    assert ["s0", "s1", "s2"].index(conservative or "") <= ["s0", "s1", "s2"].index(point)
    assert ladder.rungs[1].cells[1].interval[0] < 0.8  # 17 of 20 questions: the bound is below ρ
    strong = Ladder("x", [rung("s0", [(True, 1)] * 200), rung("s1", bad)], (1,), 0.8)
    assert strong.onset(1) == ("s1", "s1")
    never = Ladder("x", [rung("s0", [(True, 1)] * 200)], (1,), 0.8)
    assert never.onset(1) == (None, None)


def test_a_rung_without_recorded_traffic_has_no_budget_figures() -> None:
    blind = Rung("s0", 0, [], [Outcome("r", "q1", True, 0)], observable=False)
    assert blind.p90 is None and blind.cells == {}
    assert Ladder("x", [blind], (1,), 0.8).onset(1) == (None, None)


def test_a_rung_where_nothing_was_graded_says_no_data_and_the_onset_says_it_skipped_it() -> None:
    """Before: "Pass@B 0 % [0 %, 100 %] | p_exh 0 % | p_wrong 0 %", and the onset passed over it."""
    from gateway.report.budget import render_ladder

    failed = rung("s1", [])
    text = render_ladder(Ladder("x", [rung("s0", [(True, 1)] * 20), failed], (1,), 0.8))
    row = next(line for line in text.splitlines() if line.startswith("| s1 "))
    assert "no data: no question of it was graded" in row and "0 %" not in row
    assert "The onset skips rungs with no data (not observable, or nothing graded): s1" in text
