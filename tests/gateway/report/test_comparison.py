"""Paired A/B: pairing, the per-group tally, the task-clustered bootstrap, the run line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gateway.report.comparison import compare, folder_hash, render_comparison


def line(task: str, repeat: int, variant: str, correct: dict[str, bool], **extra: Any) -> dict[str, Any]:
    return {
        "experiment": "e",
        "task": task,
        "pair": f"e.{task}.r{repeat}",
        "repeat": repeat,
        "variant": variant,
        "status": "completed",
        "active_seconds": extra.get("seconds", 10.0),
        "cost_usd": extra.get("cost", 0.5),
        "questions": {
            q: {"score": 10 if ok else 0, "correct": ok, "tags": ["update"] if q == "q2" else []}
            for q, ok in correct.items()
        },
    }


def test_wins_are_counted_per_question_group_over_paired_questions() -> None:
    lines = [
        line("t1", 1, "A", {"q1": True, "q2": True}),
        line("t1", 1, "B", {"q1": False, "q2": True}),
        line("t2", 1, "A", {"q1": False, "q2": False}),
        line("t2", 1, "B", {"q1": True, "q2": False}),
        line("t3", 1, "A", {"q1": True}),  # B side missing: left out, and said so
    ]
    c = compare(lines)
    assert (c.groups["all"].wins_a, c.groups["all"].wins_b, c.groups["all"].both, c.groups["all"].neither) == (
        1, 1, 1, 1,
    )  # fmt: skip
    assert c.groups["update"].n == 2 and c.groups["update"].both == 1
    assert c.incomplete == ["e.t3.r1"]
    assert "left out (a side missing or not completed): e.t3.r1" in render_comparison(c)


def test_the_bootstrap_resamples_tasks_and_one_task_gives_no_interval() -> None:
    lines = []
    for n in range(6):  # A right on 4 of 6 tasks, B on 1
        lines += [line(f"t{n}", 1, "A", {"q1": n < 4}), line(f"t{n}", 1, "B", {"q1": n == 5})]
    c = compare(lines, seed=1)
    interval = c.intervals["all"]
    assert interval is not None
    diff, lo, hi = interval
    assert diff == 0.5 and lo < diff < hi and lo >= -1 and hi <= 1
    assert compare(lines, seed=1).intervals == c.intervals  # seeded
    single = compare([line("t", 1, "A", {"q1": True}), line("t", 1, "B", {"q1": False})])
    assert single.intervals["all"] is None and "n/a (needs ≥ 2 tasks)" in render_comparison(single)


def test_time_and_cost_are_medians_with_spread_and_unknown_prices_stay_unknown() -> None:
    lines = [
        line("t1", 1, "A", {"q1": True}, seconds=10.0, cost=1.0),
        line("t1", 1, "B", {"q1": True}, seconds=4.0, cost=None),
        line("t2", 1, "A", {"q1": True}, seconds=30.0, cost=3.0),
        line("t2", 1, "B", {"q1": True}, seconds=6.0, cost=0.2),
    ]
    c = compare(lines)
    assert c.time["A"] == (20.0, 15.0, 25.0) and c.cost["A"] == (2.0, 1.5, 2.5)
    assert c.cost["B"] is None and "median cost price unknown" in render_comparison(c)


def test_a_state_folder_hash_changes_with_its_content_only(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        (folder / "memory").mkdir(parents=True)
        (folder / "memory" / "notes.md").write_text("Miso is 5\n")
    assert folder_hash(a) == folder_hash(b) and len(folder_hash(a)) == 64
    (b / "memory" / "notes.md").write_text("Miso is 4\n")
    assert folder_hash(a) != folder_hash(b)
    assert folder_hash(tmp_path / "missing") == "none"
