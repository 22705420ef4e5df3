"""Fork figures use the one definition of a pass (a full score at the first try) and an
unresolved grade leaves its question out of pass^k rather than lowering k for its whole mode."""

from __future__ import annotations

import re

from gateway.report.forks import ModeResult


def test_pass_k_counts_its_questions_at_the_most_rollouts() -> None:
    """Before: k was the fewest rollouts of any question — one unresolved grade made k 1 for
    every question of the mode."""
    mode = ModeResult("isolated", passes={"q1": {"r1": True, "r2": True, "r3": True}, "q2": {"r1": True, "r2": False}})
    assert mode.rollouts == 3
    assert mode.pass_hat(3) == 1.0  # q1 alone: q2 has two resolved rollouts, not three
    assert mode.pass_hat(1) == (1.0 + 0.5) / 2 and mode.pass_rate("q2") == 0.5


def test_the_per_question_table_is_in_question_order_whichever_fork_was_read_first() -> None:
    """Isolated forks, read in folder order, met q10 before q2: the table sorted as text."""
    from gateway.report.forks import ForkGroup, render_forks

    isolated = ModeResult("isolated", forks=3)
    for qid in ("q10", "q2", "q1"):
        isolated.grades[qid] = {"m#1": 10.0}
        isolated.passes[qid] = {"m#1": True}
    group = ForkGroup("m", {"q10": (), "q2": (), "q1": ()}, {"isolated": isolated}, [])
    rows = [line.split(" | ")[0] for line in render_forks(group).splitlines() if re.match(r"\| q\d", line)]
    assert rows == ["| q1", "| q2", "| q10"]


def test_the_fork_chart_counts_a_pass_as_the_table_beside_it_does() -> None:
    """Issue 62: report.html's fork chart counted a score of 5 and up as passed (a right answer
    after the nudge, ×0.5), the table and pass^k a full score at the first try."""
    from gateway.report.forks import ForkGroup, ModeResult
    from gateway.report.html import fork_pass_rates

    nudged = ModeResult(
        "isolated",
        grades={"q1": {"a#1": 5.0}, "q2": {"a#1": 10.0}},
        passes={"q1": {"a#1": False}, "q2": {"a#1": True}},
    )
    chart = fork_pass_rates(ForkGroup("t", {"q1": (), "q2": ()}, {"isolated": nudged}, []))
    assert chart["data"][0]["x"] == ["q1", "q2"] and chart["data"][0]["y"] == [0.0, 1.0]
    assert nudged.pass_hat(1) == 0.5  # the table's pass^1 over the same rollouts
