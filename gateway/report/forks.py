"""Exams forked from one teaching checkpoint: pass rates over rollouts, pass^k and pass@k, the
noise floor, and the exam's contamination (docs/experiments.md, "Checkpoints and forks").

A group is every fork whose `meta.fork_of` names one teaching run. Per mode (`sequential`:
each fork plays the whole exam in order; `isolated`: each fork asks one question), a question's
rollouts are its grades across forks. What a caller may rely on:
- a pass is a full score at the first try (`PassRule.FIRST_TRY`, as in the A/B table and
  Pass@B); an unresolved grade (the grader was not sure) is left out of every figure and
  counted apart;
- pass@k = mean over questions of 1 − C(n−c, k)/C(n, k) and pass^k = mean of C(c, k)/C(n, k)
  (n rollouts of a question, c passes): the unbiased estimators; k is the most rollouts a
  question has, and a question with fewer (one unresolved) is left out of them, not k lowered;
- the noise floor is the spread of the exam's mean over rollouts (rollout r's mean across the
  questions): a difference smaller than it is not a finding;
- contamination = sequential − isolated mean score per tag, with a 95 % interval from a
  bootstrap over questions (each drawn question's rollouts resampled within it, per mode).
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import comb

from gateway.log.vocabulary import TerminationReason
from gateway.report.budget import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, percentile
from gateway.report.question_order import question_order
from gateway.report.recordings import RecordedRun
from gateway.report.run_line import RunLine
from persona.outcome import PassRule, is_correct

MODES = ("sequential", "isolated")
DIRECT = "direct-evidence"  # a diagnostic: shown apart, never in the results above it


@dataclass
class ModeResult:
    mode: str
    # question id → its grades over rollouts (rollout → score; a rollout is "base id#number", so
    # forks made by `marathon fork` and by a config's `rollouts` never take each other's place)
    grades: dict[str, dict[str, float]] = field(default_factory=dict)
    unresolved: int = 0
    forks: int = 0
    # question → rollout → correct, as the A/B table and Pass@B count it (a full score at the
    # first try: `comparison.CORRECT_RULE`), so pass^k is the same "pass" as every other table
    passes: dict[str, dict[str, bool]] = field(default_factory=dict)

    @property
    def rollouts(self) -> int:
        """k: the most rollouts a question was graded in. A question with fewer (an unresolved
        grade) is left out of pass^k and pass@k — it no longer lowers k for the whole mode."""
        return max((len(g) for g in self.passes.values()), default=0)

    def pass_at(self, k: int) -> float | None:
        return self._mean(lambda n, c: 1 - comb(n - c, k) / comb(n, k), k)

    def pass_hat(self, k: int) -> float | None:
        return self._mean(lambda n, c: comb(c, k) / comb(n, k), k)

    def _mean(self, estimate: object, k: int) -> float | None:
        assert callable(estimate)
        values = []
        for oks in self.passes.values():
            n, c = len(oks), sum(oks.values())
            if n >= k:
                values.append(float(estimate(n, c)))
        return sum(values) / len(values) if values else None

    def only(self, question_ids: set[str]) -> ModeResult:
        """The same figures over some of the questions (a tag's)."""
        return ModeResult(
            self.mode,
            {q: g for q, g in self.grades.items() if q in question_ids},
            passes={q: p for q, p in self.passes.items() if q in question_ids},
        )

    def pass_rate(self, question_id: str) -> float:
        oks = self.passes[question_id]
        return sum(oks.values()) / len(oks)

    def rollout_means(self) -> list[float]:
        by_rollout: dict[str, list[float]] = defaultdict(list)
        for grades in self.grades.values():
            for r, score in grades.items():
                by_rollout[r].append(score)
        return [sum(v) / len(v) for _, v in sorted(by_rollout.items())]

    def noise_floor(self) -> float | None:
        """The standard deviation of the exam's mean over rollouts (None below two)."""
        means = self.rollout_means()
        return statistics.stdev(means) if len(means) >= 2 else None


@dataclass
class ForkGroup:
    teacher: str
    tags: dict[str, tuple[str, ...]]  # question id → tags
    modes: dict[str, ModeResult]
    incomplete: list[str]  # forks that did not complete (their grades are left out)
    # each teaching the forks started from (the parent's checkpoint state, its archive) → its forks:
    # one group holds one; more is a group mixing two agents, whose figures are not shown
    teachings: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def contamination(self) -> dict[str, tuple[float, tuple[float, float], int]]:
        """tag → (sequential − isolated mean, its 95 % interval, questions), for tags graded in both."""
        seq, iso = self.modes.get("sequential"), self.modes.get("isolated")
        if seq is None or iso is None:
            return {}
        out = {}
        by_tag: dict[str, list[str]] = defaultdict(list)
        for qid, tags in self.tags.items():
            if qid in seq.grades and qid in iso.grades:
                for tag in (*(tags or ("untagged",)), "all"):
                    by_tag[tag].append(qid)
        for tag, qids in sorted(by_tag.items()):
            a = [list(seq.grades[q].values()) for q in qids]
            b = [list(iso.grades[q].values()) for q in qids]
            out[tag] = (_mean_of_means(a) - _mean_of_means(b), _bootstrap_difference(a, b), len(qids))
        return out


def _mean_of_means(groups: list[list[float]]) -> float:
    return sum(sum(g) / len(g) for g in groups) / len(groups)


def _bootstrap_difference(a: list[list[float]], b: list[list[float]]) -> tuple[float, float]:
    rng = random.Random(BOOTSTRAP_SEED)
    diffs = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        picks = [rng.randrange(len(a)) for _ in a]
        da = [[rng.choice(a[i]) for _ in a[i]] for i in picks]
        db = [[rng.choice(b[i]) for _ in b[i]] for i in picks]
        diffs.append(_mean_of_means(da) - _mean_of_means(db))
    return percentile(diffs, 2.5), percentile(diffs, 97.5)


def build_fork_groups(runs: Sequence[RecordedRun]) -> list[ForkGroup]:
    groups: dict[str, ForkGroup] = {}
    for run in runs:
        meta = run.meta
        teacher, mode = meta.fork_of, meta.exam
        if not teacher or mode not in (*MODES, DIRECT):
            continue
        group = groups.setdefault(teacher, ForkGroup(teacher, {}, {}, []))
        parent = run.header.parent
        teaching = (str(parent.get("state_hash", "")), str(parent.get("archive_sha256", "")))
        group.teachings.setdefault(teaching, []).append(run.summary.run_id)
        result = group.modes.setdefault(mode, ModeResult(mode))
        result.forks += 1
        if run.summary.ending is not TerminationReason.COMPLETED:
            group.incomplete.append(run.summary.run_id)
            continue
        rollout = f"{meta.id or teacher}#{meta.rollout or 1}"
        for q in run.benchmark.questions:
            group.tags[q.id] = q.tags
            evaluation = run.summary.evaluations.get(q.id)
            if evaluation is None:
                continue
            if not evaluation.certain:
                result.unresolved += 1
                continue
            result.grades.setdefault(q.id, {})[rollout] = evaluation.score
            result.passes.setdefault(q.id, {})[rollout] = is_correct(PassRule.FIRST_TRY, evaluation.score, evaluation.attempts)
    return [groups[k] for k in sorted(groups)]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def render_forks(group: ForkGroup) -> str:
    out = [f"## Exams forked from {group.teacher}'s checkpoint", ""]
    if len(group.teachings) > 1:
        mixed = "; ".join(
            f"state {state[:12]}… (archive {archive[:12]}…): {len(forks)} fork(s), e.g. {forks[0]}"
            for (state, archive), forks in sorted(group.teachings.items(), key=lambda t: -len(t[1]))
        )
        out += [
            f"**Not shown: these forks started from {len(group.teachings)} different teachings of "
            f"{group.teacher}** ({mixed}). A fork group's figures compare rollouts of one agent state; "
            f"these mix agents. `marathon run --fresh` teaches {group.teacher} again and clears every "
            "fork of the earlier teaching first.",
            "",
        ]
        return "\n".join(out)
    out += [
        "Every fork starts from the same archived agent state; an isolated fork asks one question, "
        "so no question sees another. A pass is a full score at the first try (as in the A/B table and "
        "Pass@B); unresolved grades are left out, and a question with fewer resolved rollouts than k "
        "is left out of pass^k and pass@k.",
        "",
        "| mode | forks | questions | rollouts | mean | pass^1 | pass^k | pass@k "
        "| noise floor (sd of the mean over rollouts) | unresolved |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode in MODES:
        r = group.modes.get(mode)
        if r is None:
            continue
        k = r.rollouts
        means = r.rollout_means()
        mean = f"{sum(means) / len(means):.2f}" if means else "—"
        floor = r.noise_floor()
        out.append(
            f"| {mode} | {r.forks} | {len(r.grades)} | {k} | {mean} | {_pct(r.pass_hat(1))} | "
            f"{_pct(r.pass_hat(k)) if k else '—'} (k={k}) | {_pct(r.pass_at(k)) if k else '—'} (k={k}) | "
            f"{f'{floor:.2f}' if floor is not None else '— (one rollout)'} | {r.unresolved} |"
        )
    if group.incomplete:
        out += ["", f"- forks that did not complete, left out: {', '.join(group.incomplete[:10])}"]
    tags = sorted({t for tags in group.tags.values() for t in (tags or ("untagged",))})
    shown = [m for m in MODES if m in group.modes]
    if len(tags) > 1 and shown:
        out += [
            "",
            "| tag | questions | " + " | ".join(f"{m}: pass^1 / pass^k / pass@k" for m in shown) + " |",
        ]
        out.append("|---|---|" + "---|" * len(shown))
        for tag in tags:
            ids = {q for q, t in group.tags.items() if tag in (t or ("untagged",))}
            cells = []
            for m in shown:
                r = group.modes[m].only(ids)
                k = r.rollouts
                cells.append(
                    f"{_pct(r.pass_hat(1))} / {_pct(r.pass_hat(k)) if k else '—'} / {_pct(r.pass_at(k)) if k else '—'}"
                )
            out.append(f"| {tag} | {len(ids)} | " + " | ".join(cells) + " |")
    contamination = group.contamination()
    if contamination:
        out += [
            "",
            "### Exam contamination (sequential − isolated)",
            "",
            "What asking the questions one after another does to the scores: positive, the exam "
            "helps itself (earlier questions and answers remind the agent); negative, it hurts.",
            "",
            "| tag | questions | sequential − isolated | 95 % interval |",
            "|---|---|---|---|",
        ]
        for tag, (diff, (lo, hi), n) in contamination.items():
            out.append(f"| {tag} | {n} | {diff:+.2f} | {lo:+.2f} … {hi:+.2f} |")
    direct, isolated = group.modes.get(DIRECT), group.modes.get("isolated")
    if direct is not None:
        out += [
            "",
            "### Direct-evidence diagnostic (not part of the results)",
            "",
            "Each question asked alone from the checkpoint right after the persona restated the facts "
            "holding its answer: an agent that passes here but fails isolated could not *find* what it "
            "was told; one that fails here too could not *use* it (or the grader could not read it).",
            "",
            "| question | isolated pass rate | with the evidence restated | gap |",
            "|---|---|---|---|",
        ]
        for qid in sorted(group.tags, key=question_order):
            if qid not in direct.grades:
                continue
            with_evidence = direct.pass_rate(qid)
            alone = isolated.pass_rate(qid) if isolated is not None and qid in isolated.grades else None
            gap = f"{with_evidence - alone:+.0%}" if alone is not None else "—"
            out.append(f"| {qid} | {_pct(alone)} | {_pct(with_evidence)} | {gap} |")
    per_question = [
        (
            qid,
            {
                m: group.modes[m].pass_rate(qid)
                for m in MODES
                if m in group.modes and qid in group.modes[m].grades
            },
        )
        for qid in sorted(group.tags, key=question_order)
    ]
    out += ["", "| question | " + " | ".join(f"{m} pass rate" for m in MODES if m in group.modes) + " |"]
    out.append("|---|" + "---|" * sum(1 for m in MODES if m in group.modes))
    for qid, rates in per_question:
        out.append(f"| {qid} | " + " | ".join(_pct(rates.get(m)) for m in MODES if m in group.modes) + " |")
    return "\n".join(out) + "\n"


def render_preparation(prepared: Sequence[RecordedRun], lines: Sequence[RunLine]) -> str:
    """An experiment's one-off preparation (`prepare:`), apart from the per-task figures; its
    cost is amortised over the task runs that really started from its state (their lines'
    `initial_state_from`), not over every run of the experiment."""
    if not prepared:
        return ""
    out = []
    for run in prepared:
        s = run.summary
        task_runs = sum(1 for line in lines if line.initial_state_from.partition(":")[0] == s.run_id)
        priced = all(not c.unpriced for c in s.costs.values())
        dollars = sum(c.dollars for c in s.costs.values())
        cost = f"${dollars:.4f}" if priced else "cost unknown (a model's price is unknown)"
        share = f"${dollars / task_runs:.4f}" if priced and task_runs else "—"
        out.append(
            f"- **preparation (one-off)**: {s.run_id} — {s.status}; {s.exchanges:,} agent LLM calls, "
            f"{sum(s.tokens.values()):,} tokens, {cost}, {s.active_seconds:.1f} s; not in the per-task figures above. "
            f"Amortised over the {task_runs} task runs that start from its state: {share} and "
            f"{s.active_seconds / max(task_runs, 1):.1f} s each — assuming the prepared state is reused by all of "
            "them and never prepared again"
        )
    return "\n".join(out) + "\n"
