"""The reference agent over HTTP, on the stand-in model, through the official SDK."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from adapters.http_server import ServedApp, serve
from adapters.reference.agent import AgentConfig, ReferenceAgent
from adapters.reference.standin import standin_app


@pytest.fixture
async def standin() -> AsyncIterator[ServedApp]:
    served = await serve(standin_app())
    yield served
    await served.stop()


async def chat(url: str, session: str, message: str) -> str:
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{url}/chat", json={"message": message, "session_id": session}) as r,
    ):
        assert r.status == 200
        reply: str = (await r.json())["reply"]
        return reply


@pytest.mark.parametrize("stream", [True, False])
async def test_remembers_across_sessions_through_its_memory_folder(
    standin: ServedApp, tmp_path: Path, stream: bool
) -> None:
    agent = ReferenceAgent(AgentConfig(base_url=standin.url, memory_dir=tmp_path / "mem", stream=stream))
    served = await serve(agent.app())
    try:
        await chat(served.url, "s1", "My cat is called Miso")
        await chat(served.url, "s1", "The rent is 900 euros a month")
        await chat(served.url, "s1", "The rent rose to 950 euros a month")
        answer = await chat(served.url, "s2", "What is the rent now?")
    finally:
        await served.stop()
    assert "950" in answer  # newest note wins among equals
    assert "Miso" in (tmp_path / "mem" / "notes.md").read_text()
    assert agent.stats.memory_writes == 3 and agent.stats.memory_searches == 1
    assert "s2" in agent.sessions and len(agent.sessions["s2"].messages) == 2  # a fresh context


async def test_compacts_its_context_past_the_threshold(standin: ServedApp, tmp_path: Path) -> None:
    agent = ReferenceAgent(
        AgentConfig(base_url=standin.url, memory_dir=tmp_path, context_tokens=60, keep_turns=1)
    )
    for i in range(6):
        await agent.chat("s", f"Fact number {i}: my favourite colour this week is shade {i} of blue")
    assert agent.stats.compactions >= 1
    messages = agent.sessions["s"].messages
    assert messages[0]["content"].startswith("Summary of our earlier conversation:")
    assert len(messages) == 4  # summary + ack + the last kept turn


async def test_bad_request_gets_a_400(standin: ServedApp, tmp_path: Path) -> None:
    served = await serve(ReferenceAgent(AgentConfig(base_url=standin.url, memory_dir=tmp_path)).app())
    try:
        async with aiohttp.ClientSession() as http, http.post(f"{served.url}/chat", data=b"nope") as r:
            assert r.status == 400
    finally:
        await served.stop()
