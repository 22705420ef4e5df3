"""Per-run reports (design §7), computed from the run log alone (plus the benchmark's plan).

`summarize()` is the single place scores are derived; `render_markdown()` shows them. The
report of a run lands in `<run>/report.md`, and an entry is appended to the recordings'
`report.md` every time a run ends — failed and interrupted ones too. A run whose agent ran on
the offline stand-in says so at the top, because its scores measure the platform, not a model.

Size: one summary and the one renderer of its sections; apart, each would pass the whole
summary around.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gateway.display import safe_text
from gateway.log.events import (
    AgentInitiated,
    Asked,
    CanaryHit,
    CompactionSeen,
    ErrorEvent,
    Evaluation,
    Event,
    EvidenceCheck,
    FactEdited,
    FactTold,
    InvalidEvent,
    LateReply,
    LLMExchange,
    MemoryCallFailed,
    MemoryCallSeen,
    MemoryResult,
    PersonaSlip,
    PersonaTurn,
    PhaseEntered,
    Replied,
    RunEnded,
    RunStart,
    Said,
)
from gateway.log.lineage import LineageError, inherited_events
from gateway.log.runlog import REFUSED_TRAFFIC, RunLog
from gateway.log.vocabulary import CallKind, ErrorKind, ErrorSource, Purpose, TerminationReason
from gateway.report.cost import RoleCost
from gateway.report.deletion_scope import check_scope, render_scope, state_folder
from gateway.report.state import run_state
from persona.benchmark.model import DELETED_MARKERS, Benchmark, Question
from persona.grading.exact import contains_expected
from persona.outcome import PassRule, is_correct, is_full, passed


@dataclass(frozen=True)
class MemoryCounts:
    reads: int
    writes: int
    nudge: int  # any call made in the turn after the search-memory nudge
    returned_items: int = 0  # what the first turn's reads gave the model (MemoryResult)
    returned_chars: int = 0


@dataclass
class RunSummary:
    run_id: str
    benchmark: str
    agent_model: str
    stand_in: bool
    persona: str
    ending: TerminationReason | None  # how its last start ended; None: running, or killed
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
    by_tag: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # each grade's bounds
    exchanges: int = 0
    tokens: dict[str, int] = field(default_factory=dict)
    compactions: list[CompactionSeen] = field(default_factory=list)
    memory_calls: list[MemoryCallSeen] = field(default_factory=list)
    memory_failed: int = 0  # of those, calls whose tool returned an error (nothing stored or found)
    evidence: dict[str, bool] = field(default_factory=dict)
    canary_hits: list[CanaryHit] = field(default_factory=list)
    recorded: bool = False
    recorder_url: str = ""  # where the recorder listened, when it did
    costs: dict[str, RoleCost] = field(default_factory=dict)
    slips: list[PersonaSlip] = field(default_factory=list)
    late_replies: list[LateReply] = field(default_factory=list)
    initiated: list[AgentInitiated] = field(default_factory=list)
    invalid: list[InvalidEvent] = field(default_factory=list)  # records skipped: wrong-typed fields
    log_damage: str = ""  # the log's damage or torn tail, as one line ("" when intact)
    unplayed_prose: list[str] = field(default_factory=list)  # prose-only phases a scripted run skipped
    nudge_turn_calls: set[int] = field(default_factory=set)  # seqs of memory calls in nudge turns
    # questions graded on evidence the persona never delivered (a fact marked told whose value
    # was never said): out of the scores, never counted as forgotten — question id → why
    unscored_persona: dict[str, str] = field(default_factory=dict)
    memory_flushes: int = 0  # pre-compaction memory-flush turns the recorder saw
    background_calls: int = 0  # the agent's own calls (heartbeats, reviews): not the conversation
    inherited: str = ""  # a fork: what it inherits from its parent's checkpoint (never re-graded)
    memory_results: dict[int, MemoryResult] = field(default_factory=dict)  # by the call's seq
    first_answers: dict[str, str] = field(
        default_factory=dict
    )  # question id → the reply to it (before a nudge)

    ending_detail: str = ""  # the end record's words, on one line ("agent_turns: 30 messages sent, …")

    @property
    def status(self) -> str:
        """How the run stands, for a person: the ending and its detail, on one line. Code
        compares `ending`, never this."""
        if self.ending is None:
            return "running or killed"
        return self.ending.value + (f" ({self.ending_detail})" if self.ending_detail else "")

    def memory_calls_for(self, question_id: str) -> int:
        return sum(1 for m in self.memory_calls if m.question_id == question_id)

    def memory_for(self, question_id: str) -> MemoryCounts:
        """The question's memory calls as the budget metrics count them: reads of its first
        turn (R(τ), the retrieval budget), writes, and every call of the nudge turn apart."""
        calls = [m for m in self.memory_calls if m.question_id == question_id]
        first = [m for m in calls if m.seq not in self.nudge_turn_calls]
        reads = [
            self.memory_results[m.seq]
            for m in first
            if m.operation == "read" and m.seq in self.memory_results
        ]
        return MemoryCounts(
            reads=sum(1 for m in first if m.operation == "read"),
            writes=sum(1 for m in first if m.operation != "read"),
            nudge=len(calls) - len(first),
            returned_items=sum(r.items for r in reads),
            returned_chars=sum(r.chars for r in reads),
        )

    def split(self) -> dict[str, list[float]]:
        """Scores of non-abstention questions by where the evidence was when asked."""
        out: dict[str, list[float]] = {"beyond the boundary": [], "still in context": [], "not observed": []}
        for q in self.planned:
            if q.id not in self.evaluations or q.abstain:
                continue
            where = self.evidence.get(q.id)
            key = "not observed" if where is None else "still in context" if where else "beyond the boundary"
            out[key].append(self.evaluations[q.id].score)
        return out

    @property
    def scores(self) -> list[float]:
        return [e.score for e in self.evaluations.values()]

    @property
    def unresolved(self) -> list[Evaluation]:
        """Questions whose grader was not sure (`certain` false): their scores are guesses."""
        return [e for e in self.evaluations.values() if not e.certain]

    @property
    def mean(self) -> float | None:
        """The mean score — None while any question is unresolved: one confident figure over
        guesses would be wrong; `mean_range` gives what it can be."""
        if self.unresolved:
            return None
        return sum(self.scores) / len(self.scores) if self.scores else None

    @property
    def mean_range(self) -> tuple[float, float] | None:
        return mean_range(e.bounds() for e in self.evaluations.values())

    def describe_mean(self, resolve: str = "") -> str:
        """The mean as a person should read it: a figure, or the range and why."""
        if self.mean is not None:
            return f"{self.mean:.2f}/10"
        span = self.mean_range
        if span is None:
            return "—"
        ids = ", ".join(e.question_id for e in self.unresolved)
        how = (
            f"; resolve: marathon rescore {resolve} --grader anthropic:MODEL | openai:URL#MODEL"
            if resolve
            else ""
        )
        return f"{span[0]:.2f}–{span[1]:.2f}/10 ({len(self.unresolved)} unresolved: {ids}{how})"

    @property
    def ungraded(self) -> list[Question]:
        return [q for q in self.planned if q.id not in self.evaluations]

    @property
    def untold_required(self) -> list[str]:
        return sorted(self.required_facts - self.told_facts)

    @property
    def coverage_complete(self) -> bool:
        return (
            not self.ungraded
            and not self.untold_required
            and not self.graded_twice
            and not self.unplayed_prose
        )


def _undelivered(
    benchmark: Benchmark,
    planned: list[Question],
    slips: list[PersonaSlip],
    evaluations: dict[str, Evaluation],
) -> dict[str, str]:
    """The questions whose answer lives in a fact the persona marked told but never said
    (`fact_not_said`); their grades leave `evaluations` — the agent was never told, so a wrong
    answer is no forgetting (a number told as 35 for 34, and "35" graded 0)."""
    out: dict[str, str] = {}
    for slip in slips:
        ref = slip.detail.split(" ", 1)[0] if slip.kind == "fact_not_said" else ""
        file, _, fid = ref.partition(":")
        fact = benchmark.facts[file].facts.get(fid) if file in benchmark.facts else None
        if fact is None:
            continue
        for q in planned:
            if (
                q.id in evaluations
                and not q.abstain
                and q.expected
                and contains_expected(q.expected, fact.text)
            ):
                evaluations.pop(q.id)
                out[q.id] = (
                    f"its answer is in {ref} ({fact.text!r}), which the persona marked told but never said"
                )
    return out


def _span(bounds: list[tuple[float, float]]) -> str:
    """A mean over grades' bounds: one figure when every grade is sure, else the range."""
    low, high = mean_range(bounds) or (0.0, 0.0)
    return f"{low:.2f}" if low == high else f"{low:.2f}–{high:.2f} (unresolved: {sum(a != b for a, b in bounds)})"


def mean_range(bounds: Iterable[tuple[float, float]]) -> tuple[float, float] | None:
    """The mean over each grade's (least, most) — `Evaluation.bounds`: every unresolved question
    at its least, every one at its most — what a mean over guesses can be."""
    low = high = 0.0
    n = 0
    for least, most in bounds:
        n += 1
        low += least
        high += most
    return (low / n, high / n) if n else None


def summarize(log: RunLog, benchmark: Benchmark) -> RunSummary:
    agent = log.header.agent
    evaluations: dict[str, Evaluation] = {}
    twice: list[str] = []
    required: set[str] = set()
    deleted: set[str] = set()
    told: set[str] = set()
    agent_errors: list[ErrorEvent] = []
    runner_errors: list[ErrorEvent] = []
    ending: TerminationReason | None = None
    ending_detail = ""
    resent = starts = phases = 0
    active = 0.0
    exchanges = 0
    tokens = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    compactions: list[CompactionSeen] = []
    memory_calls: list[MemoryCallSeen] = []
    memory_failed = 0
    memory_results: dict[int, MemoryResult] = {}
    nudged: set[str] = set()  # questions whose nudge was sent: their calls from here on are the nudge turn's
    nudge_turn_calls: set[int] = set()
    flushes = 0  # the agent's silent "store durable memories now" turns before it compacts (OpenClaw)
    background = 0
    evidence: dict[str, bool] = {}
    canary_hits: list[CanaryHit] = []
    recorded = False  # a model call of the agent reached the recorder
    recorder_url = ""
    models: Counter[str] = Counter()  # the models the recorder saw the agent call
    costs = {"persona": RoleCost(), "agent": RoleCost(), "judge": RoleCost()}
    slips: list[PersonaSlip] = []
    late_replies: list[LateReply] = []
    invalid: list[InvalidEvent] = []
    initiated: list[AgentInitiated] = []
    segment_start: float | None = None
    last_ts = log.header.created
    inherited, inherited_note = _inherited(log)
    for event in inherited:  # a fork's teaching is its parent's: its facts count as told here
        match event:
            case PhaseEntered():
                for name in event.require_all_facts:
                    if facts := benchmark.facts.get(name):
                        required.update(f"{name}:{fid}" for fid in facts.facts)
            case FactTold():
                told.add(f"{event.file}:{event.fact_id}")
            case FactEdited() if event.new.strip() in DELETED_MARKERS:
                deleted.add(f"{event.file}:{event.fact_id}")
    # questions graded before the checkpoint are the fork's trajectory's too (a ladder's
    # in-context check before the distractors): their grades and memory calls, as the parent had them
    graded_before = [
        e
        for e in inherited
        if isinstance(e, (Evaluation, MemoryCallSeen, MemoryCallFailed, EvidenceCheck))
        or (isinstance(e, Said) and e.purpose is Purpose.NUDGE and not e.resent)
    ]
    for event in [*graded_before, *log.events]:
        match event:
            case RunStart():
                recorder_url = recorder_url or event.llm_url
                if segment_start is not None:
                    active += last_ts - segment_start
                segment_start = event.ts
                starts += 1
                ending, ending_detail = None, ""
            case RunEnded():
                ending, ending_detail = event.reason, " ".join(event.detail.split())  # one line
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
            case ErrorEvent() if event.source.agents and REFUSED_TRAFFIC in event.message:
                # the agent's model call was refused by our recorder (its log was full): ours
                runner_errors.append(replace(event, source=ErrorSource.RUNNER, kind=ErrorKind.RECORDER_REFUSED))
            case ErrorEvent():
                (agent_errors if event.source.agents else runner_errors).append(event)
            case Said() | Asked() if event.resent:
                resent += 1
                if isinstance(event, Said) and event.purpose is Purpose.NUDGE and event.question_id:
                    nudged.add(event.question_id)
            case Said() if event.purpose is Purpose.NUDGE and event.question_id:
                nudged.add(event.question_id)
            case PersonaTurn():
                costs["persona"].add(
                    str(event.response.get("model") or event.client.split(":", 1)[-1]),
                    event.response.get("usage", {}),
                )
            case PersonaSlip():
                slips.append(event)
            case InvalidEvent():
                invalid.append(event)
            case LateReply():
                late_replies.append(event)
            case AgentInitiated():
                initiated.append(event)
            case LLMExchange() if event.kind.conversational:
                recorded = True
                if event.model:
                    models[event.model] += 1
                exchanges += 1
                flushes += event.kind is CallKind.MEMORY_FLUSH
                background += event.kind is CallKind.BACKGROUND
                costs["agent"].add("standin" if agent.get("offline_stand_in") else event.model, event.usage)
                for key in tokens:
                    tokens[key] += int(event.usage.get(key, 0))
            case CompactionSeen():
                compactions.append(event)
            case MemoryCallFailed():
                memory_failed += 1
            case MemoryResult():
                memory_results[event.call] = event
            case MemoryCallSeen():
                memory_calls.append(event)
                if event.question_id in nudged:
                    nudge_turn_calls.add(event.seq)
            case EvidenceCheck():
                evidence.setdefault(event.question_id, event.in_context)
            case CanaryHit():
                canary_hits.append(event)
        last_ts = event.ts or last_ts
    if segment_start is not None:
        active += last_ts - segment_start
    by_tag: dict[str, list[tuple[float, float]]] = {}
    for q in benchmark.questions:
        if q.id in evaluations:
            for tag in q.tags or ("untagged",):
                by_tag.setdefault(tag, []).append(evaluations[q.id].bounds())
    unscored = _undelivered(benchmark, list(benchmark.questions), slips, evaluations)  # out of the scores
    return RunSummary(
        run_id=log.header.run_id,
        benchmark=str(log.header.benchmark.get("name", "")),
        agent_model=_agent_model(agent, models),
        stand_in=bool(agent.get("offline_stand_in")),
        persona=str(log.header.persona.get("driver", "?")),
        ending=ending,
        ending_detail=ending_detail,
        started=log.header.created,
        active_seconds=active,
        phases_entered=phases,
        phases_planned=len(benchmark.phases),
        planned=list(benchmark.questions),
        evaluations=evaluations,
        unscored_persona=unscored,
        graded_twice=twice,
        required_facts=required - deleted,
        told_facts=told,
        agent_errors=agent_errors,
        runner_errors=runner_errors,
        resent=resent,
        starts=starts,
        by_tag=by_tag,
        exchanges=exchanges,
        tokens=tokens,
        compactions=compactions,
        memory_calls=memory_calls,
        memory_failed=memory_failed,
        evidence=evidence,
        canary_hits=canary_hits,
        recorded=recorded,
        recorder_url=recorder_url,
        costs=costs,
        slips=slips,
        late_replies=late_replies,
        initiated=initiated,
        invalid=invalid,
        log_damage=log.damage_text() if log.damage else "",
        nudge_turn_calls=nudge_turn_calls,
        memory_flushes=flushes,
        background_calls=background,
        inherited=inherited_note,
        first_answers=first_answers(log.events),
        memory_results=memory_results,
        unplayed_prose=[f"{p.chapter}:{p.prose[0][0]} ({p.title})" for p in benchmark.phases if p.prose_only]
        if log.header.persona.get("driver") == "scripted"
        else [],
    )


def _agent_model(agent: dict[str, Any], seen: Counter[str]) -> str:
    """The agent's model as the recorder saw it (most used first); a configured name is only a
    claim — a chat `model` field says nothing of the model behind the agent — and says so."""
    if agent.get("offline_stand_in"):
        return str(agent.get("model", "offline stand-in"))
    if seen:
        return ", ".join(name for name, _ in seen.most_common())
    configured = agent.get("model")
    return f"{configured} (configured; not observed)" if configured else "unknown (not observed)"


def _indented(text: str) -> str:
    """An agent's multi-line answer inside a list item: its later lines indented, so none of
    them starts a line of the report (a heading, a fake summary line)."""
    return "\n  ".join(line.rstrip() for line in text.splitlines())


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_answers(events: list[Event]) -> dict[str, str]:
    """Each question's first reply — what a nudged question was answered before the nudge."""
    out: dict[str, str] = {}
    asked: str | None = None
    for event in events:
        if isinstance(event, Asked):
            asked = event.question_id
        elif isinstance(event, Said):
            asked = None
        elif isinstance(event, Replied) and asked is not None:
            out.setdefault(asked, event.text)
            asked = None
    return out


def _inherited(log: RunLog) -> tuple[list[Event], str]:
    """A fork's inherited prefix and the report's line about it (([], "") for a run that is not one)."""
    parent = log.header.parent
    if not parent:
        return [], ""
    state = str(parent.get("state_hash"))[:12]
    where = f"forked from {parent.get('run')} at checkpoint {parent.get('checkpoint')!r} (state {state})"
    try:
        events = inherited_events(log.path, log.header)
    except LineageError as exc:
        return [], f"{where}; its parent's log can't be read, so the teaching is not shown: {exc}"
    told = sum(1 for e in events if isinstance(e, FactTold))
    graded = sum(1 for e in events if isinstance(e, Evaluation))
    if graded:
        where += f"; {graded} question(s) graded before it keep the parent's grade"
    return events, (
        f"{where}: its {len(events)} events up to there, {told} facts told, are inherited — "
        "shown as the parent's, never re-graded"
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
    for lost in [e for e in s.runner_errors if e.kind == ErrorKind.AGENT_STATE_LOST][:1]:
        out += [f"> **The agent's state was lost mid-run.** {_short(lost.message, 400)}", ""]
    sure = [e for e in s.evaluations.values() if e.certain]  # an unresolved grade's score is a guess
    first_try = [e for e in sure if is_correct(PassRule.FIRST_TRY, e.score, e.attempts)]
    nudged = [e for e in sure if e.attempts == 2]
    after_nudge = sum(1 for e in nudged if passed(e.score))
    if s.inherited:
        out += [f"- {s.inherited}"]
    out += [
        f"- status: {s.status}; persona: {s.persona}; starts: {s.starts}; re-sent after a crash: {s.resent}",
        f"- run time: {s.active_seconds:.1f} s; phases: {s.phases_entered}/{s.phases_planned}",
        (
            f"- **mean score: {_fmt(s.mean)} / 10** over {len(s.evaluations)} graded questions"
            if not s.unresolved
            else f"- **mean score: between {_fmt((s.mean_range or (0, 0))[0])} and {_fmt((s.mean_range or (0, 0))[1])} / 10** "
            f"over {len(s.evaluations)} graded questions — {len(s.unresolved)} unresolved (the grader was not "
            f"sure): {', '.join(e.question_id for e in s.unresolved)}; the range is each of them at its least … "
            "at its most (wrong … right, or the two tries' grades where the retry rule's reading was unsure). "
            f"Resolve them with `marathon rescore RUN --grader anthropic:MODEL` (or `openai:URL#MODEL`)"
        ),
        f"- first-try accuracy: {len(first_try)}/{len(sure)}; post-nudge accuracy: {after_nudge}/{len(nudged)} "
        "(the mean above blends them, a retry counting ×0.5"
        + (f"; the {len(s.unresolved)} unresolved left out)" if s.unresolved else ")"),
        "",
        "### Score distribution",
        "",
        "| score | questions |",
        "|---|---|",
    ]
    buckets = Counter(int(min(10, max(0, e.score))) for e in sure)
    out += [f"| {b} | {buckets[b]} |" for b in range(10, -1, -1) if buckets[b]]
    if s.unresolved:
        out.append(f"| unresolved | {len(s.unresolved)} |")
    if s.by_tag:
        out += ["", "### By tag", "", "| tag | questions | mean |", "|---|---|---|"]
        out += [f"| {tag} | {len(v)} | {_span(v)} |" for tag, v in sorted(s.by_tag.items())]
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
    if s.unplayed_prose:
        out.append(
            f"- phases of prose only, not played by the scripted persona: {', '.join(s.unplayed_prose)}"
        )
    out.append(f"- coverage {'complete' if s.coverage_complete else 'INCOMPLETE'}")
    out += ["", *_traffic_section(s)]
    out += ["", "### Tokens and cost", "", "| role | usage and cost |", "|---|---|"]
    out += [f"| {role} | {cost.describe()} |" for role, cost in s.costs.items()]
    if s.slips:
        out += ["", f"### Persona slips: {len(s.slips)}", ""]
        out += [f"- {slip.kind}: {slip.detail}" for slip in s.slips]
    if s.unscored_persona:
        out += [
            "",
            f"### Unscored (persona): {len(s.unscored_persona)} — left out of the scores, not forgotten",
            "",
        ]
        out += [f"- {qid}: {why}" for qid, why in sorted(s.unscored_persona.items())]
    if s.log_damage:
        out += ["", f"**Log:** {s.log_damage}; the figures above stop there."]
    if s.invalid:
        out += [
            "",
            f"### Records skipped as invalid: {len(s.invalid)} (the figures above leave them out)",
            "",
        ]
        out += [f"- record {e.seq}: {e.problem}" for e in s.invalid]
    if s.late_replies:
        out += [
            "",
            f"### Late replies: {len(s.late_replies)} (each kept with its own message, never graded)",
            "",
        ]
        out += [f"- to {_short(r.answers)!r}: {_short(r.text)!r}" for r in s.late_replies]
    if s.initiated:
        out += ["", f"### Messages the agent sent on its own: {len(s.initiated)} (never graded)", ""]
        out += [f"- {_short(m.text)!r} ({m.why})" for m in s.initiated]
    if s.agent_errors or s.runner_errors:
        out += ["", "### Errors (apart from memory failures)", ""]
        # an error's message may quote what the agent sent: one line each, never a line of its own
        out += [f"- {e.source} {e.kind}: {' '.join(e.message.split())}" for e in s.agent_errors]
        out += [f"- runner {e.kind}: {' '.join(e.message.split())}" for e in s.runner_errors]
    imperfect = [
        (q, s.evaluations[q.id])
        for q in s.planned
        if q.id in s.evaluations and not is_full(s.evaluations[q.id].score)
    ]
    if imperfect:
        out += ["", "### Imperfect answers", ""]
        for q, e in imperfect:
            tags = f" [{', '.join(q.tags)}]" if q.tags else ""
            out += [
                (
                    f"**❓ {q.id}{tags} — {e.score:g}/10**"
                    if e.certain
                    else f"**❓ {q.id}{tags} — unresolved: {e.bounds()[0]:g}…{e.bounds()[1]:g}/10** (best guess {e.score:g})"
                )
                + (" (after a nudge)" if e.attempts == 2 else ""),
                f"- question: {q.text}",
                f"- expected: {q.expected or '(that it was never told)'}",
                *(
                    [f"- first answer: {_indented(s.first_answers[q.id].strip()) or '(none)'}"]
                    if e.attempts == 2 and q.id in s.first_answers
                    else []
                ),
                f"- answer{' after the nudge' if e.attempts == 2 else ''}: {_indented(e.answer.strip()) or '(none)'}",
                f"- grader ({e.grader}): {' '.join(e.reason.split())}",
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


def _traffic_section(s: RunSummary) -> list[str]:
    out = ["### The agent's LLM traffic", ""]
    if not s.recorded and s.recorder_url:
        out.append(
            f"Not observable: the recorder listened at {s.recorder_url}, but none of the agent's LLM calls "
            "reached it (its LLM base URL must point there), so its compactions, memory calls and what "
            "was still in its context are **not observable** in this run (this is not a count of zero)."
        )
        return out
    if not s.recorded:
        out.append(
            "Not recorded: the agent's LLM calls did not go through the recorder, so its compactions, "
            "memory calls and what was still in its context are **not observable** in this run "
            "(this is not a count of zero)."
        )
        return out
    t = s.tokens
    out.append(
        f"- LLM calls recorded: {s.exchanges} (input {t['input']:,} tokens, output {t['output']:,}, "
        f"cache read {t['cache_read']:,}, cache write {t['cache_write']:,})"
    )
    out.append(f"- compactions seen: {len(s.compactions)}")
    if s.memory_flushes:
        out.append(
            f"- memory flushes seen: {s.memory_flushes} (the agent's silent turns storing memories before it compacts)"
        )
    for c in s.compactions:
        during = f", during question {c.question_id}" if c.question_id else ""
        out.append(
            f"  - {c.kind}: {c.tokens_before:,} → {c.tokens_after:,} tokens (phase {c.phase + 1}{during})"
        )
    reads = sum(1 for m in s.memory_calls if m.operation == "read")
    own = sum(1 for m in s.memory_calls if m.background)
    out.append(  # calls the model made; one whose tool returned an error stored or found nothing
        f"- memory tool calls: {len(s.memory_calls)} ({reads} read, {len(s.memory_calls) - reads} write), "
        f"{s.memory_failed} of them returned an error"
        + (f"; {own} of them in background calls, charged to no question" if own else "")
    )
    if s.background_calls:
        out.append(
            f"- background calls (the agent's own — heartbeats, reviews of the conversation — recorded, "
            f"never read as the conversation or a compaction): {s.background_calls}"
        )
    out.append("- scores by where the evidence was when asked:")
    for where, scores in s.split().items():
        mean = f"mean {sum(scores) / len(scores):.2f}" if scores else "—"
        out.append(f"  - {where}: {len(scores)} questions, {mean}")
    if s.canary_hits:
        out.append(f"- **revoked canaries back in the agent's input: {len(s.canary_hits)}**")
        for h in s.canary_hits:
            during = f" (question {h.question_id})" if h.question_id else ""
            out.append(f"  - {h.marker!r} in LLM call #{h.exchange}{during}")
    out += ["", "| question | score | memory calls | evidence when asked |", "|---|---|---|---|"]
    for q in s.planned:
        e = s.evaluations.get(q.id)
        score = "—" if e is None else f"{e.score:g}"
        out.append(
            f"| {q.id} | {score} | {s.memory_calls_for(q.id)} | {_evidence_label(q.abstain, s.evidence.get(q.id))} |"
        )
    return out


def _evidence_label(abstain: bool, in_context: bool | None) -> str:
    if abstain:
        return "n/a (abstention)"
    if in_context is None:
        return "not observed"
    return "in context" if in_context else "beyond the boundary"


def add_judge_costs(summary: RunSummary, run_dir: Path) -> None:
    """Judges run after the run (`marathon rescore`); their usage is in `rescore-*.json`."""
    for path in sorted(run_dir.glob("rescore-*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        usage = data.get("usage") or {}
        if usage.get("input") or usage.get("output"):
            model = str(data.get("grader", "")).rsplit(":", 1)[-1].rsplit("#", 1)[-1]
            summary.costs["judge"].add(model, usage, calls=int(data.get("calls", 1)))


def refresh_run_report(log: RunLog, benchmark: Benchmark, run_dir: Path) -> None:
    """Rewrite `<run>/report.md` (e.g. after a rescore); the recordings' journal is untouched."""
    summary = summarize(log, benchmark)
    add_judge_costs(summary, run_dir)
    (run_dir / "report.md").write_text(
        safe_text(f"# Run report\n\n{render_markdown(summary)}"), encoding="utf-8"
    )


def write_reports(log: RunLog, benchmark: Benchmark, run_dir: Path) -> RunSummary:
    """Write `<run>/report.md` and append the same entry to `<recordings>/report.md`."""
    summary, text = _run_report(log, benchmark, run_dir)
    (run_dir / "report.md").write_text(f"# Run report\n\n{text}", encoding="utf-8")
    # MarathonMemBench's state.json, as its users know it (`marathon state RUN --json` prints it)
    state = json.dumps(run_state(log, benchmark).to_json(), ensure_ascii=False, indent=1)
    (run_dir / "state.json").write_text(state + "\n", encoding="utf-8")
    with (run_dir.parent / "report.md").open("a", encoding="utf-8") as f:
        f.write(f"\n{text}")
    return summary


def reports_behind(run_dir: Path) -> bool:
    """A run's report.md is missing or older than its log: its process was stopped between the
    log's last record and the report (a finished run skipped on the next command writes it then)."""
    try:
        return (run_dir / "report.md").stat().st_mtime < (run_dir / "events.msgpack").stat().st_mtime
    except FileNotFoundError:
        return True


def render_run_report(log: RunLog, benchmark: Benchmark, run_dir: Path) -> str:
    """`<run>/report.md` as the log renders it now (what `write_reports` writes; `marathon
    verify` compares the file with it)."""
    return f"# Run report\n\n{_run_report(log, benchmark, run_dir)[1]}"


def _run_report(log: RunLog, benchmark: Benchmark, run_dir: Path) -> tuple[RunSummary, str]:
    summary = summarize(log, benchmark)
    add_judge_costs(summary, run_dir)
    text = render_markdown(summary)
    scoped = check_scope(benchmark, log.events, state_folder(log.header.agent, run_dir))
    if scoped is not None:  # what the agent's state folder still holds of what it was asked to forget
        text = text.rstrip() + "\n\n" + "\n".join(render_scope(scoped))
    return summary, safe_text(text)  # an agent's answers and errors: shown, never obeyed by a terminal or viewer
