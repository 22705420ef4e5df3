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
