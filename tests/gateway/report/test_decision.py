"""A decision rule fixed before the runs: written to the plan, never changed once runs exist,
and the comparison ends with its verdict and the evidence for each clause."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gateway.report.comparison import compare
from gateway.report.decision import Decision, parse_decision, verdict
from tests.conftest import BenchFactory
from tests.marathon_cli import marathon


def line(task: str, variant: str, correct: bool, **extra: Any) -> dict[str, Any]:
    return {
        "experiment": "e", "task": task, "pair": f"e.{task}.r1", "variant": variant,
        "variant_name": {"A": "without", "B": "with"}[variant], "status": extra.get("status", "completed"),
        "active_seconds": 1.0, "cost_usd": 0.0, "canary_hits": extra.get("canary_hits", 0),
        "questions": {"q1": {"correct": correct, "tags": extra.get("tags", [])}},
    }  # fmt: skip


LINES = [line(f"t{n}", v, v == "B" or n == 0) for n in range(4) for v in ("A", "B")]  # B − A = 3/4


def test_b_is_accepted_only_when_every_clause_holds() -> None:
    decision = Decision(0.5, ("canary_leak", "limit_reached"))
    text = "\n".join(verdict(decision, compare(LINES), LINES))
    assert "ACCEPT B (with)" in text and "✓ B − A = +0.75" in text and "needed ≥ +0.50" in text
    leaking = [*LINES[:-1], line("t3", "B", True, canary_hits=2)]
    text = "\n".join(verdict(decision, compare(leaking), leaking))
    assert "KEEP A (without)" in text and "✗ canary hits at the agent's model input: 2" in text
    too_small = "\n".join(verdict(Decision(0.9, ()), compare(LINES), LINES))
    assert "KEEP A" in too_small and "✗ B − A = +0.75" in too_small
    empty = "\n".join(verdict(decision, compare([]), []))
    assert "NO DECISION" in empty


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
    assert "Decision (fixed before the runs):" in compared.stdout and "needed ≥ +0.10" in compared.stdout


def test_a_pair_left_incomplete_means_no_decision() -> None:
    lines = [*LINES, line("t9", "A", True)]  # t9's B side never finished
    text = "\n".join(verdict(Decision(0.1, ()), compare(lines), lines))
    assert "NO DECISION" in text and "pairs with a side missing or not completed: e.t9.r1" in text


def test_an_experiment_name_with_dots_keeps_its_own_files(tmp_path: Path) -> None:
    from gateway.report.comparison import write_lines
    from gateway.report.decision import plan_decision

    jsonl, table = write_lines(LINES, tmp_path / "mem.v2")
    assert (jsonl.name, table.name) == ("mem.v2.runs.jsonl", "mem.v2.runs.csv")
    (tmp_path / "mem.v2.plan.json").write_text('{"decision": {"min_improvement": 0.2, "blockers": []}}')
    assert plan_decision(jsonl) == Decision(0.2, ())


def test_deleted_recalled_counts_only_answers_that_state_the_deleted_content() -> None:
    """An agent that really deleted the fact and says "no idea" (graded wrong) must not block
    its own acceptance; one that names the deleted person must."""
    decision = Decision(0.0, ("deleted_recalled",))

    def with_deleted(recalled: list[str]) -> list[dict[str, Any]]:
        out = [dict(x) for x in LINES]
        out[-1] = line("t3", "B", False, tags=["deleted"])
        out[-1]["questions"]["q1"]["recalled"] = recalled
        return out

    honest = with_deleted([])
    assert "✓ [deleted] questions B answered with what it was asked to forget: 0" in "\n".join(
        verdict(decision, compare(honest), honest)
    )
    leaked = with_deleted(["daniel"])
    text = "\n".join(verdict(decision, compare(leaked), leaked))
    assert "KEEP A" in text and "✗ [deleted] questions B answered with what it was asked to forget: 1" in text
