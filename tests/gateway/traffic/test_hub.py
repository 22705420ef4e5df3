"""The embedded recorder with real SDK clients, through real listeners, to loopback fakes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import anthropic
import msgpack
import openai
import pytest

from adapters.http_server import ServedApp, serve
from adapters.reference.agent import TOOLS
from adapters.reference.standin import standin_app
from fakes.llm_provider import SlowStream, openai_app
from gateway.log.events import Blob, LLMExchange, MemoryCallSeen
from gateway.log.runlog import RunLogWriter
from gateway.traffic.hub import RecorderHub
from gateway.traffic.profile import load_profile
from gateway.traffic.recorder import RunRecorder
from tests.gateway.traffic.conftest import MemoryLog

OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {"name": "memory_search", "parameters": {"type": "object", "properties": {}}},
    }
]


@pytest.fixture
async def anthropic_upstream() -> AsyncIterator[ServedApp]:
    served = await serve(standin_app())
    yield served
    await served.stop()


@pytest.fixture
async def openai_upstream() -> AsyncIterator[ServedApp]:
    served = await serve(openai_app())
    yield served
    await served.stop()


def exchanges(log: MemoryLog) -> list[LLMExchange]:
    return [e for e in log.events if isinstance(e, LLMExchange)]


@pytest.mark.parametrize("stream", [False, True])
async def test_anthropic_sdk_through_the_recorder(
    anthropic_upstream: ServedApp, memlog: MemoryLog, stream: bool
) -> None:
    hub = RecorderHub.shared()
    listener = await hub.open(anthropic_upstream.url, RunRecorder(memlog, load_profile("reference")))
    client = anthropic.AsyncAnthropic(api_key="sk-ant-canary-123", base_url=listener.url, max_retries=0)
    try:
        request = {
            "model": "m",
            "max_tokens": 50,
            "tools": TOOLS,
            "messages": [{"role": "user", "content": "Where do I live?"}],
        }
        if stream:
            async with client.messages.stream(**request) as s:  # type: ignore[arg-type]
                message = await s.get_final_message()
        else:
            message = await client.messages.create(**request)  # type: ignore[arg-type]
    finally:
        await client.close()
        await hub.close(listener)
    assert message.content[0].type == "tool_use"
    (ex,) = exchanges(memlog)
    assert (ex.api, ex.stream, ex.status, ex.model) == ("anthropic-messages", stream, 200, "m")
    assert ex.tool_calls == [{"name": "memory_search", "arguments": {"query": "Where do I live?"}}]
    assert ex.usage["input"] > 0 and ex.stop_reason == "tool_use"
    assert ex.tool_names == ["memory_write", "memory_search"]
    auth = {k: v for k, v in ex.request_headers.items() if k in ("x-api-key", "authorization")}
    assert auth and set(auth.values()) == {"«redacted»"}
    assert [m.tool for m in memlog.events if isinstance(m, MemoryCallSeen)] == ["memory_search"]
    assert b"sk-ant-canary" not in msgpack.packb([e.to_record() for e in memlog.events])


@pytest.mark.parametrize("stream", [False, True])
async def test_openai_chat_sdk_through_the_recorder(
    openai_upstream: ServedApp, memlog: MemoryLog, stream: bool
) -> None:
    hub = RecorderHub.shared()
    listener = await hub.open(openai_upstream.url, RunRecorder(memlog, load_profile("openclaw")))
    client = openai.AsyncOpenAI(api_key="sk-canary-456", base_url=f"{listener.url}/v1", max_retries=0)
    try:
        kwargs = {"stream_options": {"include_usage": True}} if stream else {}
        response = await client.chat.completions.create(
            model="gpt-x",
            messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "rent?"}],
            tools=OPENAI_TOOLS,
            stream=stream,
            **kwargs,  # type: ignore[arg-type]
        )
        if stream:
            async for _ in response:  # type: ignore[union-attr]
                pass
    finally:
        await client.close()
        await hub.close(listener)
    (ex,) = exchanges(memlog)
    assert (ex.api, ex.stream, ex.model) == ("openai-chat", stream, "gpt-x")
    assert ex.tool_calls == [{"name": "memory_search", "arguments": {"query": "rent"}}]
    assert ex.usage == {"input": 20, "output": 7, "cache_read": 100, "cache_write": 0}
    assert ex.request_headers["authorization"] == "«redacted»"
    assert len(ex.message_refs) == 1 and ex.system_ref  # the system prompt is stored apart


@pytest.mark.parametrize("stream", [False, True])
async def test_openai_responses_sdk_through_the_recorder(
    openai_upstream: ServedApp, memlog: MemoryLog, stream: bool
) -> None:
    hub = RecorderHub.shared()
    listener = await hub.open(openai_upstream.url, RunRecorder(memlog, load_profile(None)))
    client = openai.AsyncOpenAI(api_key="sk-x", base_url=f"{listener.url}/v1", max_retries=0)
    try:
        if stream:
            async with client.responses.stream(
                model="gpt-r", input="Where is my flat?", instructions="terse"
            ) as s:
                await s.get_final_response()
        else:
            await client.responses.create(model="gpt-r", input="Where is my flat?", instructions="terse")
    finally:
        await client.close()
        await hub.close(listener)
    (ex,) = exchanges(memlog)
    assert (ex.api, ex.model, ex.stream) == ("openai-responses", "gpt-r", stream)
    assert ex.tool_calls == [{"name": "memory_search", "arguments": {"query": "rent"}}]
    assert ex.usage["input"] == 50 and ex.usage["output"] == 3


async def test_the_first_chunk_arrives_before_the_upstream_sends_its_last(memlog: MemoryLog) -> None:
    slow = SlowStream()
    upstream = await serve(slow.app())
    hub = RecorderHub.shared()
    listener = await hub.open(upstream.url, RunRecorder(memlog, load_profile(None)))
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.post(
                f"{listener.url}/v1/chat/completions", json={"model": "m", "stream": True, "messages": []}
            ) as r,
        ):
            first = await asyncio.wait_for(r.content.readuntil(b"\n\n"), timeout=5)
            assert first == b'data: {"n": 1}\n\n' and not slow.finished
            slow.release.set()
            rest = await r.content.read()
        await asyncio.sleep(0.05)
    finally:
        await hub.close(listener)
        await upstream.stop()
    assert rest == b'data: {"n": 2}\n\n'
    (ex,) = exchanges(memlog)
    assert ex.stream and ex.response_ref  # and the whole body was still recorded
    body = next(b.data for b in memlog.events if isinstance(b, Blob) and b.ref == ex.response_ref)
    assert body == b'data: {"n": 1}\n\ndata: {"n": 2}\n\n'


async def test_two_runs_share_one_master_and_keep_their_traffic_apart(anthropic_upstream: ServedApp) -> None:
    hub = RecorderHub.shared()
    a, b = MemoryLog(), MemoryLog()
    la = await hub.open(anthropic_upstream.url, RunRecorder(a, load_profile("reference")))
    lb = await hub.open(anthropic_upstream.url, RunRecorder(b, load_profile("reference")))
    assert hub.confdir is not None
    ca_folder = Path(hub.confdir.name)
    try:
        master = hub.master
        for listener, n in ((la, 1), (lb, 2)):
            client = anthropic.AsyncAnthropic(api_key="k", base_url=listener.url, max_retries=0)
            for _ in range(n):
                await client.messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
                )
            await client.close()
        assert hub.master is master
    finally:
        await hub.close(la)
        await hub.close(lb)
    assert (len(exchanges(a)), len(exchanges(b))) == (1, 2)
    assert hub.master is None  # stopped with its last listener
    assert not ca_folder.exists()  # and its CA's private key is not left in the temp folder


async def test_a_recorder_that_cannot_write_refuses_traffic(anthropic_upstream: ServedApp) -> None:
    log = MemoryLog(broken=True)
    recorder = RunRecorder(log, load_profile("reference"))
    hub = RecorderHub.shared()
    listener = await hub.open(anthropic_upstream.url, recorder)
    client = anthropic.AsyncAnthropic(api_key="k", base_url=listener.url, max_retries=0)
    try:
        for _ in range(2):  # the first answer is replaced; later calls are refused outright
            with pytest.raises(anthropic.APIStatusError) as info:
                await client.messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
                )
            assert info.value.status_code == 503 and "recorder cannot write" in str(info.value)
    finally:
        await client.close()
        await hub.close(listener)
    assert not recorder.healthy and "No space left" in (recorder.failure or "")


CUT = "incomplete chunked read|Connection error"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
async def test_a_streamed_answer_never_reaches_the_agent_whole_when_the_log_fails(
    anthropic_upstream: ServedApp, openai_upstream: ServedApp
) -> None:
    """The disk fills up mid-run: the streamed call's answer is cut before its final event
    (both SDKs raise), and every later call is refused."""
    writer = RunLogWriter(Path("/dev/full"), next_seq=0)  # every write: ENOSPC
    refusals: list[str] = []
    recorder = RunRecorder(writer.append, load_profile("reference"), echo=refusals.append)
    hub = RecorderHub.shared()
    a = await hub.open(anthropic_upstream.url, recorder)
    o = await hub.open(openai_upstream.url, RunRecorder(writer.append, load_profile(None)))
    claude = anthropic.AsyncAnthropic(api_key="k", base_url=a.url, max_retries=0)
    gpt = openai.AsyncOpenAI(api_key="k", base_url=f"{o.url}/v1", max_retries=0)
    events: list[str] = []
    try:
        with pytest.raises(Exception, match=CUT):  # the SDK's transport error, unwrapped
            async with claude.messages.stream(
                model="m", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
            ) as s:
                async for event in s:
                    events.append(event.type)
        assert events and "message_stop" not in events  # the agent got a cut stream, not an answer
        chunks: list[object] = []
        with pytest.raises(Exception, match=CUT):
            stream = await gpt.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            async for chunk in stream:
                chunks.append(chunk)
        with pytest.raises(anthropic.APIStatusError) as later:  # refused before it starts
            await claude.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
        assert later.value.status_code == 503
    finally:
        await claude.close()
        await gpt.close()
        await hub.close(a)
        await hub.close(o)
        writer.close()
    assert not recorder.healthy and "No space left" in (recorder.failure or "")
    assert [line.split(":")[0] for line in refusals] == ["REFUSED POST /v1/messages"] * 2


async def test_an_unreachable_upstream_is_recorded_as_an_error(memlog: MemoryLog) -> None:
    from gateway.traffic.hub import free_port

    hub = RecorderHub.shared()
    listener = await hub.open(f"http://127.0.0.1:{free_port()}", RunRecorder(memlog, load_profile(None)))
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{listener.url}/v1/messages", json={"model": "m", "messages": []}) as r,
        ):
            assert r.status == 502
        deadline = time.monotonic() + 2
        while not exchanges(memlog) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    finally:
        await hub.close(listener)
    (ex,) = exchanges(memlog)
    assert ex.error and ex.status in (0, 502)


async def test_the_listener_only_forwards_to_its_upstream(
    anthropic_upstream: ServedApp, memlog: MemoryLog
) -> None:
    hub = RecorderHub.shared()
    listener = await hub.open(anthropic_upstream.url, RunRecorder(memlog, load_profile(None)))
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", int(listener.url.rsplit(":", 1)[1]))
        writer.write(
            b"GET http://example.com/secret HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"
        )
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), timeout=5)
        writer.close()
    finally:
        await hub.close(listener)
    # the stand-in answered (it only has /v1/messages, so 404/405) — not example.com
    assert answer.startswith(b"HTTP/1.1 40")
