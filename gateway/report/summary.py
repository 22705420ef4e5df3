"""One run's summary (design §7): every figure a run's reports show, derived from its log
alone (plus the benchmark's plan) — `summarize()` is the single place scores are derived.

A fork's summary counts its parent's teaching as told and keeps the grades the parent gave
before the checkpoint; a question whose answer the persona never delivered leaves the scores
(`unscored_persona`); an unresolved grade makes the mean a range (`mean_range`).
"""


from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

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
from gateway.report.persona_slips import spoiled_by_slips, unscored_by_slips
from persona.benchmark.model import DELETED_MARKERS, Benchmark, Question


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
    starts: int  # every start the log shows: a logged RunStart, or an end with none before it
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
    log_notes: list[str] = field(default_factory=list)  # how the log was read (`RunLog.notes`)
    unplayed_prose: list[str] = field(default_factory=list)  # prose-only phases a scripted run skipped
    nudge_turn_calls: set[int] = field(default_factory=set)  # seqs of memory calls in nudge turns
    # questions graded on evidence the persona never delivered (a fact marked told whose value
    # was never said): out of the scores, never counted as forgotten — question id → why
    unscored_persona: dict[str, str] = field(default_factory=dict)
    # of `starts`, those stopped before the agent was up (a Ctrl-C or failure while it started):
    # they logged their end but no RunStart
    starts_before_agent: int = 0
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
    resent = starts = phases = early_starts = 0
    started = 0  # the pid of the RunStart since the last RunEnded, else 0
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
                started = event.pid
                ending, ending_detail = None, ""
            case RunEnded():
                # a runner's end (it logs its pid) with no RunStart of that process: that start
                # stopped before its agent was up (the one before was killed, leaving no end)
                if event.pid and event.pid != started:
                    starts += 1
                    early_starts += 1
                started = 0
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
    # the persona's mistakes leave the scores before any figure is made of them
    unscored = unscored_by_slips(benchmark, list(benchmark.questions), slips, evaluations) | spoiled_by_slips(slips, evaluations)
    by_tag: dict[str, list[tuple[float, float]]] = {}
    for q in benchmark.questions:
        if q.id in evaluations:
            for tag in q.tags or ("untagged",):
                by_tag.setdefault(tag, []).append(evaluations[q.id].bounds())
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
        starts_before_agent=early_starts,
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
        log_notes=list(log.notes),
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
