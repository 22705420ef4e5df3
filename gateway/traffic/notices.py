"""What the runner tells a run's recorder about where the run is — the phase (and the canaries it
revokes), a fact deleted that held a canary, the question being asked, a new session — and the
same told again from logged events.

One place for both the live run and the re-derivation of a recorded one
(`gateway.traffic.rederive`): a resumed run's recorder, a fork's (its parent's teaching first)
and a re-derived one are brought to the same state by `replay`. What a caller may rely on:
feeding `replay` a log's events and then the live notices gives the same recorder state as one
uninterrupted run.
"""

from __future__ import annotations

from collections.abc import Iterable

from gateway.log.events import (
    Asked,
    Blob,
    Evaluation,
    Event,
    FactEdited,
    LLMExchange,
    PhaseEntered,
    SessionChanged,
)
from gateway.log.vocabulary import SessionAction
from gateway.traffic.recorder import RunRecorder
from persona.benchmark.directives import SetVar
from persona.benchmark.model import DELETED_MARKERS, Benchmark


class RecorderNotices:
    """Keeps a `RunRecorder` told where its run is, in the benchmark's terms."""

    def __init__(self, recorder: RunRecorder, benchmark: Benchmark) -> None:
        self.recorder = recorder
        self.benchmark = benchmark

    @property
    def canaries(self) -> list[str]:
        declared = self.benchmark.settings.get("canaries", [])
        return [str(c) for c in declared] if isinstance(declared, list) else []

    def replay(self, events: Iterable[Event]) -> None:
        """Bring the recorder to where a logged run (or a fork's inherited teaching) stopped."""
        for event in events:
            match event:
                case Blob():
                    self.recorder.known_blobs.add(event.ref)
                case PhaseEntered():
                    self.enter_phase(event.index)
                case FactEdited():
                    self.fact_edited(event.old, event.new)
                case Asked():
                    self.question_started(event.question_id, event.text, event.expected, event.tags)
                case Evaluation():
                    self.question_finished()
                case SessionChanged() if event.action is SessionAction.NEW_SESSION:
                    self.session_changed()
                case LLMExchange() if event.kind.conversational:
                    self.recorder.model_calls += 1

    def enter_phase(self, index: int) -> None:
        self.recorder.phase = index
        if not 0 <= index < len(self.benchmark.phases):
            return
        for d in self.benchmark.phases[index].directives:
            if isinstance(d, SetVar) and d.name == "revoke_canary":
                for marker in d.value if isinstance(d.value, list) else [d.value]:
                    self.recorder.arm_canary(str(marker))

    def fact_edited(self, old: str | None, new: str) -> None:
        """A deleted fact that held a declared canary arms it."""
        if old and new.strip() in DELETED_MARKERS:
            for marker in self.canaries:
                if marker in old:
                    self.recorder.arm_canary(marker)

    def question_started(self, question_id: str, text: str, expected: str, tags: list[str] | tuple[str, ...]) -> None:
        self.recorder.question_started(question_id, text, expected, "abstain" in tags)

    def question_finished(self) -> None:
        self.recorder.question_finished()

    def session_changed(self) -> None:
        self.recorder.session_changed()
