"""The HTTP adapter against real aiohttp servers on 127.0.0.1, handlers written inline."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web

from adapters.base import AgentConnectionError, AgentHTTPError, AgentProtocolError, AgentTimeout, SessionState
from adapters.http import HttpAdapter
from adapters.http_server import serve

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@asynccontextmanager
async def server(path: str, handler: Handler) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post(path, handler)
    served = await serve(app)
    try:
        yield served.url
    finally:
        await served.stop()


async def test_json_mode_fills_the_template_and_follows_the_reply_path() -> None:
    seen: list[Any] = []

    async def handler(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((body, request.headers.get("X-Token")))
        return web.json_response({"data": {"messages": [{"text": f"echo {body['input']['text']}"}]}})

    async with server("/talk", handler) as url:
        adapter = HttpAdapter(
            {
                "url": f"{url}/talk",
                "body": {"input": {"text": "{message}", "conv": "s={session}"}},
                "reply_path": "data.messages.0.text",
                "headers": {"X-Token": "abc"},
            }
        )
        session = await adapter.open()
        assert await adapter.send("hello") == "echo hello"
        new = await adapter.new_session()
        await adapter.send("again")
        await adapter.close()
    assert seen[0] == ({"input": {"text": "hello", "conv": f"s={session}"}}, "abc")
    assert seen[1][0]["input"]["conv"] == f"s={new}" and new != session


async def test_headers_take_secrets_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "s3cret")

    async def handler(request: web.Request) -> web.Response:
        return web.json_response({"reply": request.headers["Authorization"]})

    async with server("/chat", handler) as url:
        adapter = HttpAdapter({"url": f"{url}/chat", "headers": {"Authorization": "Bearer ${AGENT_TOKEN}"}})
        assert await adapter.send("x") == "Bearer s3cret"
        await adapter.close()


def completion(text: str) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }


async def test_openai_stateless_sends_the_whole_history() -> None:
    bodies: list[Any] = []

    async def handler(request: web.Request) -> web.Response:
        body = await request.json()
        bodies.append(body)
        return web.json_response(completion(f"reply {len(body['messages'])}"))

    async with server("/v1/chat/completions", handler) as url:
        adapter = HttpAdapter({"mode": "openai", "url": f"{url}/v1", "model": "agent"})
        assert await adapter.send("one") == "reply 1"
        assert await adapter.send("two") == "reply 3"
        await adapter.new_session()
        assert await adapter.send("three") == "reply 1"
        await adapter.close()
    assert [m["content"] for m in bodies[1]["messages"]] == ["one", "reply 1", "two"]
    assert bodies[0]["model"] == "agent" and "user" not in bodies[0]


async def test_openai_stateful_sends_the_last_message_and_a_session_key() -> None:
    seen: list[tuple[Any, str | None]] = []

    async def handler(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((body, request.headers.get("X-Hermes-Session-Id")))
        return web.json_response(completion("ok"))

    async with server("/v1/chat/completions", handler) as url:
        by_header = HttpAdapter(
            {"mode": "openai", "url": f"{url}/v1", "stateful": True, "session_header": "X-Hermes-Session-Id"}
        )
        sid = await by_header.open()
        await by_header.send("a")
        await by_header.send("b")
        by_user = HttpAdapter({"mode": "openai", "url": f"{url}/v1", "stateful": True})
        uid = await by_user.open()
        await by_user.send("c")
        for a in (by_header, by_user):
            await a.close()
    assert [len(b["messages"]) for b, _ in seen] == [1, 1, 1]
    assert seen[1][1] == sid and seen[2][0]["user"] == uid


async def test_resume_continues_the_session_and_its_history() -> None:
    bodies: list[Any] = []

    async def handler(request: web.Request) -> web.Response:
        bodies.append(await request.json())
        return web.json_response(completion("ok"))

    async with server("/v1/chat/completions", handler) as url:
        adapter = HttpAdapter({"mode": "openai", "url": f"{url}/v1"})
        assert await adapter.open(SessionState("s-1", [("earlier", "answer")])) == "s-1"
        await adapter.send("now")
        await adapter.close()
    assert [m["content"] for m in bodies[0]["messages"]] == ["earlier", "answer", "now"]


async def test_5xx_is_retried_with_backoff() -> None:
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        if calls < 3:
            return web.Response(status=503, text="busy")
        return web.json_response({"reply": "finally"})

    async with server("/chat", handler) as url:
        adapter = HttpAdapter({"url": f"{url}/chat", "retries": 3, "backoff": 0.01})
        assert await adapter.send("x") == "finally"
        await adapter.close()
    assert calls == 3


async def test_5xx_after_the_last_retry_is_an_http_error() -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=500, text="boom")

    async with server("/chat", handler) as url:
        adapter = HttpAdapter({"url": f"{url}/chat", "retries": 1, "backoff": 0.01})
        with pytest.raises(AgentHTTPError) as info:
            await adapter.send("x")
        await adapter.close()
    assert info.value.status == 500 and "boom" in str(info.value)


async def test_4xx_is_not_retried() -> None:
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        return web.Response(status=401, text="bad token")

    async with server("/chat", handler) as url:
        adapter = HttpAdapter({"url": f"{url}/chat", "retries": 3, "backoff": 0.01})
        with pytest.raises(AgentHTTPError):
            await adapter.send("x")
        await adapter.close()
    assert calls == 1


async def test_a_hang_is_a_timeout_and_not_resent() -> None:
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        await asyncio.sleep(1)
        return web.json_response({"reply": "late"})

    async with server("/chat", handler) as url:
        adapter = HttpAdapter({"url": f"{url}/chat", "timeout": 0.2, "retries": 3})
        with pytest.raises(TimeoutError) as info:
            await adapter.send("x")
        await adapter.close()
    assert isinstance(info.value, AgentTimeout) and calls == 1


async def test_nobody_listening_is_a_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    adapter = HttpAdapter({"url": f"http://127.0.0.1:{port}/chat", "retries": 1, "backoff": 0.01})
    with pytest.raises(ConnectionError) as info:
        await adapter.send("x")
    await adapter.close()
    assert isinstance(info.value, AgentConnectionError)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>oops</html>", "not JSON"),
        (b'{"answer": "x"}', "has no 'reply'"),
        (b'{"reply": 42}', "not text"),
    ],
)
async def test_garbled_replies_are_protocol_errors(body: bytes, message: str) -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    async with server("/chat", handler) as url:
        adapter = HttpAdapter({"url": f"{url}/chat"})
        with pytest.raises(AgentProtocolError, match=message):
            await adapter.send("x")
        await adapter.close()


def test_bad_settings_are_reported() -> None:
    with pytest.raises(ValueError, match="needs `url`"):
        HttpAdapter({"url": "ftp://x"})
    with pytest.raises(ValueError, match="mode must be"):
        HttpAdapter({"url": "http://127.0.0.1:1", "mode": "grpc"})


def test_a_missing_environment_secret_is_named() -> None:
    with pytest.raises(ValueError, match="MARATHON_TEST_UNSET is not set"):
        HttpAdapter(
            {"url": "http://127.0.0.1:1/chat", "headers": {"Authorization": "${MARATHON_TEST_UNSET}"}}
        )
