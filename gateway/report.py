"""Per-run reports (design §7), computed from the run log alone (plus the benchmark's plan).

`summarize()` is the single place scores are derived; `render_markdown()` shows them. The
report of a run lands in `<run>/report.md`, and an entry is appended to the recordings'
`report.md` every time a run ends — failed and interrupted ones too. A run whose agent ran on
the offline stand-in says so at the top, because its scores measure the platform, not a model.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gateway.events import (
    Asked,
    ErrorEvent,
    Evaluation,
    FactEdited,
    FactTold,
    PhaseEntered,
    RunEnded,
    RunStart,
    Said,
)
from gateway.runlog import RunLog
from persona.benchmark import DELETED_MARKERS, Benchmark, Question


@dataclass
class RunSummary:
    run_id: str
    benchmark: str
    agent_model: str
    stand_in: bool
    persona: str
    status: str
    started: float
    active_seconds: float
    phases_entered: int
    phases_planned: int
    planned: list[Question]
    evaluations: dict[str, Evaluation]
    graded_twice: list[str]
    required_facts: set[str]
    told_facts: set[str]
    agent_errors: list[ErrorEvent]
    runner_errors: list[ErrorEvent]
    resent: int
    starts: int
    by_tag: dict[str, list[float]] = field(default_factory=dict)

    @property
    def scores(self) -> list[float]:
        return [e.score for e in self.evaluations.values()]

    @property
    def mean(self) -> float | None:
        return sum(self.scores) / len(self.scores) if self.scores else None

    @property
    def ungraded(self) -> list[Question]:
        return [q for q in self.planned if q.id not in self.evaluations]

    @property
    def untold_required(self) -> list[str]:
        return sorted(self.required_facts - self.told_facts)

    @property
    def coverage_complete(self) -> bool:
        return not self.ungraded and not self.untold_required and not self.graded_twice


def summarize(log: RunLog, benchmark: Benchmark) -> RunSummary:
    evaluations: dict[str, Evaluation] = {}
    twice: list[str] = []
    required: set[str] = set()
    deleted: set[str] = set()
    told: set[str] = set()
    agent_errors: list[ErrorEvent] = []
    runner_errors: list[ErrorEvent] = []
    status = "running or killed"
    resent = starts = phases = 0
    active = 0.0
    segment_start: float | None = None
    last_ts = log.header.created
    for event in log.events:
        match event:
            case RunStart():
                if segment_start is not None:
                    active += last_ts - segment_start
                segment_start = event.ts
                starts += 1
                status = "running or killed"
            case RunEnded():
                status = event.reason + (f" ({event.detail})" if event.detail else "")
            case PhaseEntered():
                phases = max(phases, event.index + 1)
                for name in event.require_all_facts:
                    facts = benchmark.facts.get(name)
                    if facts:
                        required.update(f"{name}:{fid}" for fid in facts.facts)
            case FactTold():
                told.add(f"{event.file}:{event.fact_id}")
            case FactEdited() if event.new.strip() in DELETED_MARKERS:
                deleted.add(f"{event.file}:{event.fact_id}")
            case Evaluation():
                if event.question_id in evaluations:
                    twice.append(event.question_id)
                else:
                    evaluations[event.question_id] = event
            case ErrorEvent():
                (agent_errors if event.source == "agent" else runner_errors).append(event)
            case Said() | Asked() if event.resent:
                resent += 1
        last_ts = event.ts or last_ts
    if segment_start is not None:
        active += last_ts - segment_start
    agent = log.header.agent
    by_tag: dict[str, list[float]] = {}
    for q in benchmark.questions:
        if q.id in evaluations:
            for tag in q.tags or ("untagged",):
                by_tag.setdefault(tag, []).append(evaluations[q.id].score)
    return RunSummary(
        run_id=log.header.run_id,
        benchmark=str(log.header.benchmark.get("name", "")),
        agent_model=str(agent.get("model", "unknown (not observed)")),
        stand_in=bool(agent.get("offline_stand_in")),
        persona=str(log.header.persona.get("driver", "?")),
        status=status,
        started=log.header.created,
        active_seconds=active,
        phases_entered=phases,
        phases_planned=len(benchmark.phases),
        planned=list(benchmark.questions),
        evaluations=evaluations,
        graded_twice=twice,
        required_facts=required - deleted,
        told_facts=told,
        agent_errors=agent_errors,
        runner_errors=runner_errors,
        resent=resent,
        starts=starts,
        by_tag=by_tag,
    )


def _fmt(score: float | None) -> str:
    return "—" if score is None else f"{score:.2f}"


def render_markdown(s: RunSummary) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.started))
    out = [f"## {when} — {s.run_id}: {s.benchmark} @ {s.agent_model}", ""]
    if s.stand_in:
        out += [
            "> **Offline stand-in.** The agent's model in this run is the rule-based stand-in, not an "
            "LLM: these scores exercise the platform end to end and say nothing about any real model.",
            "",
        ]
    first_try = [e for e in s.evaluations.values() if e.attempts == 1 and e.score >= 10]
    nudged = [e for e in s.evaluations.values() if e.attempts == 2]
    out += [
        f"- status: {s.status}; persona: {s.persona}; starts: {s.starts}; re-sent after a crash: {s.resent}",
        f"- run time: {s.active_seconds:.1f} s; phases: {s.phases_entered}/{s.phases_planned}",
        f"- **mean score: {_fmt(s.mean)} / 10** over {len(s.evaluations)} graded questions",
        f"- first-try correct: {len(first_try)}/{len(s.evaluations)}; retried after a nudge: {len(nudged)} "
        f"(correct on retry: {sum(1 for e in nudged if e.score > 0)})",
        "",
        "### Score distribution",
        "",
        "| score | questions |",
        "|---|---|",
    ]
    buckets = Counter(int(min(10, max(0, score))) for score in s.scores)
    out += [f"| {b} | {buckets[b]} |" for b in range(10, -1, -1) if buckets[b]]
    if s.by_tag:
        out += ["", "### By tag", "", "| tag | questions | mean |", "|---|---|---|"]
        out += [f"| {tag} | {len(v)} | {sum(v) / len(v):.2f} |" for tag, v in sorted(s.by_tag.items())]
    out += ["", "### Coverage audit", ""]
    out.append(
        f"- questions graded: {len(s.evaluations)}/{len(s.planned)}"
        + ("" if not s.ungraded else f"; not graded: {', '.join(q.id for q in s.ungraded)}")
    )
    if s.graded_twice:
        out.append(f"- graded more than once (a bug): {', '.join(s.graded_twice)}")
    told_required = len(s.required_facts) - len(s.untold_required)
    out.append(
        f"- required facts told: {told_required}/{len(s.required_facts)}"
        + ("" if not s.untold_required else f"; untold: {', '.join(s.untold_required[:20])}")
    )
    out.append(f"- coverage {'complete' if s.coverage_complete else 'INCOMPLETE'}")
    if s.agent_errors or s.runner_errors:
        out += ["", "### Errors (apart from memory failures)", ""]
        out += [f"- agent {e.kind}: {e.message}" for e in s.agent_errors]
        out += [f"- runner {e.kind}: {e.message}" for e in s.runner_errors]
    imperfect = [
        (q, s.evaluations[q.id])
        for q in s.planned
        if q.id in s.evaluations and s.evaluations[q.id].score < 10
    ]
    if imperfect:
        out += ["", "### Imperfect answers", ""]
        for q, e in imperfect:
            tags = f" [{', '.join(q.tags)}]" if q.tags else ""
            out += [
                f"**❓ {q.id}{tags} — {e.score:g}/10**" + (" (after a nudge)" if e.attempts == 2 else ""),
                f"- question: {q.text}",
                f"- expected: {q.expected or '(that it was never told)'}",
                f"- answer: {e.answer.strip() or '(none)'}",
                f"- grader ({e.grader}): {e.reason}",
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


def write_reports(log: RunLog, benchmark: Benchmark, run_dir: Path) -> RunSummary:
    """Write `<run>/report.md` and append the same entry to `<recordings>/report.md`."""
    summary = summarize(log, benchmark)
    text = render_markdown(summary)
    (run_dir / "report.md").write_text(f"# Run report\n\n{text}", encoding="utf-8")
    with (run_dir.parent / "report.md").open("a", encoding="utf-8") as f:
        f.write(f"\n{text}")
    return summary
