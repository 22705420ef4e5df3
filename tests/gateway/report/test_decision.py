"""A decision rule fixed before the runs: written to the plan, never changed once runs exist,
and the comparison ends with its verdict and the evidence for each clause."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from gateway.report.comparison import compare
from gateway.report.decision import Decision, decide, parse_decision, render_ruling, verdict
from gateway.report.run_line import RunLine
from gateway.report.verdict import Clause, Ruling, Verdict
from tests.conftest import BenchFactory
from tests.marathon_cli import marathon


def line(task: str, variant: str, correct: bool, **extra: Any) -> RunLine:
    return RunLine.from_json({
        "experiment": "e", "task": task, "pair": f"e.{task}.r1", "variant": variant,
        "variant_name": {"A": "without", "B": "with"}[variant], "status": extra.get("status", "completed"),
        "active_seconds": extra.get("seconds", 1.0), "agent_seconds": extra.get("seconds", 1.0),
        "cost_usd": extra.get("cost", 0.0) + extra.get("persona_cost", 0.0), "agent_cost_usd": extra.get("cost", 0.0),
        "canary_hits": extra.get("canary_hits", 0), "group": extra.get("group", "all"),
        "questions": {"q1": {"correct": correct, "tags": extra.get("tags", [])}},
    })  # fmt: skip


TASKS = 8
LINES = [line(f"t{n}", v, v == "B" or n == 0) for n in range(TASKS) for v in ("A", "B")]  # B − A = 7/8


def test_b_is_accepted_only_when_every_clause_holds() -> None:
    decision = Decision(0.5, ("canary_leak", "limit_reached"))
    lo = compare(LINES).intervals["all"]
    assert lo is not None and lo[1] >= 0.5  # 8 clusters: an interval, its lower bound above the bar
    text = "\n".join(verdict(decision, compare(LINES), LINES))
    assert "ACCEPT B (with)" in text and "✓ B − A = +0.88, 95 % CI [" in text and "above the needed +0.50" in text
    leaking = [*LINES[:-1], line(f"t{TASKS - 1}", "B", True, canary_hits=2)]
    text = "\n".join(verdict(decision, compare(leaking), leaking))
    assert "KEEP A (without)" in text and "✗ canary hits at the agent's model input: 2" in text
    too_small = "\n".join(verdict(Decision(lo[1] + 0.01, ()), compare(LINES), LINES))
    # the mean is above the margin, the lower bound not: the interval holds it — not enough data
    assert "NO DECISION" in too_small and "? B − A = +0.88" in too_small and "not enough data" in too_small
    small = [line(f"t{n}", v, v == "B" and n == 0) for n in range(16) for v in ("A", "B")]  # +0.06
    too_high = "\n".join(verdict(Decision(0.5, ()), compare(small), small))  # even its upper bound is short
    assert "KEEP A" in too_high and "no benefit worth it" in too_high
    empty = "\n".join(verdict(decision, compare([]), []))
    assert "NO DECISION" in empty


def test_fewer_than_five_tasks_decide_nothing_however_large_the_difference() -> None:
    few = [line(f"t{n}", v, v == "B") for n in range(4) for v in ("A", "B")]  # B − A = +1.00 on 4 tasks
    text = "\n".join(verdict(Decision(0.1, ()), compare(few), few))
    assert "NO DECISION" in text and "too few tasks for an interval (4 cluster(s) < 5)" in text


def test_a_regression_on_one_group_is_not_hidden_by_a_better_mean() -> None:
    lines = [line(f"t{n}", v, v == "B", group="old") for n in range(6) for v in ("A", "B")]
    lines += [line(f"n{n}", v, v == "A", group="new contract") for n in range(2) for v in ("A", "B")]
    rule = Decision(0.0, (), max_group_regression=0.1)
    text = "\n".join(verdict(rule, compare(lines), lines))
    assert (
        "KEEP A" in text and "✗ task group new contract (2 questions): B − A = -1.00; at least -0.10" in text
    )
    assert "✓ task group old (6 questions): B − A = +1.00" in text


def test_cost_and_time_trade_offs_are_clauses_with_their_evidence() -> None:
    dear = [
        line(f"t{n}", v, v == "B" or n == 0, cost=1.0 if v == "A" else 1.5)
        for n in range(TASKS)
        for v in ("A", "B")
    ]
    text = "\n".join(verdict(Decision(0.0, (), max_cost_increase=0.2), compare(dear), dear))
    assert "KEEP A" in text and "✗ the agent's median cost per task: B $1.5000 vs A $1.0000; at most +20%" in text
    slow = [
        line(f"t{n}", v, v == "B" or n == 0, seconds=10.0 if v == "B" else 5.0)
        for n in range(TASKS)
        for v in ("A", "B")
    ]
    assert "✗ the agent's median time per task: B 10.0 s vs A 5.0 s; at most ×1.5" in "\n".join(
        verdict(Decision(0.0, (), max_slowdown=1.5), compare(slow), slow)
    )
    unpriced = [replace(x, cost_usd=None, agent_cost_usd=None) for x in LINES]
    text = "\n".join(verdict(Decision(0.0, (), max_cost_increase=0.2), compare(unpriced), unpriced))
    assert "NO DECISION" in text and "? cost per task: unknown" in text
    assert parse_decision({"max_slowdown": 0.5})[1].startswith("`decision.max_slowdown` must be")


def test_a_bad_rule_says_what_is_wrong() -> None:
    assert parse_decision({"min_improvement": 0.1, "blockers": ["canary_leak"]})[0] == Decision(
        0.1, ("canary_leak",)
    )
    assert "must be a list of" in parse_decision({"blockers": ["vibes"]})[1]
    assert "b_minus_a" in parse_decision({"metric": "accuracy"})[1]


def test_the_rule_is_fixed_before_the_runs_and_the_verdict_ends_the_comparison(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    bench = make_benchmark()
    config = tmp_path / "config.jsonc"

    def write(least: float) -> None:
        config.write_text(
            f'{{ experiment: {{ name: "e", variants: {{ A: {{adapter: "reference", memory: false}}, '
            f'B: {{adapter: "reference"}} }}, tasks: ["{bench}"], '
            f'decision: {{ min_improvement: {least}, blockers: ["canary_leak", "limit_reached"] }} }} }}'
        )

    write(0.1)
    first = marathon("run", str(config), cwd=tmp_path)
    assert first.returncode in (0, 1), first.stderr
    assert (
        "Decision (fixed before the runs):" in first.stdout
        and "canary hits at the agent's model input: 0" in first.stdout
    )
    write(0.0)  # moving the goalposts after seeing the result
    refused = marathon("run", str(config), cwd=tmp_path)
    assert refused.returncode == 2 and "the decision rule was fixed before the runs" in refused.stderr
    compared = marathon("compare", str(tmp_path / "recordings"), cwd=tmp_path)
    assert "Decision (fixed before the runs):" in compared.stdout and "the needed +0.10" in compared.stdout
    # a stale NAME.runs.jsonl (here: cut to its first line) is rebuilt from the logs, not reused
    stored = tmp_path / "recordings" / "e.runs.jsonl"
    stored.write_text(stored.read_text().splitlines()[0] + "\n")
    again = marathon("compare", str(tmp_path / "recordings"), cwd=tmp_path)
    assert again.stdout == compared.stdout and len(stored.read_text().splitlines()) == 2


def test_a_pair_left_incomplete_means_no_decision() -> None:
    lines = [*LINES, line("t9", "A", True)]  # t9's B side never finished
    text = "\n".join(verdict(Decision(0.1, ()), compare(lines), lines))
    assert "NO DECISION" in text and "pairs with a side missing or not completed: e.t9.r1" in text


def test_an_experiment_name_with_dots_keeps_its_own_files(tmp_path: Path) -> None:
    from gateway.report.decision import plan_decision
    from gateway.report.run_line import write_lines

    jsonl, table = write_lines(LINES, tmp_path / "mem.v2")
    assert (jsonl.name, table.name) == ("mem.v2.runs.jsonl", "mem.v2.runs.csv")
    (tmp_path / "mem.v2.plan.json").write_text('{"decision": {"min_improvement": 0.2, "blockers": []}}')
    assert plan_decision(jsonl) == Decision(0.2, ())


def test_deleted_recalled_counts_only_answers_that_state_the_deleted_content() -> None:
    """An agent that really deleted the fact and says "no idea" (graded wrong) must not block
    its own acceptance; one that names the deleted person must."""
    decision = Decision(0.0, ("deleted_recalled",))

    def with_deleted(recalled: list[str]) -> list[RunLine]:
        last = line("t3", "B", False, tags=["deleted"])
        q1 = replace(last.questions["q1"], recalled=tuple(recalled))
        return [*LINES[:-1], replace(last, questions={"q1": q1})]

    honest = with_deleted([])
    assert "✓ [deleted] questions B answered with what it was asked to forget: 0" in "\n".join(
        verdict(decision, compare(honest), honest)
    )
    leaked = with_deleted(["daniel"])
    text = "\n".join(verdict(decision, compare(leaked), leaked))
    assert "KEEP A" in text and "✗ [deleted] questions B answered with what it was asked to forget: 1" in text


def test_the_verdict_is_a_value_the_decision_and_the_gate_share() -> None:
    """The decision is computed as a value (its clauses typed), rendered apart; a failed clause
    decides over one that can't be checked, as in the gate."""
    decision = Decision(0.5, ("canary_leak", "limit_reached"))
    accepted = decide(decision, compare(LINES), LINES)
    assert accepted.verdict is Verdict.ACCEPT and accepted.verdict.exit_code == 0
    assert [c.holds for c in accepted.clauses] == [True, True, True]
    few = [line(f"t{n}", v, v == "B") for n in range(4) for v in ("A", "B")]
    leaking = [*few[:-1], line("t3", "B", True, canary_hits=1)]
    ruling = decide(decision, compare(leaking), leaking)
    assert [c.holds for c in ruling.clauses] == [None, False, True]  # interval unchecked, a leak
    assert ruling.verdict is Verdict.REJECT and ruling.failing == (ruling.clauses[1],)
    assert render_ruling(ruling, {"A": "without", "B": "with"})[0] == (
        "**Decision (fixed before the runs): KEEP A (without)** — decided by: canary hits at the agent's model input: 1"
    )
    assert Ruling.of([Clause(None, "unchecked")]).verdict is Verdict.NO_DECISION


def _arms(b_right: list[bool], a_right: list[bool] | None = None, tags: tuple[str, ...] = ()) -> list[RunLine]:
    """One question per task; A right where `a_right` says (default: never)."""
    a_right = a_right or [False] * len(b_right)
    return [
        line(f"t{n}", v, (b if v == "B" else a), tags=list(tags))
        for n, (a, b) in enumerate(zip(a_right, b_right, strict=True))
        for v in ("A", "B")
    ]


def test_benefit_harm_and_not_enough_data_are_three_outcomes() -> None:
    """Seed 001: before, +0.08 [-0.42, +0.54] and -0.75 [-0.75, -0.75] both said KEEP A; identical
    arms with min_improvement 0 said ACCEPT B (the test was >=)."""
    rule = Decision(0.1, ())
    unsure = _arms([True, False, True, False, True, False], [False, True, True, False, False, True])
    ruling = decide(rule, compare(unsure), unsure)
    assert ruling.verdict is Verdict.NO_DECISION and "not enough data" in (ruling.deciding or Clause(None, "")).text
    harm = _arms([False] * 8, [True] * 8)
    ruling = decide(rule, compare(harm), harm)
    assert ruling.verdict is Verdict.REJECT and "harm: B is worse" in (ruling.deciding or Clause(None, "")).text
    same = _arms([True, False] * 4, [True, False] * 4)
    assert decide(Decision(0.0, ()), compare(same), same).verdict is Verdict.NO_DECISION  # equal arms: no winner


def test_a_negative_margin_is_refused() -> None:
    decision, problem = parse_decision({"min_improvement": -0.1})
    assert decision is None and "0..1" in problem


def test_a_tag_b_makes_worse_keeps_a_whatever_the_mean() -> None:
    """The shipped example's abstain tag at -1.00 with ACCEPT B: every tag is checked."""
    better = [line(f"t{n}", v, v == "B", tags=["update"]) for n in range(20) for v in ("A", "B")]
    worse = [line(f"u{n}", v, v == "A", tags=["abstain"]) for n in range(5) for v in ("A", "B")]
    both = [*better, *worse]  # B − A = +0.60 [+0.28, +0.92] overall; abstain −1.00 on 5 tasks
    ruling = decide(Decision(0.1, ()), compare(both), both)
    assert ruling.verdict is Verdict.REJECT  # was ACCEPT B
    assert (ruling.deciding or Clause(None, "")).text.startswith("tag abstain: B is worse, B − A = -1.00")
    few = [line(f"t{n}", v, v == "B") for n in range(4) for v in ("A", "B")] + worse[:2]  # 5 tasks in all
    unsure = decide(Decision(0.1, ()), compare(few), few)
    assert unsure.verdict is not Verdict.ACCEPT


def test_cost_and_time_clauses_weigh_the_agent_not_the_persona_or_checker() -> None:
    """Before: totals — a dear persona model or a slow checker made B fail its cost clause."""
    lines = [
        line(f"t{n}", v, v == "B" or n == 0, cost=1.0, persona_cost=2.0 if v == "B" else 0.0)
        for n in range(TASKS)
        for v in ("A", "B")
    ]
    text = "\n".join(verdict(Decision(0.0, (), max_cost_increase=0.2), compare(lines), lines))
    assert "✓ the agent's median cost per task: B $1.0000 vs A $1.0000" in text


def test_the_rule_is_recorded_with_the_runs_and_a_changed_plan_is_refused() -> None:
    """Before: the rule lived only in NAME.plan.json — edited after the runs, it decided."""
    from gateway.report.decision import render_verdict

    fixed = Decision(0.5, ("canary_leak",))
    recorded = [replace(x, decision=fixed.to_json()) for x in LINES]
    c = compare(recorded)
    assert "ACCEPT B" in render_verdict(fixed, c, recorded)
    assert "no verdict: NAME.plan.json's decision rule is not the one its runs recorded" in render_verdict(
        Decision(0.0, ()), c, recorded
    )
    assert "ACCEPT B" in render_verdict(None, c, recorded)  # the plan gone: the runs' own rule
