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

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

from gateway.log.events import (
    Evaluation,
)
from gateway.report.deletion_checks import deleted_before
from gateway.report.diagnosis import COMPUTED
from gateway.report.fact_trail import Mark, Trail
from gateway.report.memory_state import MemoryState, all_items, any_text
from gateway.report.recordings import RecordedRun
from persona.benchmark.model import DELETED_MARKERS, Question
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
    """One moment of a value's life: `at` is the log record it is read from (None: the memory
    files after the run)."""

    at: Mark | None
    kind: StepKind
    detail: str = ""

    @property
    def order(self) -> int:
        return self.at.order if self.at is not None else 1 << 60


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
class RunAutopsy:
    run_id: str
    questions: list[QuestionAutopsy] = field(default_factory=list)
    memory_unseen: str = ""  # why the memory files could not be read ("" when they were)


@dataclass
class _Indexes:
    """One run's trail, its memory files and its deletions, read once for every question."""

    run: RecordedRun
    trail: Trail
    memory: MemoryState
    deleted: dict[str, list[str]]

    @classmethod
    def of(cls, run: RecordedRun) -> _Indexes:
        return cls(
            run,
            Trail.of(run.log),
            MemoryState.at_end(run.header.agent, run.run_dir),
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
    trail, memory = index.trail, index.memory
    asked = trail.asked.get(q.id)
    steps: list[Step] = [Step(asked, StepKind.ASKED, q.text)] if asked else []
    right = is_correct(rule, ev.score, ev.attempts)

    def verdict(stage: Stage | None, no_stage: NoStage | None = None, unseen: str = "") -> QuestionAutopsy:
        steps.append(Step(trail.graded.get(q.id), StepKind.GRADED, f"{ev.score:g}/10: {ev.answer[:120]}"))
        ordered = tuple(sorted(steps, key=lambda s: s.order))  # the memory files after the run: last
        return QuestionAutopsy(q.id, q.expected, ev.score, stage, no_stage, unseen, ordered, q.tags)

    if q.deleted:
        gone = index.deleted.get(q.id, [])
        deletions = [(at, e) for at, e in trail.edits if e.new.strip() in DELETED_MARKERS and e.old in gone]
        steps += [Step(at, StepKind.DELETED, e.old or "") for at, e in deletions]
        held = "\n".join(memory.files.texts.values()) if memory.files is not None else ""
        if kept := [t for t in gone if states_deleted([t], held)]:
            steps.append(Step(None, StepKind.IN_MEMORY, "; ".join(kept)[:200]))
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
    before = asked.order if asked else 1 << 60
    said = [(at, text) for at, text in trail.said if at.order < before]
    told = all_items(value, [text for _, text in said])
    steps += [Step(at, StepKind.TOLD, text[:160]) for at, text in said if _some_item(value, text)][:3]
    # an update: the fact's text before the edit that brought the asked value in
    changed = [
        (at, e) for at, e in trail.edits
        if e.old and at.order < before and _some_item(value, e.new) and not _some_item(value, e.old)
    ]  # fmt: skip
    olds = [e.old for _, e in changed if e.old]
    steps += [Step(at, StepKind.UPDATED, f"{e.old} → {e.new}") for at, e in changed]
    earlier = [w for w in trail.writes if w.at.order < before]
    steps += [
        Step(w.at, StepKind.WRITTEN if w.accepted else StepKind.WRITE_REFUSED, w.text[:160])
        for w in earlier
        if _some_item(value, w.text)
    ]
    old_written = [w for w in earlier if w.accepted and any(_old_value_in(o, value, w.text) for o in olds)]
    steps += [Step(w.at, StepKind.OLD_WRITTEN, w.text[:160]) for w in old_written]
    results = trail.read.get(q.id, [])
    read = all_items(value, results) if results else False
    if read:
        steps.append(Step(asked, StepKind.READ, "a tool result in the question's turn held it"))
    systems = trail.system.get(q.id, [])
    in_system = any_text(value, systems) if systems else False
    in_context = trail.evidence.get(q.id, False)
    if in_system or in_context:
        steps.append(Step(asked, StepKind.IN_INPUT, "the system prompt" if in_system else "the conversation"))
    held_now = memory.holds(value)
    if held_now:
        steps.append(Step(None, StepKind.IN_MEMORY, ", ".join(memory.where(value))))
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
    if read is None or in_system is None:
        return verdict(Stage.UNKNOWN, unseen="the matcher can't decide whether the model's input held it")
    accepted = [w.text for w in earlier if w.accepted]
    stored = all_items(value, accepted) if accepted else False
    if stored is None:
        return verdict(Stage.UNKNOWN, unseen="the matcher can't decide whether a write held it")
    if not stored:
        return verdict(Stage.KEPT_OLD_VALUE if old_written else Stage.NEVER_STORED)
    if held_now is None:
        return verdict(Stage.UNKNOWN, unseen=memory.unseen or "the matcher can't decide whether memory held it")
    return verdict(Stage.NOT_RETRIEVED if held_now else Stage.STORED_THEN_LOST)


def _some_item(value: str, text: str) -> bool:
    """Does `text` surely hold an item of `value` (a list answer's items apart)? For the steps."""
    return any(any_text(item, [text]) for item in split_items(value))


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
        at = "end" if step.at is None else str(step.at)
        lines.append(f"  {at:>6}  {step.kind:<22} {' '.join(step.detail.split())[:140]}")
    return "\n".join(lines) + "\n"
