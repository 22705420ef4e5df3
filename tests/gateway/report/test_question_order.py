"""One order for question ids in every table (issue 62)."""

from __future__ import annotations

from gateway.report.question_order import question_order


def test_ids_sort_as_people_read_them() -> None:
    ids = ["q11", "q2", "q1", "э10", "э9", "e54#2", "e54#10", "e5", "x"]
    assert sorted(ids, key=question_order) == ["e5", "e54#2", "e54#10", "q1", "q2", "q11", "x", "э9", "э10"]
