"""Budget-conditioned reliability on a scale ladder (design §7; arXiv 2605.07313, eq. 1).

For each question τ and rollout (a run at the rung that graded τ):

- C(τ) ∈ {0, 1}: a correct final answer, by the ladder's `correct` rule (default
  `first_try`: score 10 without the search-memory nudge; see `persona.benchmark.scale`);
- R(τ): the agent's *retrieval* calls to its memory in the question's turn — memory reads the
  recorder attributed to the question, writes and the nudge turn's calls left out (they are
  reported apart).

Per rung and budget B, as the paper defines them — a mean over rollouts per question, then a
mean over questions (a question reached by fewer rollouts weighs the same):

- Pass@B  = E_τ E_r [C ∧ R ≤ B];  p_exh = E_τ E_r [R > B];  p_wrong = E_τ E_r [R ≤ B ∧ ¬C]

so the three sum to 1. Only rollouts that graded τ count for τ; rollouts that stopped before
it are counted as excluded. Intervals are 95 % percentile intervals of a bootstrap clustered
by question (questions resampled, then rollouts within each), 2,000 resamples, seeded — not
Wilson on pooled pairs, which are not independent. P90R is the 90th percentile of R over all
(rollout, question) pairs, linearly interpolated between closest ranks. The collapse onset is
the first rung whose Pass@B falls below the target ρ; the conservative onset the first whose
interval's lower bound does. A rung with any run whose LLM traffic was not recorded is
"budget not observable": no zeros are reported for calls nobody could see.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gateway.report.recordings import RecordedRun
from gateway.step_progress import StepProgress
from persona.outcome import is_correct

Z95 = 1.959964
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20260513


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion; (0, 1) when there is no trial."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def percentile(values: Sequence[int | float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo))


@dataclass(frozen=True)
class Outcome:
    run_id: str
    question_id: str
    correct: bool  # C(τ)
    retrievals: int  # R(τ)
    writes: int = 0
    nudge_calls: int = 0
    returned_items: int = 0  # what its reads returned to the model (returned-item parity, paper 003)
    returned_chars: int = 0


def question_mean(outcomes: Sequence[Outcome], hit: Callable[[Outcome], bool]) -> float:
    """E_τ E_r [hit]: the mean over rollouts of each question, then over questions."""
    by_question: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_question[o.question_id].append(o)
    if not by_question:
        return 0.0
    return sum(sum(map(hit, rs)) / len(rs) for rs in by_question.values()) / len(by_question)


def cluster_bootstrap(
    outcomes: Sequence[Outcome], hit: Callable[[Outcome], bool], seed: int = BOOTSTRAP_SEED
) -> tuple[float, float]:
    """95 % percentile interval of `question_mean`: questions resampled with replacement,
    then each drawn question's rollouts resampled within it."""
    by_question: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_question[o.question_id].append(o)
    groups = [[hit(o) for o in rs] for rs in by_question.values()]
    if not groups:
        return 0.0, 1.0
    rng = random.Random(seed)
    means = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        total = 0.0
        for _ in groups:
            group = groups[rng.randrange(len(groups))]
            total += sum(group[rng.randrange(len(group))] for _ in group) / len(group)
        means.append(total / len(groups))
    return percentile(means, 2.5), percentile(means, 97.5)


@dataclass(frozen=True)
class BudgetCell:
    budget: int
    pass_rate: float
    p_exh: float
    p_wrong: float
    interval: tuple[float, float]
    questions: int
    rollouts: int  # (rollout, question) pairs counted


def budget_cell(outcomes: Sequence[Outcome], budget: int) -> BudgetCell:
    return BudgetCell(
        budget,
        question_mean(outcomes, lambda o: o.correct and o.retrievals <= budget),
        question_mean(outcomes, lambda o: o.retrievals > budget),
        question_mean(outcomes, lambda o: o.retrievals <= budget and not o.correct),
        cluster_bootstrap(outcomes, lambda o: o.correct and o.retrievals <= budget),
        len({o.question_id for o in outcomes}),
        len(outcomes),
    )


@dataclass
class Rung:
    name: str
    distractors: int
    runs: list[RecordedRun]
    outcomes: list[Outcome]
    observable: bool
    cells: dict[int, BudgetCell] = field(default_factory=dict)
    excluded: int = 0  # (rollout, question) pairs not reached: the run stopped before grading it
    unresolved: int = 0  # (rollout, question) pairs left out: the grader was not sure of the answer

    @property
    def p90(self) -> float | None:
        if not self.observable or not self.outcomes:
            return None
        return percentile([o.retrievals for o in self.outcomes], 90)

    @property
    def exposure(self) -> tuple[float, float] | None:
        """Mean items and characters the memory reads of a question's first turn returned."""
        if not self.observable or not self.outcomes:
            return None
        n = len(self.outcomes)
        return sum(o.returned_items for o in self.outcomes) / n, sum(
            o.returned_chars for o in self.outcomes
        ) / n

    @property
    def accuracy(self) -> float | None:
        return question_mean(self.outcomes, lambda o: o.correct) if self.outcomes else None

    @property
    def writes(self) -> int:
        return sum(o.writes for o in self.outcomes)

    @property
    def nudge_calls(self) -> int:
        return sum(o.nudge_calls for o in self.outcomes)

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
    correct: str = "first_try"

    @property
    def evidence_identical(self) -> bool:
        return len(set().union(*(r.evidence_hashes for r in self.rungs))) == 1 if self.rungs else False

    def onset(self, budget: int) -> tuple[str | None, str | None]:
        """(point onset, conservative onset): the first rungs where Pass@B, respectively its
        interval's lower bound, falls below the target ρ; None where it never does (or where
        the budget could not be observed)."""
        point = conservative = None
        for rung in self.rungs:
            cell = rung.cells.get(budget)
            if cell is None or not cell.rollouts:
                continue
            if conservative is None and cell.interval[0] < self.target:
                conservative = rung.name
            if point is None and cell.pass_rate < self.target:
                point = rung.name
        return point, conservative


def outcomes_of(run: RecordedRun, rule: str) -> list[Outcome]:
    s = run.summary
    out = []
    for qid, ev in s.evaluations.items():
        if not ev.certain:  # a guess is no outcome: left out of Pass@B (the rung says how many)
            continue
        memory = s.memory_for(qid)
        out.append(
            Outcome(
                s.run_id,
                qid,
                is_correct(rule, ev.score, ev.attempts),
                memory.reads,
                memory.writes,
                memory.nudge,
                memory.returned_items,
                memory.returned_chars,
            )
        )
    return out


def build_ladders(runs: list[RecordedRun]) -> list[Ladder]:
    """Group the runs played on a rung by benchmark, agent and persona; one ladder each."""
    groups: dict[str, list[RecordedRun]] = defaultdict(list)
    for run in runs:
        if run.rung and run.benchmark.scale is not None:
            h = run.header
            meta = run.meta
            label = (
                meta.id
                or (meta.experiment and f"{meta.experiment}, variant {meta.variant}")
                or f"{run.benchmark.name} × {h.agent.get('adapter', h.agent.get('profile', '?'))}"
            )
            groups[label + "\0" + repr(sorted(h.agent.items())) + repr(sorted(h.persona.items()))].append(run)
    ladders = []
    with StepProgress("bootstrapping ladders", len(groups)) as progress:
        for key, members in groups.items():
            ladders.append(_ladder(key.split("\0")[0], members))
            progress.advance(key.split("\0")[0])
    return ladders


def _ladder(label: str, members: list[RecordedRun]) -> Ladder:
    """One ladder: each rung's outcomes, and its budget cells (bootstrapped: the slow part)."""
    spec = members[0].benchmark.scale
    assert spec is not None
    rungs = []
    for name in spec.rungs:
        at = [r for r in members if r.rung == name]
        if not at:
            continue
        outcomes = [o for r in at for o in outcomes_of(r, spec.correct)]
        planned = {q.id for r in at for q in r.benchmark.questions}
        observable = all(r.observed for r in at)
        unresolved = sum(len(r.summary.unresolved) for r in at)
        rung = Rung(
            name,
            spec.ladder[name],
            at,
            outcomes,
            observable,
            excluded=len(at) * len(planned) - len(outcomes) - unresolved,
            unresolved=unresolved,
        )
        if observable:
            rung.cells = {b: budget_cell(outcomes, b) for b in spec.budgets}
        rungs.append(rung)
    return Ladder(label, rungs, spec.budgets, spec.target, spec.correct)


_CORRECT_WORDS = {
    "first_try": "a fully correct answer at the first try (score 10, no nudge)",
    "any_full": "a fully correct answer, with or without the nudge",
}


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def render_ladder(ladder: Ladder) -> str:
    """The budget table and the onset line, as Markdown."""
    lines = [
        f"### Scale ladder: {ladder.label}",
        "",
        f"Target ρ = {ladder.target:g}; budgets B = {', '.join(map(str, ladder.budgets))} retrieval calls per question "
        f"(R(τ): memory reads in the question's turn; writes and the nudge turn's calls apart). "
        f"C(τ) = {_CORRECT_WORDS.get(ladder.correct, ladder.correct)} (`correct: {ladder.correct}`). "
        "Pass@B, p_exh, p_wrong: mean over each question's rollouts, then over questions (arXiv 2605.07313, eq. 1); "
        "95 % intervals: bootstrap clustered by question. P90R: 90th percentile of R over (rollout, question) "
        "pairs, linear interpolation.",
        "",
        "| rung | distractor sessions | runs | questions | not reached | accuracy | P90R | writes | nudge-turn calls "
        "| B | Pass@B [95 % CI] | p_exh | p_wrong |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rung in ladder.rungs:
        acc = "—" if rung.accuracy is None else _pct(rung.accuracy)
        questions = len({o.question_id for o in rung.outcomes})
        head = (
            f"| {rung.name} | {rung.distractors} | {len(rung.runs)} | {questions} | {rung.excluded} | {acc} "
        )
        if not rung.observable:
            lines.append(head + "| budget not observable | — | — | — | — | — | — |")
            continue
        if not rung.outcomes:  # every run failed or was unresolved: no figure, not 0 % [0 %, 100 %]
            lines.append(head + "| no data: no question of it was graded | — | — | — | — | — | — |")
            continue
        head += f"| {'—' if rung.p90 is None else f'{rung.p90:g}'} | {rung.writes} | {rung.nudge_calls} "
        for b in ladder.budgets:
            cell = rung.cells[b]
            lo, hi = cell.interval
            lines.append(
                head + f"| {b} | {_pct(cell.pass_rate)} [{_pct(lo)}, {_pct(hi)}] "
                f"| {_pct(cell.p_exh)} | {_pct(cell.p_wrong)} |"
            )
            head = "| | | | | | | | | "
    unresolved = [f"{r.name}: {r.unresolved}" for r in ladder.rungs if r.unresolved]
    if unresolved:
        lines += [
            "",
            "Left out of Pass@B and accuracy, their grades unresolved (the grader was not sure; "
            f"`marathon rescore RUN --grader …` resolves them): {'; '.join(unresolved)} (rollout, question) pairs.",
        ]
    lines.append("")
    if any(r.excluded for r in ladder.rungs):
        lines.append(
            "Not reached: (rollout, question) pairs left out because the run stopped before grading the "
            "question; each question's mean is over the rollouts that reached it."
        )
    if not all(r.observable for r in ladder.rungs):
        lines.append(
            "Budget not observable on some rungs: the agent's LLM traffic was not recorded there, so its "
            "memory calls could not be counted (configure `llm.upstream` to record them)."
        )
    blind = [r.name for r in ladder.rungs if not r.observable or not r.outcomes]
    if blind:
        lines.append(f"- The onset skips rungs with no data (not observable, or nothing graded): {', '.join(blind)}")
    for b in ladder.budgets:
        point, conservative = ladder.onset(b)
        if all(b not in r.cells for r in ladder.rungs):
            continue
        lines.append(
            f"- Collapse onset at B = {b} (Pass@B < ρ = {ladder.target:g}): "
            f"{point or 'none up to ' + ladder.rungs[-1].name}; conservative (lower bound < ρ): "
            f"{conservative or 'none up to ' + ladder.rungs[-1].name}"
        )
    exposed = [(r.name, r.exposure) for r in ladder.rungs if r.exposure is not None]
    if exposed:
        lines.append(
            "- Exposure (what the memory reads of a question's first turn returned to the model, mean per "
            "question; paper 003's returned-item parity): "
            + "; ".join(f"{name}: {e[0]:.1f} items, {e[1]:,.0f} chars" for name, e in exposed)
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
