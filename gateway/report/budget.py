"""Budget-conditioned reliability on a scale ladder (design §7; arXiv 2605.07313).

For each graded question τ of each run: C(τ) = the answer counts as correct (score ≥ 5) and
R(τ) = the agent's memory calls the recorder attributed to that question. Per rung and per
declared budget B:

- Pass@B  = share of τ with C(τ) and R(τ) ≤ B;
- p_exh   = share of τ with R(τ) > B (over budget, right or wrong);
- p_wrong = share of τ with R(τ) ≤ B and not C(τ) (wrong within budget);

so the three sum to 1. Intervals are Wilson 95 %. The collapse onset is the first rung whose
Pass@B falls below the target ρ; the conservative onset the first rung whose interval's lower
bound does (no later than the point onset). A rung with any run whose LLM traffic was not
recorded is "budget not observable": no zeros are reported for calls nobody could see.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from gateway.report.recordings import RecordedRun
from persona.grading.exact import PASS_SCORE

Z95 = 1.959964


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion; (0, 1) when there is no trial."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def percentile(values: list[int] | list[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


@dataclass(frozen=True)
class Outcome:
    run_id: str
    question_id: str
    correct: bool
    memory_calls: int


@dataclass(frozen=True)
class BudgetCell:
    budget: int
    passed: int
    over: int
    wrong: int
    n: int

    @property
    def pass_rate(self) -> float:
        return self.passed / self.n if self.n else 0.0

    @property
    def p_exh(self) -> float:
        return self.over / self.n if self.n else 0.0

    @property
    def p_wrong(self) -> float:
        return self.wrong / self.n if self.n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.passed, self.n)


@dataclass
class Rung:
    name: str
    distractors: int
    runs: list[RecordedRun]
    outcomes: list[Outcome]
    observable: bool
    cells: dict[int, BudgetCell] = field(default_factory=dict)

    @property
    def p90(self) -> float | None:
        if not self.observable or not self.outcomes:
            return None
        return percentile([o.memory_calls for o in self.outcomes], 90)

    @property
    def accuracy(self) -> float | None:
        return sum(o.correct for o in self.outcomes) / len(self.outcomes) if self.outcomes else None

    @property
    def evidence_hashes(self) -> set[str]:
        return {r.evidence_hash for r in self.runs}


@dataclass
class Ladder:
    """One benchmark × agent × persona played on several rungs."""

    label: str
    rungs: list[Rung]
    budgets: tuple[int, ...]
    target: float

    @property
    def evidence_identical(self) -> bool:
        return len(set().union(*(r.evidence_hashes for r in self.rungs))) == 1 if self.rungs else False

    def onset(self, budget: int) -> tuple[str | None, str | None]:
        """(point onset, conservative onset): the first rungs where Pass@B, respectively its
        lower Wilson bound, falls below the target ρ; None where it never does (or where the
        budget could not be observed)."""
        point = conservative = None
        for rung in self.rungs:
            cell = rung.cells.get(budget)
            if cell is None or not cell.n:
                continue
            if conservative is None and cell.interval[0] < self.target:
                conservative = rung.name
            if point is None and cell.pass_rate < self.target:
                point = rung.name
        return point, conservative


def outcomes_of(run: RecordedRun) -> list[Outcome]:
    s = run.summary
    return [
        Outcome(s.run_id, qid, ev.score >= PASS_SCORE, s.memory_calls_for(qid))
        for qid, ev in s.evaluations.items()
    ]


def build_ladders(runs: list[RecordedRun]) -> list[Ladder]:
    """Group the runs played on a rung by benchmark, agent and persona; one ladder each."""
    groups: dict[str, list[RecordedRun]] = defaultdict(list)
    for run in runs:
        if run.rung and run.benchmark.scale is not None:
            h = run.header
            experiment = run.meta.get("experiment")
            label = str(
                run.meta.get("id")
                or (experiment and f"{experiment}, variant {run.meta.get('variant')}")
                or f"{run.benchmark.name} × {h.agent.get('adapter', h.agent.get('profile', '?'))}"
            )
            groups[label + "\0" + repr(sorted(h.agent.items())) + repr(sorted(h.persona.items()))].append(run)
    ladders = []
    for key, members in groups.items():
        spec = members[0].benchmark.scale
        assert spec is not None
        rungs = []
        for name in spec.rungs:
            at = [r for r in members if r.rung == name]
            if not at:
                continue
            outcomes = [o for r in at for o in outcomes_of(r)]
            observable = all(r.observed for r in at)
            rung = Rung(name, spec.ladder[name], at, outcomes, observable)
            if observable:
                for b in spec.budgets:
                    passed = sum(o.correct and o.memory_calls <= b for o in outcomes)
                    over = sum(o.memory_calls > b for o in outcomes)
                    rung.cells[b] = BudgetCell(b, passed, over, len(outcomes) - passed - over, len(outcomes))
            rungs.append(rung)
        ladders.append(Ladder(key.split("\0")[0], rungs, spec.budgets, spec.target))
    return ladders


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def render_ladder(ladder: Ladder) -> str:
    """The budget table and the onset line, as Markdown."""
    lines = [
        f"### Scale ladder: {ladder.label}",
        "",
        f"Target ρ = {ladder.target:g}; budgets B = {', '.join(map(str, ladder.budgets))} memory calls per question; "
        "correct = score ≥ 5; intervals Wilson 95 %.",
        "",
        "| rung | distractor sessions | runs | questions | accuracy | P90 memory calls "
        "| B | Pass@B [95 % CI] | p_exh | p_wrong |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rung in ladder.rungs:
        acc = "—" if rung.accuracy is None else _pct(rung.accuracy)
        head = f"| {rung.name} | {rung.distractors} | {len(rung.runs)} | {len(rung.outcomes)} | {acc} "
        if not rung.observable:
            lines.append(head + "| budget not observable | — | — | — | — |")
            continue
        for b in ladder.budgets:
            cell = rung.cells[b]
            lo, hi = cell.interval
            p90 = "—" if rung.p90 is None else f"{rung.p90:g}"
            lines.append(
                head + f"| {p90} | {b} | {_pct(cell.pass_rate)} [{_pct(lo)}, {_pct(hi)}] "
                f"| {_pct(cell.p_exh)} | {_pct(cell.p_wrong)} |"
            )
            head = "| | | | | "
    lines.append("")
    if not all(r.observable for r in ladder.rungs):
        lines.append(
            "Budget not observable on some rungs: the agent's LLM traffic was not recorded there, so its "
            "memory calls could not be counted (configure `llm.upstream` to record them)."
        )
    for b in ladder.budgets:
        point, conservative = ladder.onset(b)
        if all(b not in r.cells for r in ladder.rungs):
            continue
        lines.append(
            f"- Collapse onset at B = {b} (Pass@B < ρ = {ladder.target:g}): "
            f"{point or 'none up to ' + ladder.rungs[-1].name}; conservative (lower bound < ρ): "
            f"{conservative or 'none up to ' + ladder.rungs[-1].name}"
        )
    hashes = sorted(set().union(*(r.evidence_hashes for r in ladder.rungs)))
    verdict = (
        "identical on every rung"
        if ladder.evidence_identical
        else f"NOT identical ({len(hashes)} variants; for an LLM persona, replay one recording on every "
        "rung: `marathon replay RUN --rung …`)"
    )
    lines.append(
        "- Evidence utterances: "
        + verdict
        + " — "
        + "; ".join(f"{r.name}: {', '.join(sorted(h[:12] for h in r.evidence_hashes))}" for r in ladder.rungs)
    )
    return "\n".join(lines) + "\n"
