"""Paired A/B as protocol 001 writes it: A without the added memory, B with it, B − A;
pairing, the per-group tally, the cluster bootstrap (no interval under five clusters), the
per-task spread over repeats, held-out tasks by default, the run line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from adapters.state_folder import folder_hash
from gateway.report.comparison import compare, render_comparison
from gateway.report.run_line import RunLine


def line(task: str, repeat: int, variant: str, correct: dict[str, bool], **extra: Any) -> RunLine:
    return RunLine.from_json({
        "experiment": "e",
        "task": task,
        "cluster": extra.get("cluster", task),
        "group": extra.get("group", "all"),
        "split": extra.get("split", "heldout"),
        "variant_name": {"A": "without", "B": "with"}[variant],
        "pair": f"e.{task}.r{repeat}",
        "repeat": repeat,
        "variant": variant,
        "status": "completed",
        "active_seconds": extra.get("seconds", 10.0),
        "agent_seconds": extra.get("seconds", 10.0),
        "cost_usd": extra.get("cost", 0.5),
        "questions": {
            q: {"score": 10 if ok else 0, "correct": ok, "tags": ["update"] if q == "q2" else []}
            for q, ok in correct.items()
        },
    })


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


def test_b_minus_a_is_with_minus_without_and_its_interval_resamples_clusters() -> None:
    lines = []
    for n in range(6):  # A (without) right on 4 of 6 tasks, B (with) on 1: B − A = (1 − 4) / 6
        lines += [line(f"t{n}", 1, "A", {"q1": n < 4}), line(f"t{n}", 1, "B", {"q1": n == 5})]
    c = compare(lines, seed=1)
    interval = c.intervals["all"]
    assert interval is not None
    diff, lo, hi = interval
    assert diff == -0.5 and lo < diff < hi and lo >= -1 and hi <= 1
    assert compare(lines, seed=1).intervals == c.intervals  # seeded
    text = render_comparison(c)
    assert "A = without (the baseline, without the added memory), B = with (with it)" in text
    assert "| all | 6 | 4 | 1 | 0 | 1 | -0.50 [" in text


def test_under_five_clusters_there_is_no_interval_but_a_per_task_table() -> None:
    """Two rungs of one benchmark and its repeats are one cluster: four tasks here, two clusters."""
    lines = []
    for task, cluster in (("b1-s0", "b1"), ("b1-s2", "b1"), ("b2", "b2"), ("b3", "b3")):
        for repeat, b_right in ((1, True), (2, False)):
            lines += [
                line(task, repeat, "A", {"q1": False}, cluster=cluster),
                line(task, repeat, "B", {"q1": b_right}, cluster=cluster),
            ]
    c = compare(lines)
    assert c.clusters == 3 and c.intervals["all"] is None
    text = render_comparison(c)
    assert "+0.50 (too few tasks for an interval: 3 < 5)" in text
    assert "| b1-s0 | b1 | all | 2 | +0.50 | +0.00 … +1.00 |" in text  # the spread over repeats


def test_held_out_tasks_by_default_per_task_group() -> None:
    lines = [
        line("h1", 1, "A", {"q1": False}, group="travel"),
        line("h1", 1, "B", {"q1": True}, group="travel"),
        line("h2", 1, "A", {"q1": True}, group="health"),
        line("h2", 1, "B", {"q1": False}, group="health"),
        line("tune", 1, "A", {"q1": False}, split="tuning"),
        line("tune", 1, "B", {"q1": True}, split="tuning"),
    ]
    held = compare(lines)
    assert held.groups["all"].n == 2 and held.left_out_split == 2
    assert held.task_groups == {"health": (-1.0, 1), "travel": (1.0, 1)}  # the average (0) hides both
    text = render_comparison(held)
    assert "| health | 1 | -1.00 |" in text and "2 run(s) of other splits left out" in text
    assert compare(lines, splits=("heldout", "tuning")).groups["all"].n == 3


def test_time_and_cost_are_medians_with_spread_and_unknown_prices_stay_unknown() -> None:
    lines = [
        line("t1", 1, "A", {"q1": True}, seconds=10.0, cost=1.0),
        line("t1", 1, "B", {"q1": True}, seconds=4.0, cost=None),
        line("t2", 1, "A", {"q1": True}, seconds=30.0, cost=3.0),
        line("t2", 1, "B", {"q1": True}, seconds=6.0, cost=0.2),
    ]
    c = compare(lines)
    assert c.time["A"] == (20.0, 15.0, 25.0) and c.cost["A"] == (2.0, 1.5, 2.5)
    assert c.cost["B"] is None and "median model cost price unknown" in render_comparison(c)


def test_a_state_folder_hash_changes_with_its_content_only(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        (folder / "memory").mkdir(parents=True)
        (folder / "memory" / "notes.md").write_text("Miso is 5\n")
    assert folder_hash(a) == folder_hash(b) and len(folder_hash(a)) == 64
    (b / "memory" / "notes.md").write_text("Miso is 4\n")
    assert folder_hash(a) != folder_hash(b)
    assert folder_hash(tmp_path / "missing") == "none"


def test_a_question_whose_grade_is_unresolved_is_no_win_and_is_said() -> None:
    lines = [line("t1", 1, "A", {"q1": False, "q2": True}), line("t1", 1, "B", {"q1": True, "q2": True})]
    guessed = replace(lines[1].questions["q1"], certain=False)  # B's "win" on q1 is the exact grader's guess
    lines[1] = replace(lines[1], questions={**lines[1].questions, "q1": guessed})
    c = compare(lines)
    assert c.groups["all"].wins_b == 0 and c.groups["all"].n == 1
    assert c.unresolved == ["e.t1.r1:q1"]
    assert "left out, a grade unresolved" in render_comparison(c)
