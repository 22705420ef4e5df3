"""An experiment's decision rule, fixed before its runs (protocol 001): the least improvement
of B over A worth B's cost — tested against the lower bound of its 95 % interval, so one lucky
task can't accept B —, how much more B may cost and how much slower it may be, how far B may fall
behind on any group of tasks (001: "an average over all tasks can hide a regression on the new
contract"), and the errors that block accepting B whatever the improvement.

Declared in the config (`experiment.decision`), written to `NAME.plan.json` before the first
run; `compare` ends with the verdict and the evidence for each clause. What a caller may rely
on: `parse_decision` names what is wrong with a rule; `verdict` keeps A when a clause fails, and
never accepts B when a clause can't be checked (no paired question, fewer than 5 clusters for an
interval, a cost with an unknown price) — it says "no decision" and which clause.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.report.comparison import Comparison
from gateway.report.run_line import RunLine
from gateway.report.verdict import Clause, Ruling, Verdict

# blocker → (what it counts in B's runs, how to read a run line for it)
BLOCKERS = {
    "canary_leak": "canary hits at the agent's model input",
    "deleted_recalled": "[deleted] questions B answered with what it was asked to forget",
    "limit_reached": "B runs that reached a run limit",
}


@dataclass(frozen=True)
class Decision:
    min_improvement: float  # the least B − A (correct rate, held-out tasks): its interval's lower bound
    blockers: tuple[str, ...]
    max_cost_increase: float | None = None  # 0.2: B's agent's median cost per task at most +20 % of A's
    max_slowdown: float | None = None  # 1.5: B's agent's median time per task at most ×1.5 of A's
    max_group_regression: float | None = None  # 0.1: no task group where B − A < −0.1

    def to_json(self) -> dict[str, Any]:
        optional = {
            k: v
            for k, v in (
                ("max_cost_increase", self.max_cost_increase),
                ("max_slowdown", self.max_slowdown),
                ("max_group_regression", self.max_group_regression),
            )
            if v is not None
        }
        return {
            "metric": "b_minus_a",
            "min_improvement": self.min_improvement,
            "blockers": list(self.blockers),
            **optional,
        }


def parse_decision(value: Any) -> tuple[Decision | None, str]:
    """The rule, or what is wrong with it."""
    keys = {
        "metric",
        "min_improvement",
        "blockers",
        "max_cost_increase",
        "max_slowdown",
        "max_group_regression",
    }
    if not isinstance(value, dict) or set(value) - keys:
        return None, (
            '`decision` must be {metric: "b_minus_a", min_improvement: N, blockers: [...], '
            "max_cost_increase?: 0.2, max_slowdown?: 1.5, max_group_regression?: 0.1}"
        )
    if value.get("metric", "b_minus_a") != "b_minus_a":
        return None, '`decision.metric` must be "b_minus_a" (B − A, the difference in correct rates)'
    least = value.get("min_improvement", 0)
    if not isinstance(least, (int, float)) or isinstance(least, bool) or not 0 <= least <= 1:
        return None, (
            "`decision.min_improvement` must be a difference in correct rates, 0..1 (a negative one "
            "would call B a winner while its interval crosses zero)"
        )
    blockers = value.get("blockers", [])
    if not isinstance(blockers, list) or not all(b in BLOCKERS for b in blockers):
        return None, f"`decision.blockers` must be a list of: {', '.join(BLOCKERS)}"
    bounds: dict[str, float | None] = {}
    for key, low, high, meaning in (
        ("max_cost_increase", 0.0, 100.0, "a share: 0.2 = at most +20 % spend per task"),
        ("max_slowdown", 1.0, 100.0, "a factor ≥ 1: 1.5 = no slower than ×1.5 the median time"),
        ("max_group_regression", 0.0, 1.0, "a difference in correct rates, 0..1"),
    ):
        v = value.get(key)
        if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or not low <= v <= high):
            return None, f"`decision.{key}` must be {meaning}"
        bounds[key] = None if v is None else float(v)
    return Decision(float(least), tuple(blockers), **bounds), ""


def _blocker_count(name: str, lines: list[RunLine]) -> int:
    b_runs = [line for line in lines if line.variant == "B"]
    if name == "canary_leak":
        return sum(line.canary_hits for line in b_runs)
    if name == "limit_reached":
        return sum(1 for line in b_runs if line.limit_reached)
    return sum(
        1
        for line in b_runs
        for q in line.questions.values()
        if "deleted" in q.tags
        # what the answer stated of the deleted facts; a line without it (an older log) counts
        # every wrong [deleted] answer, as before
        and (bool(q.recalled) if q.recalled is not None else not q.correct)
    )


def decide(decision: Decision, comparison: Comparison, lines: list[RunLine]) -> Ruling:
    """The rule applied to the comparison: each clause with its evidence, and the verdict."""
    tally = comparison.groups.get("all")
    clauses: list[Clause] = []
    lines = [line for line in lines if line.split in comparison.splits]  # as B − A
    if comparison.graders:  # two graders: a difference may be a rule change, not the agents
        clauses.append(Clause(None, f"pairs graded by different graders: {'; '.join(comparison.graders[:3])}"))
    if comparison.incomplete:  # a B that fails on the hard tasks must not win on the easy ones
        clauses.append(Clause(None, f"pairs with a side missing or not completed: {', '.join(comparison.incomplete)}"))
    if tally is None or not tally.n:
        clauses.append(Clause(None, "B − A: no question was graded by both sides of a pair"))
    else:
        diff = (tally.wins_b - tally.wins_a) / tally.n
        interval = comparison.intervals.get("all")
        if interval is None:
            clauses.append(
                Clause(
                    None,
                    f"B − A = {diff:+.2f}, but too few tasks for an interval ({comparison.clusters} cluster(s) < 5): "
                    f"its lower bound can't be tested against the needed {decision.min_improvement:+.2f}",
                )
            )
        else:
            clauses.append(_benefit(diff, interval[1], interval[2], decision.min_improvement))
    clauses += _worse_tags(comparison)
    clauses += _tradeoffs(decision, comparison)
    for name in decision.blockers:
        count = _blocker_count(name, lines)
        clauses.append(Clause(count == 0, f"{BLOCKERS[name]}: {count}"))
    return Ruling.of(clauses)


def _benefit(diff: float, low: float, high: float, least: float) -> Clause:
    """Seed 001's three outcomes from the interval and the margin: a benefit (the whole
    interval above the needed improvement — strictly: equal arms never win), no benefit worth
    it (the whole interval below it; harm when below zero), or not enough data to tell (the
    interval holds the margin)."""
    shown = f"B − A = {diff:+.2f}, 95 % CI [{low:+.2f}, {high:+.2f}]"
    if low > least:
        return Clause(True, f"{shown}: a benefit — its lower bound is above the needed {least:+.2f}")
    if high < least:
        what = "harm: B is worse, its whole interval below 0" if high < 0 else (
            f"no benefit worth it: its whole interval is below the needed {least:+.2f}"
        )
        return Clause(False, f"{shown}: {what}")
    return Clause(None, f"{shown}: not enough data — the interval holds the needed {least:+.2f}")


def _worse_tags(c: Comparison) -> list[Clause]:
    """Every question group (tag) B makes worse, beyond chance (its interval below 0) or with too
    few tasks to tell: an average over all questions can hide a regression on one kind."""
    out: list[Clause] = []
    for tag, interval in sorted(c.intervals.items()):
        tally = c.groups.get(tag)
        if tag == "all" or tally is None or not tally.n:
            continue
        diff = (tally.wins_b - tally.wins_a) / tally.n
        if interval is not None and interval[2] < 0:
            out.append(Clause(False, f"tag {tag}: B is worse, B − A = {diff:+.2f} [{interval[1]:+.2f}, {interval[2]:+.2f}]"))
        elif interval is None and diff < 0:
            out.append(Clause(None, f"tag {tag}: B − A = {diff:+.2f}, too few tasks to tell harm from chance"))
    return out


def render_ruling(ruling: Ruling, names: dict[str, str]) -> list[str]:
    """Markdown lines: the verdict in the experiment's words, then each clause with its evidence."""
    head = {
        Verdict.ACCEPT: f"ACCEPT B ({names['B']})",
        Verdict.REJECT: f"KEEP A ({names['A']})",
        Verdict.NO_DECISION: "NO DECISION (a clause can't be checked)",
    }[ruling.verdict]
    decided = ruling.deciding
    because = f" — decided by: {decided.text}" if decided is not None else ""
    return [f"**Decision (fixed before the runs): {head}**{because}", *(f"- {c.mark} {c.text}" for c in ruling.clauses)]


def verdict(decision: Decision, comparison: Comparison, lines: list[RunLine]) -> list[str]:
    """`decide`, rendered."""
    return render_ruling(decide(decision, comparison, lines), comparison.names)


def _tradeoffs(decision: Decision, c: Comparison) -> list[Clause]:
    """The cost, time and per-group clauses, each with its evidence."""
    out: list[Clause] = []
    if decision.max_cost_increase is not None:
        a, b = c.cost.get("A"), c.cost.get("B")
        limit = decision.max_cost_increase
        if a is None or b is None:
            out.append(Clause(None, "cost per task: unknown (a model's price is unknown), so +cost can't be checked"))
        else:
            ok = b[0] <= a[0] * (1 + limit) + 1e-12
            out.append(Clause(ok, f"the agent's median cost per task: B ${b[0]:.4f} vs A ${a[0]:.4f}; at most +{limit:.0%}"))
    if decision.max_slowdown is not None:
        ta, tb = c.time.get("A"), c.time.get("B")
        if ta is None or tb is None:
            out.append(Clause(None, "the agent's median time per task: not measured on both sides"))
        else:
            ok = tb[0] <= ta[0] * decision.max_slowdown + 1e-9
            out.append(
                Clause(
                    ok,
                    f"the agent's median time per task: B {tb[0]:.1f} s vs A {ta[0]:.1f} s; "
                    f"at most ×{decision.max_slowdown:g}",
                )
            )
    if decision.max_group_regression is not None:
        x = decision.max_group_regression
        if not c.task_groups:
            out.append(Clause(None, "task groups: none compared"))
        for group, (diff, n) in sorted(c.task_groups.items()):
            out.append(Clause(diff >= -x, f"task group {group} ({n} questions): B − A = {diff:+.2f}; at least {-x:+.2f}"))
    return out


def plan_decision(runs_jsonl: Path) -> Decision | None:
    """The decision rule in the plan beside an experiment's run lines (`NAME.plan.json`)."""
    plan = runs_jsonl.with_name(runs_jsonl.name.removesuffix(".runs.jsonl") + ".plan.json")
    try:
        fixed = json.loads(plan.read_text(encoding="utf-8")).get("decision")
    except (OSError, ValueError, AttributeError):
        return None
    decision, _ = parse_decision(fixed) if fixed is not None else (None, "")
    return decision


def render_verdict(decision: Decision | None, comparison: Comparison, lines: list[RunLine]) -> str:
    """The verdict under the rule fixed before the runs: the plan's (`decision`), which must be
    the one the runs recorded — or theirs, when the plan is gone."""
    recorded = {json.dumps(line.decision, sort_keys=True) for line in lines if line.decision}
    if len(recorded) > 1:
        return "\n- no verdict: the runs recorded different decision rules (runs of two plans mixed)\n"
    if recorded and decision is not None and json.dumps(decision.to_json(), sort_keys=True) not in recorded:
        return (
            "\n- no verdict: NAME.plan.json's decision rule is not the one its runs recorded — the plan was "
            f"changed after them (recorded: {next(iter(recorded))})\n"
        )
    if decision is None and recorded:
        decision, _ = parse_decision(json.loads(next(iter(recorded))))
    if decision is None:
        return "\n- no decision rule was fixed before the runs (`experiment.decision`), so no verdict\n"
    return "\n" + "\n".join(verdict(decision, comparison, lines)) + "\n"
