"""The `PersonaDriver` protocol: the persona side of a marathon, one action at a time."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from persona.drivers.actions import AgentReply, PersonaAction
from persona.llm.types import LLMClient


class PersonaDriver(Protocol):
    """Produces the persona's next action given the agent's reply to the previous one.

    `reply` is the answer to the previous action when that was a `Say` or `Ask`, else None.
    After `Finish` the driver is done. A deterministic driver (the scripted one) produces the
    same actions when fed the same replies: the runner relies on this to rebuild a run's state
    from its log on resume, by replaying the logged replies into a fresh driver.
    """

    name: str
    deterministic: bool

    async def next_action(self, reply: AgentReply | None) -> PersonaAction: ...


@runtime_checkable
class StartingDriver(Protocol):
    """A driver with work before the first message (an LLM persona reaches its model once, so
    an unreachable model is said before the agent starts)."""

    async def start(self) -> None: ...


@runtime_checkable
class ModelDriver(Protocol):
    """A driver that plays on a model: the runner closes its client when the run ends."""

    @property
    def client(self) -> LLMClient | None: ...


async def start_driver(driver: object) -> None:
    if isinstance(driver, StartingDriver):
        await driver.start()


async def close_driver(driver: object) -> None:
    """Close the model client a driver (or a judge) holds, if any."""
    client = driver.client if isinstance(driver, ModelDriver) else None
    if client is not None:
        await client.close()


class PersonaCantPlay(Exception):
    """The persona's model is not playing the persona — it loops on one message, talks without
    ever telling a fact or asking, or its context window can't hold the conversation. The run
    ends `persona_failed` with this sentence (resumable once the model is changed or fixed),
    scoring nothing it did not test."""
