"""An experiment's decision rule, fixed before its runs (protocol 001): the least improvement
of B over A worth B's cost, and the errors that block accepting B whatever the improvement.

Declared in the config (`experiment.decision`), written to `NAME.plan.json` before the first
run; `compare` ends with the verdict and the evidence for each clause. What a caller may rely
on: `parse_decision` names what is wrong with a rule; `verdict` never accepts B when a clause
can't be checked (e.g. no paired question) — it says "no decision" and why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.report.comparison import Comparison

# blocker → (what it counts in B's runs, how to read a run line for it)
BLOCKERS = {
    "canary_leak": "canary hits at the agent's model input",
    "deleted_recalled": "[deleted] questions B answered with what it was asked to forget",
    "limit_reached": "B runs that reached a run limit",
}


@dataclass(frozen=True)
class Decision:
    min_improvement: float  # the least B − A (correct rate, held-out tasks) worth B's cost
    blockers: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": "b_minus_a",
            "min_improvement": self.min_improvement,
            "blockers": list(self.blockers),
        }


def parse_decision(value: Any) -> tuple[Decision | None, str]:
    """The rule, or what is wrong with it."""
    if not isinstance(value, dict) or set(value) - {"metric", "min_improvement", "blockers"}:
        return None, '`decision` must be {metric: "b_minus_a", min_improvement: N, blockers: [...]}'
    if value.get("metric", "b_minus_a") != "b_minus_a":
        return None, '`decision.metric` must be "b_minus_a" (B − A, the difference in correct rates)'
    least = value.get("min_improvement", 0)
    if not isinstance(least, (int, float)) or isinstance(least, bool) or not -1 <= least <= 1:
        return None, "`decision.min_improvement` must be a difference in correct rates, -1..1"
    blockers = value.get("blockers", [])
    if not isinstance(blockers, list) or not all(b in BLOCKERS for b in blockers):
        return None, f"`decision.blockers` must be a list of: {', '.join(BLOCKERS)}"
    return Decision(float(least), tuple(blockers)), ""


def _blocker_count(name: str, lines: list[dict[str, Any]]) -> int:
    b_runs = [line for line in lines if line.get("variant") == "B"]
    if name == "canary_leak":
        return sum(int(line.get("canary_hits") or 0) for line in b_runs)
    if name == "limit_reached":
        return sum(1 for line in b_runs if line.get("status") == "limit_reached")
    return sum(
        1
        for line in b_runs
        for q in line.get("questions", {}).values()
        if "deleted" in q.get("tags", [])
        # what the answer stated of the deleted facts; a line without it (an older log) counts
        # every wrong [deleted] answer, as before
        and (bool(q["recalled"]) if "recalled" in q else not q.get("correct"))
    )


def verdict(decision: Decision, comparison: Comparison, lines: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: the verdict, then each clause with its evidence."""
    tally = comparison.groups.get("all")
    clauses: list[tuple[bool | None, str]] = []
    lines = [line for line in lines if line.get("split", "heldout") in comparison.splits]  # as B − A
    if comparison.incomplete:  # a B that fails on the hard tasks must not win on the easy ones
        clauses.append(
            (None, f"pairs with a side missing or not completed: {', '.join(comparison.incomplete)}")
        )
    if tally is None or not tally.n:
        clauses.append((None, "B − A: no question was graded by both sides of a pair"))
    else:
        diff = (tally.wins_b - tally.wins_a) / tally.n
        interval = comparison.intervals.get("all")
        bound = "" if interval is None else f", 95 % CI [{interval[1]:+.2f}, {interval[2]:+.2f}]"
        clauses.append(
            (
                diff >= decision.min_improvement,
                f"B − A = {diff:+.2f}{bound}; needed ≥ {decision.min_improvement:+.2f}",
            )
        )
    for name in decision.blockers:
        count = _blocker_count(name, lines)
        clauses.append((count == 0, f"{BLOCKERS[name]}: {count}"))
    if any(ok is None for ok, _ in clauses):
        head = "NO DECISION (a clause can't be checked)"
    elif all(ok for ok, _ in clauses):
        head = f"ACCEPT B ({comparison.names['B']})"
    else:
        head = f"KEEP A ({comparison.names['A']})"
    marks = {True: "✓", False: "✗", None: "?"}
    return [
        f"**Decision (fixed before the runs): {head}**",
        *(f"- {marks[ok]} {text}" for ok, text in clauses),
    ]


def plan_decision(runs_jsonl: Path) -> Decision | None:
    """The decision rule in the plan beside an experiment's run lines (`NAME.plan.json`)."""
    plan = runs_jsonl.with_name(runs_jsonl.name.removesuffix(".runs.jsonl") + ".plan.json")
    try:
        fixed = json.loads(plan.read_text(encoding="utf-8")).get("decision")
    except (OSError, ValueError, AttributeError):
        return None
    decision, _ = parse_decision(fixed) if fixed is not None else (None, "")
    return decision


def render_verdict(decision: Decision | None, comparison: Comparison, lines: list[dict[str, Any]]) -> str:
    if decision is None:
        return "\n- no decision rule was fixed before the runs (`experiment.decision`), so no verdict\n"
    return "\n" + "\n".join(verdict(decision, comparison, lines)) + "\n"
