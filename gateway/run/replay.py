"""`marathon replay`: drive another agent with a recorded persona side, word for word.

The recorded run's persona messages (facts, lines, updates, questions, nudges), its phase
entries, session changes and fact edits are replayed in order; only the agent differs. The
driver plays the evidence only: the recorded rung's distractor sessions are left out, and the
run's own rung (`LadderDriver`) plays its distractors — the same words when it is the
recorded rung (they are scripted from the pool and seed), another rung's when asked. So one
recording of an LLM persona drives a whole ladder with its wording identical on every rung.

Answers are graded again, by the exact grader, on what the new agent said — a nudge is
replayed exactly where the recorded persona sent one, and counts (×0.5) only where the new
agent's first answer was not already right. Re-sends after a crash, and copies of a
message re-sent because the recorded agent errored, are sent once.

Deterministic (the same recording gives the same actions), so a replay run resumes like any
other run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from gateway.log.events import (
    Asked,
    ErrorEvent,
    Evaluation,
    Event,
    FactEdited,
    FactsMarked,
    PhaseEntered,
    Replied,
    Said,
    SessionChanged,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import ErrorSource, Purpose, SessionAction, TerminationReason
from persona.benchmark.model import Benchmark, insert_index
from persona.drivers.actions import (
    AgentReply,
    Ask,
    Compact,
    EditFact,
    EnterPhase,
    Evaluate,
    Finish,
    MarkTold,
    NewSession,
    PersonaAction,
    Say,
)
from persona.drivers.retry_rule import nudges, retried
from persona.grading.exact import ExactGrader, Grader


class ReplayError(ValueError):
    """The recording can't be replayed: its benchmark changed since, or the run never completed."""


def recorded_log(path: Path | str) -> Path:
    path = Path(path)
    return path / EVENTS_FILE if path.is_dir() else path


def _errored(events: list[Event], index: int) -> bool:
    """Did the agent answer the message at `index` with an error (no reply before the next send)?"""
    for event in events[index + 1 :]:
        if isinstance(event, Replied):
            return False
        if isinstance(event, ErrorEvent) and event.source is ErrorSource.AGENT:
            return True
        if isinstance(event, Said | Asked):
            return True  # never answered
    return False


def persona_side(events: list[Event]) -> Iterator[Event]:
    """The recorded persona's side, each message once: of a message sent again — after an
    agent error, or re-sent on resume (`resent`) — the last sending, the one that was answered."""
    for n, event in enumerate(events):
        if isinstance(event, Said | Asked):
            later = next((e for e in events[n + 1 :] if isinstance(e, Said | Asked)), None)
            if later is not None and later.text == event.text and _errored(events, n):
                continue  # sent again later (the agent failed on it, or the run stopped before its answer)
        if isinstance(
            event, PhaseEntered | Said | Asked | SessionChanged | FactEdited | FactsMarked | Evaluation
        ):
            yield event


def without_recorded_distractors(events: Iterable[Event], at: int, inserted: int) -> Iterator[Event]:
    """The events outside the `inserted` distractor phases that began at phase `at`, the later
    phases numbered as in the benchmark without them."""
    skipping = False
    for event in events:
        if isinstance(event, PhaseEntered):
            skipping = at <= event.index < at + inserted
            if event.index >= at + inserted:
                event = replace(event, index=event.index - inserted)
        if not skipping:
            yield event


class ReplayDriver:
    """Plays a recording's evidence on `benchmark`, which must be the benchmark without a rung
    (`without_distractors`); wrap it in a `LadderDriver` to play on a rung."""

    name = "replay"
    deterministic = True

    def __init__(self, source: Path | str, benchmark: Benchmark, grader: Grader | None = None) -> None:
        assert not benchmark.distractors, "replay the evidence; the LadderDriver plays a rung's distractors"
        self.source = recorded_log(source)
        log = read_log(self.source)
        recorded = log.header.benchmark
        if recorded.get("hash") != benchmark.content_hash:
            raise ReplayError(
                f"{self.source}: recorded on another version of {benchmark.name} (its files changed "
                "since); a replay would ask other questions than the recording answers"
            )
        from gateway.log.runlog import run_status  # the runner builds this driver

        status = run_status(log)
        if status != TerminationReason.COMPLETED:
            raise ReplayError(
                f"{self.source}: the recorded run did not complete ({status or 'no end: killed or running'}); "
                "a replay would stop where it stopped — resume it first (`marathon run`), then replay"
            )
        inserted = len(recorded.get("distractors") or [])
        at = insert_index(benchmark.phases, benchmark.scale.insert_before) if benchmark.scale else None
        if inserted and at is None:
            raise ReplayError(
                f"{self.source}: recorded on rung {recorded.get('rung')!r}, but the benchmark has no ladder"
            )
        self.events = list(without_recorded_distractors(persona_side(log.events), at or 0, inserted))
        self.questions = {q.id: q for q in benchmark.questions}
        self.grader = grader or ExactGrader()
        self._position = 0
        self._last: PersonaAction | None = None
        self._first: dict[str, str] = {}
        self._nudged: dict[str, str] = {}

    async def next_action(self, reply: AgentReply | None) -> PersonaAction:
        answer = "" if reply is None or reply.error is not None else reply.text
        if isinstance(self._last, Ask):
            self._first[self._last.question_id] = answer
        elif isinstance(self._last, Say) and self._last.purpose is Purpose.NUDGE and self._last.question_id:
            self._nudged[self._last.question_id] = answer
        elif isinstance(self._last, Say) and self._last.purpose is Purpose.GO_AHEAD and self._last.question_id:
            self._first[self._last.question_id] = answer  # after a stall, what follows is the answer
        while self._position < len(self.events):
            event = self.events[self._position]
            self._position += 1
            action = self._action(event)
            if action is not None:
                self._last = action
                return action
        self._last = Finish()
        return self._last

    def _action(self, event: Event) -> PersonaAction | None:
        match event:
            case PhaseEntered():
                return EnterPhase(event.index, event.chapter, event.title, tuple(event.require_all_facts))
            case Said():
                return Say(event.text, event.purpose, tuple(event.fact_ids), event.question_id)
            case Asked():
                return Ask(event.question_id, event.text, event.expected, tuple(event.tags))
            case SessionChanged():
                return NewSession() if event.action is SessionAction.NEW_SESSION else Compact()
            case FactEdited():
                return EditFact(event.file, event.fact_id, event.old, event.new)
            case FactsMarked():
                return MarkTold(tuple(event.fact_ids))
            case Evaluation():
                return self._regrade(event.question_id)
        return None

    def _regrade(self, question_id: str) -> Evaluate | None:
        question = self.questions.get(question_id)
        if question is None:
            return None
        first_answer = self._first.get(question_id, "")
        first = self.grader.grade(question, question.expected, first_answer)
        if first.correct or question_id not in self._nudged:
            abstain = question.abstain or question.deleted
            if not nudges(first, abstain=abstain, claim=first.never_told, sure=first.never_told_certain):
                return Evaluate(
                    question_id, first.score, f"replay: {first.reason}", first_answer, 1, first.score, "exact",
                    first.certain,
                )  # fmt: skip
            # the rule would nudge this reply, but the recording has no nudge to replay here
            low, high = first.bounds()
            return Evaluate(
                question_id, first.score,
                f"replay: {first.reason}; the reply may claim it was never told, and the recording has no "
                "nudge here, so what the retry rule's second try would score is unknown",
                first_answer, 1, first.score, "exact", False, min(low, 0.0), max(high, 5.0),
            )  # fmt: skip
        second_answer = self._nudged[question_id]
        second = self.grader.grade(question, question.expected, second_answer)
        # the recorded nudge was earned by the recorded agent: this one's first reply is read anew
        return retried(
            question_id,
            first,
            second,
            (first_answer, second_answer),
            "exact",
            claim=first.never_told,
            sure=first.never_told_certain,
            why="" if first.never_told_certain else first.never_told_reason,
            lead="replay, after the recorded nudge",
        )
