"""Protocol 001's results table, from run lines alone (issue 30 item 2)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from gateway.report.results_table import results_table
from gateway.report.run_line import RunLine


def line(task: str, variant: str, answers: dict[str, bool], **extra: Any) -> RunLine:
    tags = extra.get("tags", {})
    return RunLine.from_json({
        "task": task, "pair": f"e.{task}.r1", "variant": variant, "group": extra.get("group", "g"),
        "status": extra.get("status", "completed"), "graded": extra.get("graded", len(answers)),
        "correct": sum(answers.values()), "agent_seconds": 2.0, "persona_seconds": 0.5, "cost_usd": 0.01,
        "canary_hits": extra.get("canary_hits", 0), "misapplied_old_facts": len(extra.get("misapplied", [])),
        "misapplied_examples": extra.get("misapplied", [])[:2],
        "questions": {q: {"correct": ok, "tags": tags.get(q, []), **_recalled(q, extra)} for q, ok in answers.items()},
    })  # fmt: skip


def _recalled(question: str, extra: dict[str, Any]) -> dict[str, Any]:
    return {"recalled": ["daniel"]} if question in extra.get("recalled", ()) else {}


def test_the_table_counts_what_001_asks_for_per_variant_and_group() -> None:
    lines = [
        line("t1", "A", {"q1": True, "q2": False}, tags={"q2": ["abstain"]}, misapplied=["q1"]),
        line("t1", "B", {"q1": True, "q2": True}, tags={"q2": ["abstain"]}, canary_hits=1),
        line("t2", "A", {"q1": False}, status="agent_failed", graded=0),
        line("t2", "B", {"q3": False}, tags={"q3": ["deleted"]}, recalled=["q3"]),
        line("t3", "A", {}, graded=0),
        line("t3", "B", {"q1": True}),
    ]
    table = results_table(lines, {"A": "without", "B": "with"})
    rows = {
        r.split(" | ")[0].strip("| ") + "/" + r.split(" | ")[1]: r
        for r in table.splitlines()
        if r.startswith("| A") or r.startswith("| B")
    }
    a, b = rows["A (without)/all"], rows["B (with)/all"]
    cells_a, cells_b = [c.strip() for c in a.split("|")[1:-1]], [c.strip() for c in b.split("|")[1:-1]]
    assert cells_a[2] == "0 / 1" and cells_b[2] == "2 / 3"  # successful / evaluated runs
    assert cells_a[3] == "0" and cells_b[3] == "1"  # wins only here: B's clarification on t1
    assert cells_a[4] == "1 (e.g. t1:q1)"  # misapplied old experience, with an example
    assert cells_a[5] == "0 / 1" and cells_b[5] == "1 / 1"  # clarifications right / needed
    assert cells_b[6] == "2"  # a canary hit and a recalled deletion
    assert cells_a[10] == "1" and cells_a[11] == "1 (agent_failed)"  # unevaluated, technical failures
    assert cells_b[7] == "2.0 s (2.0–2.0)" and cells_b[9] == "$0.0100"


def test_spreads_stay_within_the_data_and_a_guess_is_no_win() -> None:
    """Before: "0.1 s (-0.0–0.2)" of checker time, and wins counted on unresolved grades that the
    A/B table leaves out."""
    from gateway.report.results_table import _median

    assert _median([0.0, 0.2]) == "0.1 s (0.1–0.2)"  # was "0.1 s (-0.1–0.2)": below the shortest
    assert _median([1.0, 2.0, 3.0, 4.0]) == "2.5 s (1.8–3.2)"
    a = line("t1", "A", {"q1": True})
    b = line("t1", "B", {"q1": False})
    guessed = replace(b, questions={"q1": replace(b.questions["q1"], certain=False)})
    table = results_table([a, guessed], {"A": "without", "B": "with"})
    row_a = next(r for r in table.splitlines() if r.startswith("| A (without) | g"))
    assert row_a.split(" | ")[3] == "0"  # wins only here: none on a guess


def test_a_misapplied_example_is_named_once_across_repeats() -> None:
    """Issue 47 item 6: the gate's examples read "demo-s0:q11, demo-s0:q11" — one question of
    one task, in two repeats."""
    lines = [line("t1", "A", {"q1": False}, misapplied=["q1"]), line("t1", "A", {"q1": False}, misapplied=["q1"])]
    lines[1] = replace(lines[1], pair="e.t1.r2")
    lines += [line("t2", "A", {"q2": False}, misapplied=["q2"]), line("t1", "B", {"q1": True})]
    row = next(r for r in results_table(lines, {"A": "a", "B": "b"}).splitlines() if r.startswith("| A"))
    assert "3 (e.g. t1:q1, t2:q2)" in row, row
