"""Questions in the order people read their ids: q2 before q10, э9 before э10 — not the order
they were graded in (an exam may ask q11 first) nor the string order. One key for every table
that lists questions (issue 62: the autopsy listed q11 before q1)."""

from __future__ import annotations

import re


def question_order(question_id: str) -> list[tuple[int, int | str]]:
    """A sort key: the id's runs of digits as numbers, the rest as text (comparable whatever the
    mix: each part carries whether it is a number)."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", question_id) if part]
