"""The memory autopsy: for each answer that isn't right, the stage of the agent's memory where
the fact was lost — read from the run log (every persona message, memory call with its
arguments, tool result and model input) and from the agent's memory files at the end.

The stages, in the order a fact travels (docs/experiments.md, "The memory autopsy"):

- **never stored** — told, but no memory write the tool accepted held the value;
- **kept the old value** — an update whose new value never reached memory, while the old did;
- **stored, then lost** — an accepted write held it, the memory files at the end don't;
- **stored but not retrieved** — memory held it, but it was not in the model's input when the
  question was answered (no read returned it, no system prompt carried it);
- **retrieved but not used** — it was in the model's input (a read returned it, the system
  prompt or the conversation held it) and the answer didn't give it;
- **a deleted fact still kept** — a `[deleted]` question answered with what was deleted;
- **unknown** — with what could not be seen: the agent's traffic was not recorded, its memory
  is not in files we read, or the value matcher was unsure at the link that decides.

Value matching is the grader's (`persona.grading.exact.value_in`), three-valued: an unsure
match never decides a stage. What a caller may rely on: every graded question gets a verdict
(a stage, or why it has none: right, unresolved, a question about nothing told).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from gateway.log.events import (
    Asked,
    Evaluation,
    Event,
    EvidenceCheck,
    FactEdited,
    MemoryCallFailed,
    MemoryCallSeen,
    Said,
)
from gateway.report.deletion_checks import deleted_before
from gateway.report.diagnosis import COMPUTED, Diagnoser
from gateway.report.memory_state import MemoryState, all_items
from gateway.report.recordings import RecordedRun
from persona.benchmark.model import DELETED_MARKERS, Question
from persona.grading.exact import value_in
from persona.grading.leak import states_deleted
from persona.outcome import PassRule, is_correct
from persona.terms import split_items


class Stage(StrEnum):
    NEVER_STORED = "never stored"
    KEPT_OLD_VALUE = "kept the old value"
    STORED_THEN_LOST = "stored, then lost"
    NOT_RETRIEVED = "stored but not retrieved"
    NOT_USED = "retrieved but not used"
    DELETED_KEPT = "a deleted fact still kept"
    UNKNOWN = "unknown"


class NoStage(StrEnum):
    """Why a graded answer has no stage: nothing of memory went wrong, or nothing to trace."""

    RIGHT = "right"
    UNRESOLVED = "grade unresolved"
    ABSTAIN = "nothing was told (an abstain question)"
    COMPUTED = "computed from several facts"
    NOT_TOLD = "the persona never said it"
    DELETED_NOT_STATED = "a [deleted] question answered wrong, without the deleted fact"


class StepKind(StrEnum):
    TOLD = "told"
    UPDATED = "updated"
    DELETED = "deleted"
    WRITTEN = "written"
    WRITE_REFUSED = "write refused"
    OLD_WRITTEN = "old value written"
    ASKED = "asked"
    READ = "read returned it"
    IN_INPUT = "in the model's input"
    IN_MEMORY = "in memory at the end"
    GRADED = "graded"


@dataclass(frozen=True)
class Step:
    """One moment of a fact's life: `seq` is the log record it is read from (-1: the state)."""

    seq: int
    kind: StepKind
    detail: str = ""


@dataclass(frozen=True)
class QuestionAutopsy:
    question_id: str
    expected: str
    score: float
    stage: Stage | None  # None: see `no_stage`
    no_stage: NoStage | None = None
    unseen: str = ""  # for UNKNOWN: what could not be seen
    steps: tuple[Step, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        if self.stage is None:
            return str(self.no_stage)
        return f"{self.stage} ({self.unseen})" if self.unseen else str(self.stage)


@dataclass
class _Write:
    seq: int
    text: str  # the strings of the call's arguments, a line each
    accepted: bool


@dataclass
class RunAutopsy:
    run_id: str
    questions: list[QuestionAutopsy] = field(default_factory=list)
    memory_unseen: str = ""  # why the memory files could not be read ("" when they were)


def _writes(diagnoser: Diagnoser, events: Sequence[Event]) -> list[_Write]:
    """Each memory write with its own call's arguments: the n-th write of a tool in an exchange
    is the n-th call of that tool in the exchange's response."""
    refused = {e.call for e in events if isinstance(e, MemoryCallFailed)}
    taken: dict[tuple[int, str], int] = {}
    out = []
    for e in events:
        if not isinstance(e, MemoryCallSeen) or e.operation == "read":
            continue
        exchange = diagnoser.exchanges.get(e.exchange)
        calls = [c for c in (exchange.tool_calls if exchange else []) if c.get("name") == e.tool]
        n = taken.get((e.exchange, e.tool), 0)
        taken[(e.exchange, e.tool)] = n + 1
        args = calls[n].get("arguments") if n < len(calls) else None
        out.append(_Write(e.seq, "\n".join(_strings(args)), e.seq not in refused))
    return out


def _some_item(value: str, text: str) -> bool:
    """Does `text` surely hold an item of `value` (a list answer's items apart)? For the steps."""
    return any(value_in(text, item).found for item in split_items(value))


@dataclass
class _Indexes:
    """One run's log, indexed once for every question."""

    run: RecordedRun
    diagnoser: Diagnoser
    writes: list[_Write]
    memory: MemoryState
    asked: dict[str, int]
    said: list[tuple[int, str]]
    edits: list[FactEdited]
    evidence: dict[str, bool]
    deleted: dict[str, list[str]]

    @classmethod
    def of(cls, run: RecordedRun) -> _Indexes:
        events = run.log.events
        diagnoser = Diagnoser(run)
        return cls(
            run,
            diagnoser,
            _writes(diagnoser, events),
            MemoryState.at_end(run.header.agent, run.run_dir),
            {e.question_id: e.seq for e in events if isinstance(e, Asked) and not e.resent},
            [(e.seq, e.text) for e in events if isinstance(e, Said)],
            [e for e in events if isinstance(e, FactEdited)],
            {e.question_id: e.in_context for e in events if isinstance(e, EvidenceCheck)},
            deleted_before(run, {q.id for q in run.summary.planned if q.deleted}),
        )


def autopsy(run: RecordedRun, rule: str = PassRule.FIRST_TRY) -> RunAutopsy:
    """Every graded question's verdict, with the steps of its value's life."""
    index = _Indexes.of(run)
    result = RunAutopsy(run.summary.run_id, memory_unseen=index.memory.unseen)
    questions = {q.id: q for q in run.summary.planned}
    for qid, ev in run.summary.evaluations.items():
        if qid in questions:
            result.questions.append(_question(index, questions[qid], ev, rule))
    return result


def _question(index: _Indexes, q: Question, ev: Evaluation, rule: str) -> QuestionAutopsy:
    steps: list[Step] = [Step(index.asked[q.id], StepKind.ASKED, q.text)] if q.id in index.asked else []
    right = is_correct(rule, ev.score, ev.attempts)

    def verdict(stage: Stage | None, no_stage: NoStage | None = None, unseen: str = "") -> QuestionAutopsy:
        steps.append(Step(ev.seq, StepKind.GRADED, f"{ev.score:g}/10: {ev.answer[:120]}"))
        ordered = tuple(sorted(steps, key=lambda s: s.seq if s.seq >= 0 else 1 << 60))  # the state: last
        return QuestionAutopsy(q.id, q.expected, ev.score, stage, no_stage, unseen, ordered, q.tags)

    memory = index.memory
    if q.deleted:
        gone = index.deleted.get(q.id, [])
        deletions = [e for e in index.edits if e.new.strip() in DELETED_MARKERS and e.old in gone]
        steps += [Step(e.seq, StepKind.DELETED, e.old or "") for e in deletions]
        held = "\n".join(memory.files.texts.values()) if memory.files is not None else ""
        if kept := [t for t in gone if states_deleted([t], held)]:
            steps.append(Step(-1, StepKind.IN_MEMORY, "; ".join(kept)[:200]))
        if not ev.certain:
            return verdict(None, NoStage.UNRESOLVED)
        if states_deleted(gone, ev.answer):
            return verdict(Stage.DELETED_KEPT)
        return verdict(None, NoStage.RIGHT if right else NoStage.DELETED_NOT_STATED)
    if q.abstain:
        return verdict(None, NoStage.ABSTAIN)
    if COMPUTED in q.tags:
        return verdict(None, NoStage.COMPUTED)
    value = q.expected
    before = index.asked.get(q.id, 1 << 60)
    told = all_items(value, [text for seq, text in index.said if seq < before])
    telling = [(seq, text) for seq, text in index.said if seq < before and _some_item(value, text)]
    steps += [Step(seq, StepKind.TOLD, text[:160]) for seq, text in telling[:3]]
    # an update: the fact's text before the edit that brought the asked value in
    changed = [
        e for e in index.edits
        if e.old and e.seq < before and _some_item(value, e.new) and not _some_item(value, e.old)
    ]  # fmt: skip
    olds = [e.old for e in changed if e.old]
    steps += [Step(e.seq, StepKind.UPDATED, f"{e.old} → {e.new}") for e in changed]
    earlier = [w for w in index.writes if w.seq < before]
    steps += [
        Step(w.seq, StepKind.WRITTEN if w.accepted else StepKind.WRITE_REFUSED, w.text[:160])
        for w in earlier
        if _some_item(value, w.text)
    ]
    old_written = [w for w in earlier if w.accepted and any(_old_value_in(o, value, w.text) for o in olds)]
    steps += [Step(w.seq, StepKind.OLD_WRITTEN, w.text[:160]) for w in old_written]
    results = [text for found in index.diagnoser._tool_results(q.id) for text in _texts(json.loads(found))]
    read = all_items(value, results) if results else False
    if read:
        steps.append(Step(before, StepKind.READ, "a memory read in the question's turn returned it"))
    in_system = index.diagnoser._in_system(q.id, value)
    in_context = index.evidence.get(q.id, False)
    if in_system or in_context:
        steps.append(Step(before, StepKind.IN_INPUT, "the system prompt" if in_system else "the conversation"))
    held_now = memory.holds(value)
    if held_now:
        steps.append(Step(-1, StepKind.IN_MEMORY, ", ".join(memory.where(value))))
    if not ev.certain:
        return verdict(None, NoStage.UNRESOLVED)
    if right:
        return verdict(None, NoStage.RIGHT)
    if not told:
        return verdict(None, NoStage.NOT_TOLD)
    if not index.run.observed:
        return verdict(Stage.UNKNOWN, unseen="the agent's LLM traffic was not recorded")
    if read or in_system or in_context:
        return verdict(Stage.NOT_USED)
    if read is None:
        return verdict(Stage.UNKNOWN, unseen="the matcher can't decide whether a read returned it")
    accepted = [w.text for w in earlier if w.accepted]
    stored = all_items(value, accepted) if accepted else False
    if stored is None:
        return verdict(Stage.UNKNOWN, unseen="the matcher can't decide whether a write held it")
    if not stored:
        return verdict(Stage.KEPT_OLD_VALUE if old_written else Stage.NEVER_STORED)
    if held_now is None:
        return verdict(Stage.UNKNOWN, unseen=memory.unseen or "the matcher can't decide whether memory held it")
    return verdict(Stage.NOT_RETRIEVED if held_now else Stage.STORED_THEN_LOST)


def _strings(value: object) -> list[str]:
    """Every string in a tool call's arguments (its text, a file's content, a key's value)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return []


def _texts(content: object) -> list[str]:
    """The text a tool result carried, without its envelope (ids, types): the strings under
    `content` and `text`, or the result itself when it is a string."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [t for item in content for t in _texts(item)]
    if isinstance(content, dict):
        return [t for key in ("content", "text") if key in content for t in _texts(content[key])]
    return []


def _old_value_in(old_fact: str, value: str, text: str) -> bool:
    """Does `text` hold the old fact's own value (its words beyond what the new value shares)?
    Read as the grader reads a claim: the old fact's key terms, surely in the text."""
    return bool(states_deleted([old_fact], text)) and not _some_item(value, text)


def render_autopsy(result: RunAutopsy, stand_in: bool = False) -> str:
    """The per-question table (Markdown) and the stage counts."""
    lines = [f"# Memory autopsy: {result.run_id}", ""]
    if stand_in:
        lines += ["The agent ran on the offline rule-based model stand-in, not an LLM.", ""]
    lines.append(
        "Memory files: " + (f"not read — {result.memory_unseen}" if result.memory_unseen else "read at the end of the run")
    )
    lines += ["", "| question | expected | score | stage |", "|---|---|---|---|"]
    for q in result.questions:
        expected = q.expected.replace("|", "\\|")[:60]
        lines.append(f"| {q.question_id} | {expected} | {q.score:g} | {q.verdict} |")
    counts = Counter(str(q.stage) if q.stage else str(q.no_stage) for q in result.questions)
    lines += ["", "stages: " + "; ".join(f"{k} {v}" for k, v in counts.most_common())]
    return "\n".join(lines) + "\n"


def render_timeline(q: QuestionAutopsy) -> str:
    """One question's value through the run, step by step (`seq`: the log record, as
    `marathon inspect` numbers them; "end": the memory files after the run)."""
    lines = [f"{q.question_id}: expected {q.expected!r} — {q.verdict}"]
    for step in q.steps:
        at = "end" if step.seq < 0 else str(step.seq)
        lines.append(f"  {at:>6}  {step.kind:<22} {' '.join(step.detail.split())[:140]}")
    return "\n".join(lines) + "\n"
