"""The typed run line: stored and read back unchanged; an older line's status with its words
read into status and detail — and a run that hit its limit counted as its arm's failure in
every table that reads lines (it was dropped from each while its status was a sentence)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.log.vocabulary import TerminationReason
from gateway.report.comparison import compare
from gateway.report.decision import Decision, verdict
from gateway.report.results_table import results_table
from gateway.report.run_line import (
    QuestionOutcome,
    RunLine,
    RunLineError,
    lines_jsonl,
    parse_status,
    read_lines,
)

LIMIT = "limit_reached (agent_turns: 30 messages sent, the limit is 30)"  # as lines said it before


def stored(task: str, variant: str, status: str, answers: dict[str, bool]) -> dict[str, Any]:
    return {
        "experiment": "e", "task": task, "pair": f"e.{task}.r1", "variant": variant, "status": status,
        "variant_name": {"A": "without", "B": "with"}[variant], "graded": len(answers),
        "correct": sum(answers.values()), "active_seconds": 1.0, "cost_usd": 0.0,
        "questions": {q: {"score": 10 if ok else 0, "correct": ok, "tags": []} for q, ok in answers.items()},
    }  # fmt: skip


def test_a_line_is_stored_and_read_back_unchanged(tmp_path: Path) -> None:
    line = RunLine(
        status=TerminationReason.LIMIT_REACHED,
        status_detail="agent_turns: 30 messages sent",
        run_id="r1",
        task="t",
        pair="e.t.r1",
        variant="B",
        retrieved=("MEMORY.md",),
        memory_calls=None,
        questions={"q1": QuestionOutcome(score=5.0, correct=False, tags=("deleted",), recalled=("daniel",))},
    )
    path = tmp_path / "e.runs.jsonl"
    path.write_text(lines_jsonl([line, RunLine(status=None, run_id="r2")]), encoding="utf-8")
    back, unfinished = read_lines(path)
    assert back == line
    assert unfinished.status is None and json.loads(path.read_text().splitlines()[1])["status"] == "unfinished"


def test_an_older_lines_status_sentence_is_read_into_reason_and_detail() -> None:
    assert parse_status(LIMIT) == (TerminationReason.LIMIT_REACHED, "agent_turns: 30 messages sent, the limit is 30")
    assert parse_status("completed") == (TerminationReason.COMPLETED, "")
    assert parse_status("running or killed") == (None, "")
    with pytest.raises(RunLineError, match="expected one of"):
        parse_status("finished-ish")


def test_a_line_that_is_none_is_named_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "base.runs.jsonl"
    path.write_text(json.dumps(stored("t", "A", "completed", {})) + "\n" + '{"status": 7}\n', encoding="utf-8")
    with pytest.raises(RunLineError, match=r"base\.runs\.jsonl:2: not a run line"):
        read_lines(path)


def test_a_run_that_hit_its_limit_is_its_arms_failure_in_every_table() -> None:
    """Both arms at their turn limit: before, an empty A/B table, "B runs that reached a run
    limit: 0", both runs under technical failures and NO DECISION."""
    lines = [
        RunLine.from_json(stored("t", "A", LIMIT, {"q1": True, "q2": True})),
        RunLine.from_json(stored("t", "B", LIMIT, {"q1": True})),
    ]
    c = compare(lines)
    assert not c.incomplete and c.groups["all"].n == 2 and c.groups["all"].wins_a == 1  # q2: B never got there
    text = "\n".join(verdict(Decision(0.0, ("limit_reached",)), c, lines))
    assert "✗ B runs that reached a run limit: 1" in text and "KEEP A" in text
    table = results_table(lines, c.names)
    row_b = next(row for row in table.splitlines() if row.startswith("| B (with) | all"))
    assert row_b.endswith("| 0 | 0 |")  # evaluated: neither unevaluated nor a technical failure
    assert "| 0 / 1 |" in row_b  # one evaluated run, not successful
