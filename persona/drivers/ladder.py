"""Playing a rung with a persona that plays only the evidence (the LLM persona).

The rung's distractor sessions are played by the scripted driver, word for word the same on
every rung and in every persona.
"""

from __future__ import annotations

from dataclasses import replace

from persona.benchmark.model import Benchmark
from persona.drivers.actions import AgentReply, EnterPhase, PersonaAction
from persona.drivers.protocol import ModelDriver, PersonaDriver, start_driver
from persona.drivers.scripted import ReadNeverTold, Script, ScriptedDriver
from persona.llm.types import LLMClient


class LadderDriver:
    """Wraps a persona driver that plays only the evidence (the LLM persona): the rung's
    distractor sessions are played by the scripted driver, word for word the same on every
    rung and in every persona; the inner driver's phase numbers are mapped onto the rung's.

    Deterministic exactly when the inner driver is, so resume-by-replay still holds.
    """

    def __init__(self, inner: PersonaDriver, scaled: Benchmark) -> None:
        self.inner = inner
        self.name = inner.name
        self.deterministic = inner.deterministic
        self._scripted = ScriptedDriver(scaled)
        self._distractors = [p for p in scaled.phases if p.distractor]
        self._at = self._distractors[0].index if self._distractors else len(scaled.phases)
        self._pending: Script | None = None
        self._held: PersonaAction | None = None
        self._played = not self._distractors

    @property
    def client(self) -> LLMClient | None:
        """The inner driver's model client (the runner closes it)."""
        return self.inner.client if isinstance(self.inner, ModelDriver) else None

    async def start(self) -> None:
        await start_driver(self.inner)

    async def next_action(self, reply: AgentReply | None) -> PersonaAction:
        if self._pending is not None:
            try:
                step = self._pending.send(reply)
                assert not isinstance(step, ReadNeverTold)  # a distractor session asks no question
                return step
            except StopIteration:
                self._pending = None
                held, self._held = self._held, None
                assert held is not None
                return held
        action = await self.inner.next_action(reply)
        if isinstance(action, EnterPhase) and action.index >= self._at:
            action = replace(action, index=action.index + len(self._distractors))
            if not self._played:
                self._played = True
                self._held = action
                self._pending = self._script()
                first = next(self._pending)
                assert not isinstance(first, ReadNeverTold)
                return first
        return action

    def _script(self) -> Script:
        for phase in self._distractors:
            yield from self._scripted.play_phase(phase)
