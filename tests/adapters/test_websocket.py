"""WebSocket surfaces against real `websockets` servers on 127.0.0.1, written inline."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from websockets.asyncio.server import ServerConnection, serve

from adapters.base import AgentConnectionError, AgentProtocolError, AgentTimeout, OffTurn
from adapters.openclaw import OpenClawAdapter
from adapters.websocket import WebSocketAdapter
from fakes.agents import FakeOpenClaw

Handler = Callable[[ServerConnection], Awaitable[None]]


@asynccontextmanager
async def ws_server(handler: Handler, port: int = 0) -> AsyncIterator[str]:
    async with serve(handler, "127.0.0.1", port) as server:
        yield f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}"


async def test_deltas_are_joined_until_the_done_frame() -> None:
    async def agent(ws: ServerConnection) -> None:
        async for raw in ws:
            frame = json.loads(raw)
            await ws.send(json.dumps({"type": "delta", "session": "someone-else", "text": "NOT MINE"}))
            for piece in ("Your cat ", "is ", "Miso."):
                await ws.send(json.dumps({"type": "delta", "session": frame["session"], "text": piece}))
            await ws.send(json.dumps({"type": "done", "session": frame["session"]}))

    async with ws_server(agent) as url:
        adapter = WebSocketAdapter({"url": url, "match": {"session": "{session}"}})
        await adapter.open()
        assert await adapter.send("What is my cat called?") == "Your cat is Miso."
        await adapter.close()


async def test_cumulative_text_and_a_quiet_period_end_the_turn() -> None:
    async def agent(ws: ServerConnection) -> None:
        async for _ in ws:
            for text in ("Hel", "Hello", "Hello there"):
                await ws.send(json.dumps({"kind": "chunk", "data": {"text": text}}))

    async with ws_server(agent) as url:
        adapter = WebSocketAdapter(
            {
                "url": url,
                "text_when": {"kind": "chunk"},
                "text_path": "data.text",
                "done_when": {},
                "quiet": 0.3,
            }
        )
        assert await adapter.send("hi") == "Hello there"
        await adapter.close()


async def test_garbled_frames_errors_and_hangs() -> None:
    async def agent(ws: ServerConnection) -> None:
        async for raw in ws:
            text = json.loads(raw)["text"]
            if text == "garble":
                await ws.send("<<not json>>")
            elif text == "fail":
                await ws.send(json.dumps({"type": "error", "error": "model overloaded"}))
            # "hang": say nothing

    async with ws_server(agent) as url:
        adapter = WebSocketAdapter({"url": url, "timeout": 0.5})
        with pytest.raises(AgentProtocolError, match="garbled frame"):
            await adapter.send("garble")
        with pytest.raises(AgentProtocolError, match="model overloaded"):
            await adapter.send("fail")
        with pytest.raises(AgentTimeout):
            await adapter.send("hang")
        await adapter.close()


async def test_closed_mid_turn_then_reconnects_for_the_next_turn() -> None:
    turns = 0

    async def agent(ws: ServerConnection) -> None:
        nonlocal turns
        async for _ in ws:
            turns += 1
            if turns == 1:
                await ws.close()
                return
            await ws.send(json.dumps({"type": "delta", "text": "back"}))
            await ws.send(json.dumps({"type": "done"}))

    async with ws_server(agent) as url:
        adapter = WebSocketAdapter({"url": url, "backoff": 0.01})
        with pytest.raises(AgentConnectionError, match="closed mid-turn"):
            await adapter.send("one")
        assert await adapter.send("two") == "back"
        await adapter.close()


async def test_nobody_listening_is_a_connection_error() -> None:
    adapter = WebSocketAdapter({"url": "ws://127.0.0.1:9", "retries": 1, "backoff": 0.01, "timeout": 2})
    with pytest.raises(ConnectionError):
        await adapter.open()


async def test_openclaw_gateway_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", "tok-123")
    fake = FakeOpenClaw("tok-123")
    async with ws_server(fake) as url:
        adapter = OpenClawAdapter({"url": url, "token": "${OPENCLAW_GATEWAY_TOKEN}"})
        first = await adapter.open()
        assert await adapter.send("hello") == "echo: hello"
        second = await adapter.new_session()
        assert await adapter.send("again") == "echo: again" and second != first
        await adapter.close()
    connect = fake.connects[0]
    assert connect["method"] == "connect" and connect["params"]["role"] == "operator"
    assert connect["params"]["auth"] == {"token": "tok-123"} and "device" not in connect["params"]


async def test_openclaw_turns_are_paired_by_run_id_late_replies_and_heartbeats_kept_apart() -> None:
    fake = FakeOpenClaw("tok", heartbeat="HEARTBEAT: nothing needs attention", slow_first=1.0)
    async with ws_server(fake) as url:
        adapter = OpenClawAdapter({"url": url, "token": "tok", "timeout": 0.5})
        await adapter.open()
        with pytest.raises(TimeoutError):
            await adapter.send("hello")  # its answer comes a second later, during the next turn
        assert adapter.take_off_turn() == [
            OffTurn("initiated", "HEARTBEAT: nothing needs attention", why="a run the persona did not start (hb1)")
        ]
        adapter.timeout = 5
        await asyncio.sleep(0.8)
        assert await adapter.send("again") == "echo: again"  # not "echo: hello", not the heartbeat
        off = adapter.take_off_turn()
        assert OffTurn("late", "echo: hello", answers="hello") in off
        assert [o.text for o in off if o.kind == "initiated"] == ["HEARTBEAT: nothing needs attention"]
        await adapter.close()


async def test_openclaw_refusing_the_token_is_a_clear_error() -> None:
    async with ws_server(FakeOpenClaw("right")) as url:
        adapter = OpenClawAdapter({"url": url, "token": "wrong", "retries": 0})
        with pytest.raises(AgentProtocolError, match="UNAUTHORIZED"):
            await adapter.open()
        await adapter.close()
        await asyncio.sleep(0)
