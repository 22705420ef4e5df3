"""Paired A/B experiments (design §7): one log line per run, and the comparison.

A line says everything needed to audit a run without opening it: task, pair (the group the
A and B runs of one task × repeat form), repeat, variant, its position in the pair, versions,
the memory snapshot it started from, outcome, memory calls, old facts it still applied, time,
cost and where its recording is. Lines are rebuilt from the recordings every time (JSONL and
CSV side by side), so the comparison never needs an agent.

`compare()` pairs each question of a task × repeat across A and B: wins A (A right, B wrong),
wins B, both, neither — per question group (tag) and overall — with a bootstrap interval of
the difference in correct rates that resamples whole tasks (answers within a task are not
independent), and time and cost medians with their spread.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field

from gateway.report.autopsy import Stage
from gateway.report.budget import percentile
from gateway.report.operation_figures import OperationFigure, operation_figures
from gateway.report.run_line import RunLine
from persona.grading.identity import grader_identity

BOOTSTRAP_SAMPLES = 2000
MIN_CLUSTERS = 5  # fewer independent tasks give no interval worth printing
@dataclass
class GroupTally:
    wins_a: int = 0
    wins_b: int = 0
    both: int = 0
    neither: int = 0

    @property
    def n(self) -> int:
        return self.wins_a + self.wins_b + self.both + self.neither

    def add(self, a: bool, b: bool) -> None:
        if a and b:
            self.both += 1
        elif a:
            self.wins_a += 1
        elif b:
            self.wins_b += 1
        else:
            self.neither += 1


@dataclass
class TaskDiff:
    task: str
    cluster: str
    group: str
    repeats: list[float]  # B − A correct rate of each repeat (pair)

    @property
    def mean(self) -> float:
        return sum(self.repeats) / len(self.repeats)


@dataclass
class Comparison:
    experiment: str
    names: dict[str, str]  # A (baseline, without the added memory) and B (with it) → the config's names
    splits: tuple[str, ...]
    clusters: int
    pairs: int
    incomplete: list[str]
    groups: dict[str, GroupTally]  # question tag → tally
    intervals: dict[
        str, tuple[float, float, float] | None
    ]  # question tag → (B − A, lo, hi); None: too few clusters
    tasks: list[TaskDiff]
    task_groups: dict[str, tuple[float, int]]  # task group → (B − A over its questions, questions)
    left_out_split: int  # runs of other splits, not compared
    time: dict[str, tuple[float, float, float]]  # role → (median, p25, p75) seconds
    cost: dict[str, tuple[float, float, float] | None]
    # where the wrong answers' facts were lost (the memory autopsy's stage) → {"A": n, "B": n}
    chain: dict[str, dict[str, int]] = field(default_factory=dict)
    unresolved: list[str] = field(default_factory=list)  # pair:question left out: a grade unresolved
    # role → characters its memory reads returned per graded question (None: not observed)
    exposure: dict[str, float | None] = field(default_factory=dict)
    # accumulating memory: step → (B − A over its questions, questions), in the sequence's order
    steps: dict[int, tuple[float, int]] = field(default_factory=dict)
    # arm → the memory operations' figures over all its runs (the autopsy's write recall,
    # update accuracy, deletion compliance, retrieval recall, use accuracy)
    operations: dict[str, list[OperationFigure]] = field(default_factory=dict)
    graders: list[str] = field(default_factory=list)  # pairs left out: graded by two graders (why, and the fix)


@dataclass(frozen=True)
class Item:
    """One question both sides of a pair were graded on (or one a limit-reached side missed)."""

    pair: str
    cluster: str
    group: str
    question: str
    a: bool  # A answered it correctly
    b: bool
    tags: tuple[str, ...]
    step: int = 0  # `memory: "accumulating"`: the task's place in its sequence (0: not a sequence)


def paired_items(
    lines: list[RunLine], unresolved: list[str] | None = None, graders: list[str] | None = None
) -> tuple[list[Item], list[str]]:
    """One item for every question both runs of a pair graded — by one grader: a pair whose
    sides two exact graders graded is left out and named in `graders` (issue 61: a rule change
    is no agent's regression)."""
    pairs: dict[str, dict[str, RunLine]] = defaultdict(dict)
    for line in lines:
        pairs[line.pair_id][line.variant] = line
    items: list[Item] = []
    incomplete = []
    for pair, sides in sorted(pairs.items()):
        if set(sides) != {"A", "B"} or not all(side.evaluated for side in sides.values()):
            incomplete.append(pair)
            continue
        a, b = sides["A"], sides["B"]
        if differ := graders_differ(pair, a, b):
            if graders is not None:
                graders.append(differ)
            continue
        qa, qb = a.questions, b.questions
        # a side that used up its limits is a failure, not a gap: what it didn't reach counts as wrong
        limited = a.limit_reached or b.limit_reached
        # in the order the questions were asked (A's, then what only B reached): the benchmark's
        asked = [*qa, *(q for q in qb if q not in qa)]
        for qid in [q for q in asked if (q in qa and q in qb) or limited]:
            if any(q is not None and not q.certain for q in (qa.get(qid), qb.get(qid))):
                if unresolved is not None:  # a win or a loss on a guess is none: left out, and said
                    unresolved.append(f"{pair}:{qid}")
                continue
            either = qa.get(qid) or qb[qid]
            items.append(
                Item(
                    pair,
                    a.cluster_id,
                    a.group,
                    qid,
                    qid in qa and qa[qid].correct,
                    qid in qb and qb[qid].correct,
                    either.tags or ("untagged",),
                    a.step,
                )
            )
    return items, incomplete


def graders_differ(pair: str, a: RunLine, b: RunLine) -> str:
    """Why A and B can't be compared question by question: graded by two exact graders, or one
    side's grader unknown (a log from before the identity) — with the rescore that makes them
    one; "" when one grader graded both (or neither side recorded one: runs from before)."""
    ga, gb = a.grader_identity, b.grader_identity
    if ga == gb:
        return ""
    today = grader_identity().digest
    stale = [f"`marathon rescore {line.recording or line.run_id} --grader exact`"
             for line, g in ((a, ga), (b, gb)) if g != today]  # fmt: skip
    return (
        f"{pair}: graded by different graders — A {ga or 'unknown (its log predates the identity)'}, "
        f"B {gb or 'unknown (its log predates the identity)'}; today's is {today}: "
        + " and ".join(stale) + " grade(s) it with today's"
    )


def _spread(values: list[float]) -> tuple[float, float, float]:
    return percentile(values, 50), percentile(values, 25), percentile(values, 75)


def _diff(items: list[Item]) -> float | None:
    return (sum(i.b for i in items) - sum(i.a for i in items)) / len(items) if items else None


def compare(lines: list[RunLine], seed: int = 0, splits: tuple[str, ...] = ("heldout",)) -> Comparison:
    """B − A (with the added memory − without it) per question tag and task group, over the
    tasks of `splits` (held-out only, by default: tuning tasks shaped the variant). Intervals
    resample whole clusters (tasks; repeats and rungs of one benchmark are one) and need at
    least MIN_CLUSTERS of them."""
    everything = [line for line in lines if line.variant in ("A", "B")]
    lines = [line for line in everything if line.split in splits]
    unresolved: list[str] = []
    graders: list[str] = []
    items, incomplete = paired_items(lines, unresolved, graders)
    groups: dict[str, GroupTally] = defaultdict(GroupTally)
    for item in items:
        groups["all"].add(item.a, item.b)
        for tag in item.tags:
            groups[tag].add(item.a, item.b)
    by_cluster: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        by_cluster[item.cluster].append(item)
    clusters = sorted(by_cluster)
    rng = random.Random(seed)
    intervals: dict[str, tuple[float, float, float] | None] = {}
    for group in groups:

        def of(sample: list[str], group: str = group) -> float | None:
            return _diff([i for c in sample for i in by_cluster[c] if group == "all" or group in i.tags])

        point = of(clusters)
        if point is None or len(clusters) < MIN_CLUSTERS:
            intervals[group] = None
            continue
        draws = [
            d
            for _ in range(BOOTSTRAP_SAMPLES)
            if (d := of(rng.choices(clusters, k=len(clusters)))) is not None
        ]
        intervals[group] = (point, percentile(draws, 2.5), percentile(draws, 97.5))
    by_task: dict[str, TaskDiff] = {}
    line_of = {line.pair_id: line for line in lines if line.variant == "A"}
    for pair in sorted({i.pair for i in items}):
        line = line_of[pair]
        task = by_task.setdefault(line.task, TaskDiff(line.task, line.cluster_id, line.group, []))
        task.repeats.append(_diff([i for i in items if i.pair == pair]) or 0.0)
    task_groups = {
        g: (_diff(mine) or 0.0, len(mine))
        for g in sorted({i.group for i in items})
        if (mine := [i for i in items if i.group == g])
    }
    time: dict[str, tuple[float, float, float]] = {}
    cost: dict[str, tuple[float, float, float] | None] = {}
    for variant in ("A", "B"):
        mine_lines = [line for line in lines if line.variant == variant]
        if mine_lines:
            # the agent's own time and model cost: a slow checker or a dear persona is no cost of B's
            time[variant] = _spread([line.agent_seconds for line in mine_lines])
            costs = [line.agent_cost_usd for line in mine_lines]
            known = [c for c in costs if c is not None]
            cost[variant] = _spread(known) if len(known) == len(costs) else None
    chain: dict[str, dict[str, int]] = defaultdict(lambda: {"A": 0, "B": 0})
    for line in lines:
        if line.variant in ("A", "B"):
            for q in line.questions.values():
                if not q.correct and q.stage and q.certain:
                    chain[q.stage][line.variant] += 1
    names = {
        role: next((line.variant_name or role for line in everything if line.variant == role), role)
        for role in ("A", "B")
    }
    return Comparison(
        everything[0].experiment if everything else "",
        names,
        splits,
        len(clusters),
        len({line.pair_id for line in lines}),
        incomplete,
        dict(sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0]))),
        intervals,
        list(by_task.values()),
        task_groups,
        len(everything) - len(lines),
        time,
        cost,
        dict(chain),
        unresolved,
        _exposure(lines),
        {
            step: (_diff(mine) or 0.0, len(mine))
            for step in sorted({i.step for i in items if i.step})
            if (mine := [i for i in items if i.step == step])
        },
        {
            arm: operation_figures([q.links for line in lines if line.variant == arm for q in line.questions.values() if q.links])
            for arm in ("A", "B")
            if any(q.links for line in lines if line.variant == arm for q in line.questions.values())
        },
        graders=graders,
    )


EXPOSURE_RATIO = 1.25  # arms whose reads returned more than this apart are flagged


def _exposure(lines: list[RunLine]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for role in ("A", "B"):
        mine = [line for line in lines if line.variant == role]
        chars = [c for c in (line.returned_chars for line in mine) if c is not None]
        graded = sum(line.graded for line in mine)
        out[role] = sum(chars) / graded if mine and len(chars) == len(mine) and graded else None
    return out


def render_comparison(c: Comparison) -> str:
    a, b = c.names["A"], c.names["B"]
    lines = [
        f"### Paired A/B: {c.experiment or 'experiment'}",
        "",
        f"A = {a} (the baseline, without the added memory), B = {b} (with it); B − A is the difference "
        f"in correct rates (correct = a fully correct answer at the first try: score 10, no nudge). "
        f"{c.pairs} pairs over {c.clusters} cluster(s) of the {' and '.join(c.splits)} tasks; intervals: "
        f"bootstrap 95 % resampling whole clusters ({BOOTSTRAP_SAMPLES} draws), from {MIN_CLUSTERS} clusters up.",
        "",
        "| question group | questions | wins A | wins B | both | neither | B − A [95 % CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    for group, t in c.groups.items():
        interval = c.intervals.get(group)
        diff = (t.wins_b - t.wins_a) / t.n if t.n else 0.0
        ci = (
            f"{diff:+.2f} (too few tasks for an interval: {c.clusters} < {MIN_CLUSTERS})"
            if interval is None
            else f"{interval[0]:+.2f} [{interval[1]:+.2f}, {interval[2]:+.2f}]"
        )
        lines.append(f"| {group} | {t.n} | {t.wins_a} | {t.wins_b} | {t.both} | {t.neither} | {ci} |")
    if len(c.task_groups) > 1 or c.clusters < MIN_CLUSTERS:
        lines += ["", "| task group | questions | B − A |", "|---|---|---|"]
        lines += [f"| {g} | {n} | {d:+.2f} |" for g, (d, n) in c.task_groups.items()]
    lines += [
        "",
        "| task | cluster | group | repeats | B − A (mean) | spread over repeats |",
        "|---|---|---|---|---|---|",
    ]
    for task in c.tasks:
        spread = (
            f"{min(task.repeats):+.2f} … {max(task.repeats):+.2f}" if len(task.repeats) > 1 else "one repeat"
        )
        lines.append(
            f"| {task.task} | {task.cluster} | {task.group} | {len(task.repeats)} | {task.mean:+.2f} | {spread} |"
        )
    lines.append("")
    for role in ("A", "B"):
        if role in c.time:
            med, lo, hi = c.time[role]
            cost = c.cost.get(role)
            money = "price unknown" if cost is None else f"${cost[0]:.4f} (IQR ${cost[1]:.4f}–${cost[2]:.4f})"
            lines.append(
                f"- {role} ({c.names[role]}): the agent's median time {med:.1f} s (IQR {lo:.1f}–{hi:.1f}); "
                f"its median model cost {money}"
            )
    a_chars, b_chars = c.exposure.get("A"), c.exposure.get("B")
    if a_chars is not None and b_chars is not None and (a_chars or b_chars):
        ratio = max(a_chars, b_chars) / max(min(a_chars, b_chars), 1.0)
        # parity is a question between two memories: an arm that reads nothing (without memory,
        # the protocol's A) differs from one that does by design, never a warning
        differ = ratio > EXPOSURE_RATIO and min(a_chars, b_chars) > 0
        lines.append(
            f"- exposure (what memory reads returned to the model, chars per graded question): A {a_chars:,.0f}, "
            f"B {b_chars:,.0f}"
            + (
                f" — **the arms differ in exposure (×{ratio:.1f})**: a difference may be more retrieved text, "
                "not better memory (paper 003's returned-item parity)"
                if differ
                else ""
            )
        )
    if c.steps:
        last = max(c.steps)
        lines += ["", "| step of the sequence (accumulating memory) | questions | B − A |", "|---|---|---|"]
        lines += [f"| {step} | {n} | {d:+.2f} |" for step, (d, n) in c.steps.items()]
        lines.append(f"- at the end of the sequence (step {last}): B − A = {c.steps[last][0]:+.2f}")
    if c.chain:
        a, b = c.names.get("A", "A"), c.names.get("B", "B")
        lines += [
            "",
            "Where the wrong answers' facts were lost (the memory autopsy, `marathon autopsy RUN`): "
            "B − A per stage, fewer is better — the stage B improved is the one it lost fewer at.",
            "",
            f"| stage | A ({a}) | B ({b}) | B − A |",
            "|---|---|---|---|",
        ]
        ranked = sorted(c.chain.items(), key=lambda kv: (-(kv[1]["A"] + kv[1]["B"]), kv[0]))
        stages = {str(stage) for stage in Stage}
        for stage, n in ranked:
            if stage.partition(" (")[0] in stages:
                lines.append(f"| {stage} | {n['A']} | {n['B']} | {n['B'] - n['A']:+d} |")
        apart = [f"{why} {n['A']} / {n['B']}" for why, n in ranked if why.partition(" (")[0] not in stages]
        if apart:  # not memory's doing: an abstain answered, a computed value, a value never told
            lines += ["", "- wrong answers with no memory stage (A / B): " + "; ".join(apart)]
    if c.operations and set(c.operations) != {"A", "B"}:
        only = ", ".join(sorted(c.operations))
        lines.append(f"- memory operations: only arm {only} has the autopsy's links (the other's lines are older)")
    if set(c.operations) == {"A", "B"}:
        a, b = c.names.get("A", "A"), c.names.get("B", "B")
        lines += ["", f"| memory operation (the autopsy) | A ({a}) | B ({b}) |", "|---|---|---|"]
        for fa, fb in zip(c.operations["A"], c.operations["B"], strict=True):
            lines.append(f"| {fa.name} ({fa.counts}) | {fa.cell} | {fb.cell} |")
    if c.left_out_split:
        lines.append(
            f"- {c.left_out_split} run(s) of other splits left out (tuning tasks: `marathon compare --split tuning`)"
        )
    if c.graders:  # never a difference across two graders: a rule change is no agent's regression
        lines.append(f"- **no decision on {len(c.graders)} pair(s): graded by different graders**")
        lines += [f"  - {why}" for why in c.graders[:10]] + (["  - …"] if len(c.graders) > 10 else [])
    if c.incomplete:
        lines.append(f"- left out (a side missing or not completed): {', '.join(c.incomplete)}")
    if c.unresolved:
        lines.append(
            f"- left out, a grade unresolved (the grader was not sure; `marathon rescore` with a judge "
            f"resolves it): {len(c.unresolved)} paired questions — {', '.join(c.unresolved[:12])}"
            + (" …" if len(c.unresolved) > 12 else "")
        )
    return "\n".join(lines) + "\n"
