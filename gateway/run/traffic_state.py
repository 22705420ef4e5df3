"""The recorder's view of a run: which phase and question the run is in, which canaries armed.

The LLM-traffic recorder attributes each exchange to the question being asked and watches
for revoked canaries; it learns both from the runner's actions as they happen, and — on
resume — from the logged events, so a resumed run's recorder is in the state it was in
when the run stopped. What a caller may rely on: feeding `replay` a log's events and then
the live actions gives the same recorder state as one uninterrupted run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

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
from gateway.run.agents import recording_wanted, traffic_profile
from gateway.traffic.recorder import RunRecorder
from persona.benchmark.directives import SetVar
from persona.benchmark.model import DELETED_MARKERS, Benchmark
from persona.grading.exact import contains_expected


class RunTraffic:
    """Keeps a run's `RunRecorder` told where the run is; built by `open_traffic`."""

    def __init__(self, recorder: RunRecorder, benchmark: Benchmark) -> None:
        self.recorder = recorder
        self.benchmark = benchmark

    @property
    def canaries(self) -> list[str]:
        declared = self.benchmark.settings.get("canaries", [])
        return [str(c) for c in declared] if isinstance(declared, list) else []

    def replay(self, events: list[Event]) -> None:
        """Bring the recorder to where a logged run stopped."""
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

    async def settled(self, timeout: float = 2.0) -> None:
        """Wait (briefly) for model calls the proxy still holds: a reply can reach us a moment
        before the call it came from is handed to the recorder."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self.recorder.in_flight > 0 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)

    def enter_phase(self, index: int) -> None:
        self.recorder.phase = index
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

    def question_started(
        self, question_id: str, text: str, expected: str, tags: list[str] | tuple[str, ...]
    ) -> None:
        self.recorder.question_started(question_id, text, expected, "abstain" in tags)

    def question_finished(self) -> None:
        self.recorder.question_finished()

    def session_changed(self) -> None:
        self.recorder.session_changed()


def open_traffic(
    agent: dict[str, Any],
    benchmark: Benchmark,
    log: Callable[[Event], Event],
    previous: list[Event],
    log_check: Callable[[], None] | None = None,
    secrets: Iterable[str] = (),
) -> RunTraffic | None:
    """The run's recorder, its state rebuilt from `previous` (the logged events, on resume);
    None when the agent's settings ask for no recording. `log_check`: see `RunRecorder`."""
    if not recording_wanted(agent):
        return None
    recorder = RunRecorder(
        log, traffic_profile(agent), evidence=contains_expected, log_check=log_check, secrets=secrets
    )
    traffic = RunTraffic(recorder, benchmark)
    traffic.replay(previous)
    return traffic
