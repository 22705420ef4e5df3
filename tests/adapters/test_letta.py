"""The Letta adapter against a loopback server speaking Letta's REST API as 0.11.7 does
(agent creation, messages with typed entries, reset-messages)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from adapters.base import AdapterConfigError, SessionState
from adapters.http_server import ServedApp, serve
from adapters.letta import LettaAdapter


class FakeLetta:
    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.history: dict[str, list[str]] = {}
        self.resets: list[str] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/agents/", self.create)
        app.router.add_post("/v1/agents/{id}/messages", self.message)
        app.router.add_patch("/v1/agents/{id}/reset-messages", self.reset)
        return app

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.created.append(body)
        agent_id = f"agent-{len(self.created)}"
        self.history[agent_id] = []
        return web.json_response({"id": agent_id, "name": body.get("name")})

    async def message(self, request: web.Request) -> web.Response:
        agent_id = request.match_info["id"]
        if agent_id not in self.history:
            return web.json_response({"detail": "Agent not found"}, status=404)
        text = (await request.json())["messages"][0]["content"]
        self.history[agent_id].append(text)
        said = (
            []
            if text == "think forever"
            else [
                {"message_type": "assistant_message", "content": f"heard {len(self.history[agent_id])}"},
                {"message_type": "assistant_message", "content": [{"type": "text", "text": "and noted"}]},
            ]
        )
        messages = [
            {"message_type": "reasoning_message", "reasoning": "the user said something"},
            {"message_type": "tool_call_message", "tool_call": {"name": "memory_insert"}},
            {"message_type": "tool_return_message", "tool_return": "OK"},
            *said,
        ]
        stop = "max_steps" if not said else "end_turn"
        return web.json_response({"messages": messages, "stop_reason": {"stop_reason": stop}})

    async def reset(self, request: web.Request) -> web.Response:
        agent_id = request.match_info["id"]
        self.resets.append(agent_id)
        self.history[agent_id] = []
        return web.json_response({"id": agent_id})


@pytest.fixture
async def letta() -> AsyncIterator[tuple[FakeLetta, ServedApp]]:
    fake = FakeLetta()
    served = await serve(fake.app())
    yield fake, served
    await served.stop()


async def test_an_agent_is_created_talked_to_and_reset(letta: tuple[FakeLetta, ServedApp]) -> None:
    fake, served = letta
    body = {"name": "marathon", "memory_blocks": [{"label": "human", "value": ""}]}
    adapter = LettaAdapter({"url": served.url, "agent": body})
    try:
        session = await adapter.open()
        assert fake.created == [body] and session == "agent-1#0"
        assert await adapter.send("My cat is Miso") == "heard 1\nand noted"  # only what it said to the user
        assert await adapter.send("think forever") == ""  # a turn that ended without a message: no reply
        assert await adapter.new_session() == "agent-1#1"
        assert fake.resets == ["agent-1"] and fake.history["agent-1"] == []
        assert await adapter.send("hello again") == "heard 1\nand noted"
    finally:
        await adapter.close()


async def test_a_resumed_run_talks_to_the_same_agent(letta: tuple[FakeLetta, ServedApp]) -> None:
    fake, served = letta
    first = LettaAdapter({"url": served.url, "agent": {"name": "a"}})
    await first.open()
    await first.send("one")
    await first.new_session()
    await first.close()
    again = LettaAdapter({"url": served.url, "agent": {"name": "a"}})
    try:
        assert await again.open(SessionState("agent-1#1")) == "agent-1#1"
        assert len(fake.created) == 1  # no second agent
        await again.send("two")
        assert fake.history["agent-1"] == ["two"]
    finally:
        await again.close()


async def test_an_agent_you_made_is_used_as_is(letta: tuple[FakeLetta, ServedApp]) -> None:
    fake, served = letta
    fake.history["agent-mine"] = []
    adapter = LettaAdapter({"url": served.url, "agent_id": "agent-mine"})
    try:
        assert await adapter.open() == "agent-mine#0" and not fake.created
        assert await adapter.send("hi") == "heard 1\nand noted"
    finally:
        await adapter.close()


def test_settings_without_an_agent_are_refused_before_the_run() -> None:
    with pytest.raises(AdapterConfigError, match="agent_id"):
        LettaAdapter({"url": "http://127.0.0.1:8283"})
