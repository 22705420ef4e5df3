"""The memory autopsy: for each answer that isn't right, the stage of the agent's memory where
the fact was lost — read from the run log (every persona message, memory call with its
arguments, tool result and model input) and from the agent's memory files at the end.

The stages, in the order a fact travels (docs/experiments.md, "The memory autopsy"):

- **never stored** — told, but no memory write held the value that its tool stored as far as
  it said (a write answered "already noted" or "no change" stored nothing);
- **write refused** — told and written, but its tool refused every write holding the value (an
  error, or words that say so: memory full, over a limit): nothing stored;
- **kept the old value** — an update whose new value never reached memory, while the old did;
- **stored, then lost** — a write held it and a state read after it (a checkpoint, a search
  result) saw memory keep it; the memory files at the end don't;
- **stored but not retrieved** — memory held it, but it was not in the model's input when the
  question was answered (no read returned it, no system prompt carried it);
- **retrieved but not used** — it was in the model's input (a read returned it, the system
  prompt or the conversation held it) and the answer didn't give it;
- **a deleted fact still kept** — a `[deleted]` question answered with what was deleted;
- **unknown** — with what could not be seen: the agent's traffic was not recorded, its memory
  is not in files we read, the value matcher was unsure at the link that decides, or the value
  is also another fact's and the line that matched is not tied to this one.

A match counts for a fact only on a line about it (gateway/report/fact_tie.py): the question's
and its fact's words — less those of the other facts holding the same value.

Value matching is the grader's (`persona.grading.exact.value_in`), three-valued: an unsure
match never decides a stage. What a caller may rely on: every graded question gets a verdict
(a stage, or why it has none: right, unresolved, a question about nothing told).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from gateway.log.events import (
    Evaluation,
)
from gateway.log.vocabulary import TerminationReason
from gateway.report.deletion_checks import deleted_before
from gateway.report.fact_tie import FactTie, some_item, tie_of
from gateway.report.fact_trail import Mark, Trail, Write
from gateway.report.memory_state import MemoryState, all_items, any_text, figures_remembered
from gateway.report.operation_figures import Links
from gateway.report.recordings import RecordedRun
from gateway.report.write_outcome import WriteOutcome, outcome_of
from persona.benchmark.model import DELETED_MARKERS, Question
from persona.grading.leak import states_deleted
from persona.outcome import PassRule, is_correct
from persona.terms import split_items

COMPUTED = "aggregation"  # a total or a count: never told as such, so its trail can't be followed


class Stage(StrEnum):
    NEVER_STORED = "never stored"
    WRITE_REFUSED = "write refused"
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
    UNPLANNED = "graded, but not a question of the benchmark as played"
    RELEASED = "not traced: the run was read for its totals only (its log released)"


class StepKind(StrEnum):
    TOLD = "told"
    UPDATED = "updated"
    DELETED = "deleted"
    WRITTEN = "written"
    WRITE_REFUSED = "write refused"
    NOTHING_WRITTEN = "nothing written"  # the tool answered ("already noted") and stored nothing
    OLD_WRITTEN = "old value written"
    ASKED = "asked"
    READ = "read returned it"
    IN_INPUT = "in the model's input"
    AT_CHECKPOINT = "memory at a checkpoint"
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
    links: Links = field(default_factory=lambda: Links())
    facts: tuple[str, ...] = ()  # the facts ("file:id") whose text held the value when it was asked

    @property
    def verdict(self) -> str:
        if self.stage is None:
            return str(self.no_stage)
        return f"{self.stage} ({self.unseen})" if self.unseen else str(self.stage)

    @property
    def evidence(self) -> str:
        """The records that decided the stage ("write refused at 337; …"), and what the stage
        also rests on that no record shows (an absence); for unknown, what was missing."""
        if self.stage is None:
            return ""
        if self.stage is Stage.UNKNOWN:
            return f"undecided: {self.unseen}"
        kinds, absent = _DECIDED_BY[self.stage]
        shown = [f"{s.kind} at {'end' if s.at is None else s.at}" for s in self.steps if s.kind in kinds]
        return "; ".join([*dict.fromkeys(shown), *absent])


@dataclass
class RunAutopsy:
    run_id: str
    questions: list[QuestionAutopsy] = field(default_factory=list)
    memory_unseen: str = ""  # why the memory files could not be read ("" when they were)
    memory_not_read: list[str] = field(default_factory=list)  # files that were not read, and why
    memory_read_when: str = "read at the end of the run"  # which state of the folder was read


@dataclass
class _Indexes:
    """One run's trail, its memory files and its deletions, read once for every question."""

    run: RecordedRun
    trail: Trail
    memory: MemoryState
    deleted: dict[str, list[str]]

    within: Path | None = None  # read memory only under this folder (the viewer's recordings)
    archived: dict[Path, MemoryState] = field(default_factory=dict)

    def checkpoint(self, archive: Path) -> MemoryState:
        """The memory files a checkpoint archived (read once per run)."""
        if archive not in self.archived:
            self.archived[archive] = MemoryState.in_checkpoint(self.run.header.agent, archive, self.within)
        return self.archived[archive]

    @classmethod
    def of(cls, run: RecordedRun, within: Path | None = None) -> _Indexes:
        return cls(
            run,
            Trail.of(run.log),
            MemoryState.at_end(run.header.agent, run.run_dir, within),
            deleted_before(run, {q.id for q in run.summary.planned if q.deleted}),
            within,
        )


def autopsy(run: RecordedRun, rule: str = PassRule.FIRST_TRY, within: Path | None = None) -> RunAutopsy:
    """Every graded question's verdict, with the steps of its value's life. `within`: read the
    agent's memory only under this folder (the viewer serves one recordings folder, no more)."""
    index = _Indexes.of(run, within)
    result = RunAutopsy(
        run.summary.run_id,
        memory_unseen=index.memory.unseen,
        memory_not_read=list(index.memory.files.not_read) if index.memory.files else [],
    )
    result.memory_read_when = _read_when(run.summary.ending)
    questions = {q.id: q for q in run.summary.planned}
    with figures_remembered():  # every question's value is looked for in every line said
        for qid, ev in run.summary.evaluations.items():
            if qid in questions:
                result.questions.append(_question(index, questions[qid], ev, rule))
            else:  # graded, but the benchmark as played no longer has it: counted, never traced
                result.questions.append(QuestionAutopsy(qid, "", ev.score, None, NoStage.UNPLANNED))
    return result


def _read_when(ending: TerminationReason | None) -> str:
    """Which state of the agent's folder the autopsy read: its end state only when the run ended
    (issue 60: an interrupted run's autopsy said "read at the end of the run")."""
    if ending is TerminationReason.COMPLETED:
        return "read at the end of the run"
    if ending is None or ending is TerminationReason.INTERRUPTED:
        why = "it was interrupted" if ending else "its log has no end record (killed, or still running)"
        return f"read as the state folder is now — not the run's end state: {why}, and a resume goes on from here"
    return f"read after the run ended {ending.value} (before its exam was done)"


def autopsy_of(run: RecordedRun) -> RunAutopsy:
    """`autopsy(run)`, computed once per run (kept in `run.derived`); a run whose events were
    released (read for its totals) is not traced, and says so, question by question."""
    found = run.derived.get("autopsy")
    if not isinstance(found, RunAutopsy):
        if run.released:
            found = RunAutopsy(run.summary.run_id, memory_unseen=str(NoStage.RELEASED))
            found.questions = [
                QuestionAutopsy(qid, "", ev.score, None, NoStage.RELEASED)
                for qid, ev in run.summary.evaluations.items()
            ]
        else:
            found = autopsy(run)
        run.derived["autopsy"] = found
    return found


def _question(index: _Indexes, q: Question, ev: Evaluation, rule: str) -> QuestionAutopsy:
    trail, memory = index.trail, index.memory
    asked = trail.asked.get(q.id)
    tie = tie_of(index.run.benchmark, q)
    facts = tie.facts
    steps: list[Step] = [Step(asked, StepKind.ASKED, q.text)] if asked else []
    right = is_correct(rule, ev.score, ev.attempts)

    links = Links(right=right if ev.certain else None)

    def verdict(stage: Stage | None, no_stage: NoStage | None = None, unseen: str = "") -> QuestionAutopsy:
        steps.append(Step(trail.graded.get(q.id), StepKind.GRADED, f"{ev.score:g}/10: {ev.answer[:120]}"))
        ordered = tuple(sorted(steps, key=lambda s: s.order))  # the memory files after the run: last
        return QuestionAutopsy(
            q.id, q.expected, ev.score, stage, no_stage, unseen, ordered, q.tags, links, facts
        )

    if q.deleted:
        gone = index.deleted.get(q.id, [])
        deletions = [(at, e) for at, e in trail.edits if e.new.strip() in DELETED_MARKERS and e.old in gone]
        steps += [Step(at, StepKind.DELETED, e.old or "") for at, e in deletions]
        held = "\n".join(memory.files.texts.values()) if memory.files is not None else ""
        if kept := [t for t in gone if states_deleted([t], held)]:
            steps.append(Step(None, StepKind.IN_MEMORY, "; ".join(kept)[:200]))
        links = Links(
            right=links.right,
            deletion_kept=bool(kept) if memory.files is not None and gone else None,
            deletion=True,
        )
        if not ev.certain:
            return verdict(None, NoStage.UNRESOLVED)
        if right:  # "I no longer know what Vadim did" names him and is right
            return verdict(None, NoStage.RIGHT)
        if states_deleted(gone, ev.answer):
            return verdict(Stage.DELETED_KEPT)
        return verdict(None, NoStage.DELETED_NOT_STATED)
    if (q.abstain or COMPUTED in q.tags) and right and ev.certain:  # passed: no wrong answer to explain
        return verdict(None, NoStage.RIGHT)  # (issue 62: a passing [abstain] was counted with the wrong)
    if q.abstain:
        return verdict(None, NoStage.ABSTAIN)
    if COMPUTED in q.tags:
        return verdict(None, NoStage.COMPUTED)
    value = q.expected
    before = asked.order if asked else 1 << 60
    said = [(at, text) for at, text in trail.said if at.order < before]
    told = all_items(value, [text for _, text in said])
    telling = [(at, text) for at, text in said if some_item(value, text)]
    # what the fact is about (the question's words, its fact's text): a note holding the value
    # counts only when it is about that ("Marcus" in his birthday's note is not the note that he
    # is the partner) — and when other facts hold the value too, only when tied to this one
    first = next((line for _, text in telling for line in text.splitlines() if some_item(value, line)), "")
    tie = tie.told(first)
    topic = tie.topic

    def mine(text: str) -> bool:  # shown in the timeline: a line that holds it and may be this fact's
        return any(any_text(item, [text], topic) is not False for item in split_items(value)) and some_item(
            value, text
        )

    for at, text in telling:  # the lines of each message that told it (not the other facts said with it)
        lines = [line.strip() for line in text.splitlines() if mine(line)]
        if lines and sum(s.kind is StepKind.TOLD for s in steps) < 3:
            steps.append(Step(at, StepKind.TOLD, " / ".join(lines)[:160]))
    # an update: the fact's text before the edit that brought the asked value in
    changed = [
        (at, e) for at, e in trail.edits
        if e.old and at.order < before and some_item(value, e.new) and not some_item(value, e.old)
    ]  # fmt: skip
    # every earlier text of the updated facts (an update of an update: the first value may be
    # the one memory kept), each as the words and figures the new text doesn't have
    updated = {(e.file, e.fact_id) for _, e in changed}
    history = [
        e.old for at, e in trail.edits if (e.file, e.fact_id) in updated and e.old and at.order < before
    ]
    new_text = changed[-1][1].new if changed else ""
    olds = [old_value(text, new_text) for text in dict.fromkeys(history)]
    steps += [Step(at, StepKind.UPDATED, f"{e.old} → {e.new}") for at, e in changed]
    earlier = [w for w in trail.writes if w.at.order < before]
    # what each write's tool answered: a refusal or "already noted" stored nothing, whatever the
    # call held (issue 60) — read for the writes that matter only
    writes = [(w, _outcome(trail, w)) for w in earlier if mine(w.text)]
    steps += [Step(w.at, _WRITE_STEP[outcome], _write_detail(trail, w)) for w, outcome in writes]
    old_written = [
        w for w in earlier
        if w.accepted and any(o and all_items(o, [w.text], topic) and not some_item(value, w.text) for o in olds)
        and _outcome(trail, w) is WriteOutcome.ACKNOWLEDGED
    ]  # fmt: skip
    steps += [Step(w.at, StepKind.OLD_WRITTEN, _write_detail(trail, w)) for w in old_written]
    results = trail.read.get(q.id, [])
    read = all_items(value, results, topic) if results else False
    if read:
        steps.append(Step(asked, StepKind.READ, "a tool result in the question's turn held it"))
    systems = trail.system.get(q.id, [])
    in_system = any_text(value, systems, topic) if systems else False
    in_context = _in_context(trail, q, tie)
    if in_system or in_context:
        steps.append(Step(asked, StepKind.IN_INPUT, "the system prompt" if in_system else "the conversation"))
    # when memory surely held it after a write: a checkpoint's state, or a search result in an
    # earlier question's turn (an acknowledgement is no proof: a tool may say "saved" and not save)
    kept_at: list[int] = []
    for at, name, archive in trail.checkpoints:
        if at.order < before:
            saved = index.checkpoint(archive)
            there = saved.holds(value, topic)
            reading = (
                "held it" if there else "did not hold it" if there is False else saved.unseen or "unsure"
            )
            steps.append(Step(at, StepKind.AT_CHECKPOINT, f"{name}: {reading}"))
            if there:
                kept_at.append(at.order)
    held_now = memory.holds(value, topic)
    if held_now:
        steps.append(Step(None, StepKind.IN_MEMORY, ", ".join(memory.where(value, topic))))
    acknowledged = [w for w, outcome in writes if outcome is WriteOutcome.ACKNOWLEDGED]
    stored = all_items(value, [w.text for w in acknowledged], topic) if acknowledged else False
    seen = index.run.observed and told is True
    in_input = (
        (
            True
            if read or in_system or in_context
            else None
            if None in (read, in_system, in_context)
            else False
        )
        if seen
        else None
    )
    links = Links(
        stored=stored if seen else None,
        in_input=in_input,
        right=links.right,
        update="update" in q.tags or "correction" in q.tags,
        memory=told is not False,  # a value the persona never said: nothing memory could hold
    )
    shared = f" ({tie.shared}: only a line tied to this fact decides)" if tie.shared else ""

    def unknown(why: str) -> QuestionAutopsy:
        return verdict(Stage.UNKNOWN, unseen=why + (f"; {tie.untied}" if tie.untied else shared))

    if not ev.certain:
        return verdict(None, NoStage.UNRESOLVED)
    if right:
        return verdict(None, NoStage.RIGHT)
    if told is None:
        return unknown("the matcher can't decide whether the persona told it")
    if not told:
        return verdict(None, NoStage.NOT_TOLD)
    if not index.run.observed:  # the memory files still say how far it got (issue 60: they were ignored)
        return unknown("the agent's LLM traffic was not recorded" + _UNOBSERVED_MEMORY[held_now])
    if read or in_system or in_context:
        return verdict(Stage.NOT_USED)
    if read is None or in_system is None or in_context is None:
        return unknown("the matcher can't decide whether the model's input held it")
    if stored is None:
        return unknown("the matcher can't decide whether a write held it")
    if not stored:
        if old_written:
            return verdict(Stage.KEPT_OLD_VALUE)
        refused = [w for w, outcome in writes if outcome is WriteOutcome.REFUSED]
        return verdict(
            Stage.WRITE_REFUSED
            if refused and all_items(value, [w.text for w in refused], topic)
            else Stage.NEVER_STORED
        )
    if held_now is None:
        return unknown(memory.unseen or "the matcher can't decide whether memory held it")
    if held_now:
        return verdict(Stage.NOT_RETRIEVED)
    first_write = min((w.at.order for w in acknowledged if all_items(value, [w.text], topic)), default=0)
    kept_at += [  # read only here, where it decides: an earlier question's search that found it
        when.order
        for other, when in trail.asked.items()
        if other != q.id
        and first_write < when.order < before
        and all_items(value, trail.read.get(other, []), topic)
    ]
    if any(order > first_write for order in kept_at):
        return verdict(Stage.STORED_THEN_LOST)
    if changed and any(o and memory.holds(o, topic) for o in olds):  # memory holds the old value, not the new
        return verdict(Stage.KEPT_OLD_VALUE)
    return unknown(
        "a write its tool accepted held it, but no state read after the write shows memory kept it (no "
        "checkpoint or search result between the write and the end): never stored, or stored then lost — "
        "a checkpoint (`checkpoint_at`) tells them apart"
    )


# each stage: the steps that decide it, and the absences it rests on (said, as no record shows them)
_DECIDED_BY: dict[Stage, tuple[frozenset[StepKind], tuple[str, ...]]] = {
    Stage.NEVER_STORED: (
        frozenset({StepKind.TOLD, StepKind.NOTHING_WRITTEN}),
        ("no write whose tool stored it held it",),
    ),
    Stage.WRITE_REFUSED: (frozenset({StepKind.TOLD, StepKind.WRITE_REFUSED}), ("no other write held it",)),
    Stage.KEPT_OLD_VALUE: (
        frozenset({StepKind.UPDATED, StepKind.OLD_WRITTEN, StepKind.WRITE_REFUSED, StepKind.NOTHING_WRITTEN}),
        ("the new value is not in memory",),
    ),
    Stage.STORED_THEN_LOST: (
        frozenset({StepKind.WRITTEN, StepKind.AT_CHECKPOINT}),
        ("memory held it after the write (a checkpoint, or a search that found it)", "not in memory at the end"),
    ),
    Stage.NOT_RETRIEVED: (
        frozenset({StepKind.WRITTEN, StepKind.IN_MEMORY}),
        ("no read in the question's turn returned it, no system prompt or conversation held it",),
    ),
    Stage.NOT_USED: (frozenset({StepKind.READ, StepKind.IN_INPUT}), ("the answer did not give it",)),
    Stage.DELETED_KEPT: (frozenset({StepKind.DELETED, StepKind.IN_MEMORY}), ("the answer states the deleted fact",)),
}

_UNOBSERVED_MEMORY = {
    True: " — its memory files hold it at the end: stored, but whether it was retrieved or used can't be seen",
    False: " — its memory files at the end don't hold it: never stored, or stored then lost",
    None: "",
}

_WRITE_STEP = {
    WriteOutcome.ACKNOWLEDGED: StepKind.WRITTEN,
    WriteOutcome.REFUSED: StepKind.WRITE_REFUSED,
    WriteOutcome.NOTHING_WRITTEN: StepKind.NOTHING_WRITTEN,
}


def _outcome(trail: Trail, write: Write) -> WriteOutcome:
    return outcome_of(trail.result_of(write) if write.accepted else None, not write.accepted, write.text)


def _write_detail(trail: Trail, write: Write) -> str:
    """The call's text and what its tool answered (the timeline shows both)."""
    result = trail.result_of(write)
    answered = f" → {' '.join(result.split())[:80]!r}" if result is not None else ""
    return " ".join(write.text.split())[:120] + answered


def _in_context(trail: Trail, q: Question, tie: FactTie) -> bool | None:
    """Was the value still in the conversation when asked? The recorder's evidence check matched
    the string; for a value other facts hold too, the conversation is read again for a line tied
    to this fact (an earlier reply about the other fact is not this one in context)."""
    found = trail.evidence.get(q.id, False)
    if not found or not tie.shared_with:
        return found
    context = trail.context_before(q.id, trail.asked_text.get(q.id, q.text))
    return None if context is None else all_items(q.expected, [context], tie.topic)


def old_value(old: str, new: str) -> str:
    """What an update replaced: the old fact's words and figures the new one doesn't have
    ("moved to 10 November" → "moved again, to 17 November": "10")."""
    kept = {w.casefold() for w in _TOKEN.findall(new)}
    gone = [w for w in _TOKEN.findall(old) if w.casefold() not in kept and (len(w) > 3 or _figure_in(w))]
    if gone:
        return " ".join(gone)
    # a correction that names what it replaces ("1,100 euros, not 950"): the old figures
    return " ".join(
        w
        for w in _TOKEN.findall(old)
        if _figure_in(w) and w.casefold() not in new.casefold().split(" not ")[0]
    )


def _figure_in(word: str) -> bool:
    return any(c.isdigit() for c in word)


_TOKEN = re.compile(r"[£$€]?\d[\d,.:/]*\w*|[^\W\d_][\w'-]*")
