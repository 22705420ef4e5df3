"""The stand-in model spoken to by the official `anthropic` SDK, streamed and not."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import anthropic
import pytest

from adapters.http_server import serve
from adapters.reference.agent import TOOLS
from adapters.reference.standin import standin_app


@pytest.fixture
async def client() -> AsyncIterator[anthropic.AsyncAnthropic]:
    served = await serve(standin_app())
    sdk = anthropic.AsyncAnthropic(api_key="test-key", base_url=served.url, max_retries=0)
    yield sdk
    await sdk.close()
    await served.stop()


async def test_a_statement_becomes_memory_writes(client: anthropic.AsyncAnthropic) -> None:
    message = await client.messages.create(
        model="standin-1",
        max_tokens=100,
        tools=TOOLS,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "About me:\n- I live in Porto\n- My cat is Miso"}],
    )
    assert message.stop_reason == "tool_use"
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert calls == [
        ("memory_write", {"text": "I live in Porto"}),
        ("memory_write", {"text": "My cat is Miso"}),
    ]
    assert message.usage.input_tokens > 0 and message.usage.cache_read_input_tokens == 0


async def test_a_question_is_searched_then_answered_from_the_result_streamed(
    client: anthropic.AsyncAnthropic,
) -> None:
    question = {"role": "user", "content": "Where do I live?"}
    async with client.messages.stream(
        model="standin-1", max_tokens=100, tools=TOOLS, messages=[question]
    ) as stream:  # type: ignore[arg-type]
        first = await stream.get_final_message()
    search = next(b for b in first.content if b.type == "tool_use")
    assert search.name == "memory_search" and search.input == {"query": "Where do I live?"}
    followup = [
        question,
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": search.id, "content": "- I live in Porto"}],
        },
    ]
    deltas = []
    async with client.messages.stream(
        model="standin-1", max_tokens=100, tools=TOOLS, messages=followup
    ) as stream:  # type: ignore[arg-type]
        async for text in stream.text_stream:
            deltas.append(text)
        final = await stream.get_final_message()
    assert final.stop_reason == "end_turn"
    assert "".join(deltas) == final.content[0].text == "From my notes: I live in Porto."  # type: ignore[union-attr]
    assert len(deltas) > 1  # really streamed in pieces


async def test_nothing_found_says_never_told(client: anthropic.AsyncAnthropic) -> None:
    msgs = [
        {"role": "user", "content": "What is my dog called?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "memory_search", "input": {"query": "dog"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "no matching notes"}],
        },
    ]
    message = await client.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=msgs)  # type: ignore[arg-type]
    assert "haven't told me" in message.content[0].text  # type: ignore[union-attr]


async def test_a_summary_request_gets_a_summary(client: anthropic.AsyncAnthropic) -> None:
    message = await client.messages.create(
        model="m",
        max_tokens=50,
        system="You are summarizing a conversation.",
        messages=[{"role": "user", "content": "I live in Porto"}],
    )
    assert message.content[0].text.startswith("The user talked about")  # type: ignore[union-attr]


async def test_missing_key_is_refused_like_a_real_provider() -> None:
    served = await serve(standin_app())
    try:
        async with aiohttp.ClientSession() as http:
            body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
            async with http.post(f"{served.url}/v1/messages", json=body) as r:
                assert r.status == 401
                assert (await r.json())["error"]["type"] == "authentication_error"
    finally:
        await served.stop()
