"""The adapter around an agent process we started: it passes the inner adapter's optional parts
through (retry notes, a session command's answer, off-turn messages, compaction), restarts the
process for a new session when the agent's settings ask (`new_session: "restart"`), and notices
within a second when the process exits instead of waiting out the surface's timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from adapters.base import (
    AdapterConfigError,
    AdapterError,
    AgentAdapter,
    AgentExited,
    CompactingAdapter,
    OffTurn,
    OffTurnAdapter,
    RetryNotifying,
    SessionState,
    session_reply,
)
from adapters.lifecycle import AgentProcess


class ProcessAdapter:
    """An adapter wrapped around an agent process we started: passes the adapter's optional
    parts through (retry notes, the answer to a session command, off-turn messages)."""

    def __init__(self, inner: AgentAdapter, process: AgentProcess) -> None:
        self.inner, self.process = inner, process

    @property
    def on_retry(self) -> Callable[[str], None] | None:
        return self.inner.on_retry if isinstance(self.inner, RetryNotifying) else None

    @on_retry.setter
    def on_retry(self, callback: Callable[[str], None] | None) -> None:
        if isinstance(self.inner, RetryNotifying):
            self.inner.on_retry = callback

    @property
    def session_reply(self) -> str:
        return session_reply(self.inner)

    def take_off_turn(self) -> list[OffTurn]:
        return self.inner.take_off_turn() if isinstance(self.inner, OffTurnAdapter) else []

    @property
    def compact_commands(self) -> list[str]:
        """The inner adapter's: a started agent compacts as it would unwrapped (`can_compact`)."""
        return list(self.inner.compact_commands) if isinstance(self.inner, CompactingAdapter) else []

    async def compact(self) -> str:
        if not isinstance(self.inner, CompactingAdapter) or not self.inner.compact_commands:
            raise AdapterConfigError("this agent has no compaction command (`compact_commands`)")
        return await self.inner.compact()

    async def close(self) -> None:
        await self.inner.close()


class RestartingAdapter(ProcessAdapter):
    """`new_session: "restart"`: a new session is a fresh process (memory on disk survives)."""

    async def open(self, resume: SessionState | None = None) -> str:
        return await self.inner.open(resume)

    async def send(self, text: str) -> str:
        return await self.inner.send(text)

    async def new_session(self) -> str:
        await self.inner.close()
        await self.process.restart()
        await self.inner.open()
        return await self.inner.new_session()


class WatchedAdapter(ProcessAdapter):
    """An agent whose process we started: a send or session command is abandoned within a
    second of the process exiting (`AgentExited`, naming the exit code and the end of
    agent.log) instead of waiting out the surface's timeout three times."""

    POLL = 0.5

    async def _watched[T](self, call: Awaitable[T]) -> T:
        task = asyncio.ensure_future(call)
        while True:
            done, _ = await asyncio.wait({task}, timeout=self.POLL)
            if done:
                return task.result()
            gone = self.process.exited()
            if gone is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, AdapterError):
                    await task
                raise AgentExited(gone)

    async def open(self, resume: SessionState | None = None) -> str:
        return await self._watched(self.inner.open(resume))

    async def send(self, text: str) -> str:
        return await self._watched(self.inner.send(text))

    async def new_session(self) -> str:
        return await self._watched(self.inner.new_session())

    async def compact(self) -> str:
        return await self._watched(super().compact())
