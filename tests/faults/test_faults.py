"""Every fault a marathon meets, each against a loopback fake: an `error` event that says what
happened, the run continuing (or pausing, resumable), nothing logged before lost, and the
report listing agent errors apart from memory failures."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import serve as ws_serve

from adapters.http_server import ServedApp, serve
from adapters.reference.standin import handle_messages
from adapters.telegram import TelegramAdapter
from fakes.agents import http_agent, memory_agent
from gateway.log.events import (
    ErrorEvent,
    Evaluation,
    LLMExchange,
    Replied,
    RunEnded,
    SessionChanged,
)
from gateway.log.runlog import EVENTS_FILE, RunLog, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from gateway.traffic.hub import free_port
from tests.conftest import REPO, BenchFactory

Reply = Callable[[int, str], Awaitable[web.StreamResponse]]


def check(log: RunLog, kind: str, says: str = "") -> None:
    errors = [e for e in log.events if isinstance(e, ErrorEvent) and e.source == "agent"]
    assert any(e.kind == kind and says in e.message for e in errors), [(e.kind, e.message) for e in errors]
    graded = Counter(e.question_id for e in log.events if isinstance(e, Evaluation))
    assert graded == {"q1": 1, "q2": 1, "q3": 1}
    report = (log.path.parent / "report.md").read_text()
    assert "### Errors (apart from memory failures)" in report and f"- agent {kind}:" in report


async def run_http(
    bench: Path, tmp_path: Path, url: str, **settings: Any
) -> tuple[TerminationReason | None, RunLog]:
    agent = {"adapter": "http", "url": url, "retries": 0, **settings}
    outcome = await run_spec(RunSpec("r", bench, agent), tmp_path)
    return outcome.reason, read_log(tmp_path / "r" / EVENTS_FILE)


async def test_a_500_is_logged_and_the_message_sent_again(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    async def fault(n: int, request: web.Request) -> web.Response | None:
        return web.Response(status=500, text="internal error") if n == 3 else None

    agent = await http_agent(fault)
    try:
        reason, log = await run_http(make_benchmark(), tmp_path, f"{agent.url}/chat")
    finally:
        await agent.stop()
    assert reason == TerminationReason.COMPLETED
    check(log, "http_status")


async def test_a_hang_is_a_timeout(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    async def fault(n: int, request: web.Request) -> web.Response | None:
        if n == 2:
            await asyncio.sleep(3)
        return None

    agent = await http_agent(fault)
    try:
        reason, log = await run_http(make_benchmark(), tmp_path, f"{agent.url}/chat", timeout=0.5)
    finally:
        await agent.stop()
    assert reason == TerminationReason.COMPLETED
    check(log, "timeout")


@pytest.mark.parametrize(
    "body", [b'{"reply": ', b"<html>502 Bad Gateway</html>", b'{"answer": "wrong field"}']
)
async def test_malformed_and_truncated_replies(
    make_benchmark: BenchFactory, tmp_path: Path, body: bytes
) -> None:
    async def fault(n: int, request: web.Request) -> web.Response | None:
        return web.Response(body=body, content_type="application/json") if n == 4 else None

    agent = await http_agent(fault)
    try:
        reason, log = await run_http(make_benchmark(), tmp_path, f"{agent.url}/chat")
    finally:
        await agent.stop()
    assert reason == TerminationReason.COMPLETED
    check(log, "protocol")


async def test_a_reply_holding_a_lone_surrogate_is_scrubbed_logged_and_the_run_goes_on(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    async def fault(n: int, request: web.Request) -> web.Response | None:
        body = b'{"reply": "Noted \\ud800 - and \\udfff."}'  # JSON escapes of lone surrogates
        return web.Response(body=body, content_type="application/json") if n in (2, 5) else None

    agent = await http_agent(fault)
    try:
        reason, log = await run_http(make_benchmark(), tmp_path, f"{agent.url}/chat")
        assert reason == TerminationReason.COMPLETED
        again = await run_spec(RunSpec("r", make_benchmark(), {"adapter": "http", "url": f"{agent.url}/chat"}), tmp_path)
    finally:
        await agent.stop()
    assert again.skipped  # the log reads back: nothing left to resume
    invalid = [e for e in log.events if isinstance(e, ErrorEvent) and e.kind == "invalid_text"]
    assert len(invalid) == 2 and "2 lone surrogate" in invalid[0].message
    assert any(e.text == "Noted \ufffd - and \ufffd." for e in log.events if isinstance(e, Replied))


async def test_an_agent_killed_mid_reply_and_restarted(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    port = free_port()
    box: dict[str, ServedApp] = {}
    killed = asyncio.Event()

    async def fault(n: int, request: web.Request) -> web.Response | None:
        if n == 3:
            killed.set()
            assert request.transport is not None
            request.transport.close()  # the process dies mid-reply: its connection drops
            return web.Response()
        return None

    async def supervisor() -> None:
        await killed.wait()
        await box["agent"].stop()  # the process dies: its connections drop
        await asyncio.sleep(0.3)
        box["agent"] = await http_agent(lambda n, r: asyncio.sleep(0, None), port)  # and is restarted

    box["agent"] = await http_agent(fault, port)
    restart = asyncio.create_task(supervisor())
    try:
        reason, log = await run_http(
            make_benchmark(), tmp_path, f"http://127.0.0.1:{port}/chat", retries=4, backoff=0.2
        )
    finally:
        await restart
        await box["agent"].stop()
    assert reason == TerminationReason.COMPLETED
    check(log, "retry")  # the dropped connection, logged, then retried onto the restarted agent


async def test_a_websocket_closed_mid_turn(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    answer = memory_agent()
    turns = 0

    async def agent(ws: ServerConnection) -> None:
        nonlocal turns
        async for raw in ws:
            turns += 1
            if turns == 3:
                await ws.close()
                return
            frame = json.loads(raw)
            await ws.send(json.dumps({"type": "delta", "text": answer(frame["text"])}))
            await ws.send(json.dumps({"type": "done"}))

    async with ws_serve(agent, "127.0.0.1", 0) as server:
        url = f"ws://127.0.0.1:{next(iter(server.sockets)).getsockname()[1]}"
        outcome = await run_spec(
            RunSpec("r", make_benchmark(), {"adapter": "websocket", "url": url, "backoff": 0.05}), tmp_path
        )
    assert outcome.reason == TerminationReason.COMPLETED
    check(read_log(tmp_path / "r" / EVENTS_FILE), "connection")


async def run_with_bot(
    bench: Path, tmp_path: Path, reply: Callable[[str], str | None], stop_after: int | None = None
) -> TerminationReason | None:
    """A run against a bot polling our Bot API, started once the API is up (as the lifecycle would
    start it); `reply` None leaves a message unanswered; the bot stops after `stop_after` updates."""
    from adapters.reference.telegram_bot import call

    # `grace`: how long a message after a timeout waits for a late reply (10 s by default; the
    # late replies themselves are tests/faults/test_off_turn.py's)
    settings = {"adapter": "telegram", "port": free_port(), "quiet": 0.1, "timeout": 1, "grace": 1}

    async def bot(root: str, token: str) -> None:
        import aiohttp

        base, offset, handled = f"{root}/bot{token}", 0, 0
        async with aiohttp.ClientSession() as http:
            while stop_after is None or handled < stop_after:
                for update in await call(http, base, "getUpdates", offset=offset, timeout=0.2):
                    offset = update["update_id"] + 1
                    handled += 1
                    text = reply(update["message"]["text"])
                    if text is not None:
                        await call(
                            http, base, "sendMessage", chat_id=update["message"]["chat"]["id"], text=text
                        )

    original = TelegramAdapter.start
    launched: list[asyncio.Task[None]] = []

    async def start_and_launch(self: TelegramAdapter) -> str:
        root = await original(self)
        if not launched:  # start() is called again by open(): one bot, as one process would be
            launched.append(asyncio.create_task(bot(root, self.emulator.token)))
        return root

    TelegramAdapter.start = start_and_launch  # type: ignore[method-assign]
    try:
        outcome = await run_spec(RunSpec("r", bench, settings), tmp_path)
    finally:
        TelegramAdapter.start = original  # type: ignore[method-assign]
        for task in launched:
            task.cancel()
    return outcome.reason


async def test_a_telegram_bot_that_stops_polling_pauses_the_run_until_it_is_back(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    answer = memory_agent()
    assert (
        await run_with_bot(make_benchmark(), tmp_path, answer, stop_after=3) == TerminationReason.AGENT_FAILED
    )
    paused = read_log(tmp_path / "r" / EVENTS_FILE)
    assert [e.kind for e in paused.events if isinstance(e, ErrorEvent)] == ["timeout"] * 3
    assert await run_with_bot(make_benchmark(), tmp_path, answer) == TerminationReason.COMPLETED
    check(read_log(tmp_path / "r" / EVENTS_FILE), "timeout")


async def test_a_new_session_command_the_bot_leaves_unanswered_is_logged_and_tried_again(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    answer, unanswered = memory_agent(), 0

    def reply(text: str) -> str | None:
        nonlocal unanswered
        if text == "/new" and unanswered < 2:
            unanswered += 1
            return None
        return answer(text)

    assert await run_with_bot(make_benchmark(), tmp_path, reply) == TerminationReason.COMPLETED
    log = read_log(tmp_path / "r" / EVENTS_FILE)
    check(log, "timeout", "new session")
    assert [e.kind for e in log.events if isinstance(e, ErrorEvent)] == ["timeout"] * 2
    assert [e.action for e in log.events if isinstance(e, SessionChanged)] == ["new_session"]


async def test_a_new_session_that_keeps_failing_pauses_the_run_and_resumes_with_it(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    answer = memory_agent()
    silent = lambda text: None if text == "/new" else answer(text)  # noqa: E731
    assert await run_with_bot(make_benchmark(), tmp_path, silent) == TerminationReason.AGENT_FAILED
    paused = read_log(tmp_path / "r" / EVENTS_FILE)
    assert not [e for e in paused.events if isinstance(e, SessionChanged)]
    ended = [e for e in paused.events if isinstance(e, RunEnded)]
    assert ended[-1].detail == "AgentTimeout: the bot sent no settled reply within 1 s"
    assert [e.message for e in paused.events if isinstance(e, ErrorEvent)] == [
        "new session: the bot sent no settled reply within 1 s"
    ] * 3
    assert await run_with_bot(make_benchmark(), tmp_path, answer) == TerminationReason.COMPLETED
    check(read_log(tmp_path / "r" / EVENTS_FILE), "timeout", "new session")


async def flaky_upstream(fault: Callable[[int], Awaitable[web.StreamResponse | None]]) -> ServedApp:
    """The stand-in model, with a fault injected into some of its calls."""
    count = 0

    async def messages(request: web.Request) -> web.StreamResponse:
        nonlocal count
        count += 1
        return await fault(count) or await handle_messages(request)

    app = web.Application()
    app.router.add_post("/v1/messages", messages)
    return await serve(app)


async def test_the_agents_llm_overloaded_through_the_recorder(
    make_benchmark: BenchFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")

    async def overloaded(n: int) -> web.Response | None:
        if 3 <= n <= 5:  # the agent's SDK tries three times, then gives up on this turn
            return web.json_response(
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, status=529
            )
        return None

    upstream = await flaky_upstream(overloaded)
    agent = {"adapter": "reference", "model_base_url": upstream.url, "model": "standin-1", "stream": False}
    try:
        outcome = await run_spec(RunSpec("r", make_benchmark(), agent), tmp_path)
    finally:
        await upstream.stop()
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "r" / EVENTS_FILE)
    assert [e.status for e in log.events if isinstance(e, LLMExchange)].count(529) == 3
    check(log, "retry", says="529")  # the agent answered 502 (its model overloaded); the send was retried


async def test_the_agents_llm_stalling_mid_stream(
    make_benchmark: BenchFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")

    async def stall(n: int) -> web.StreamResponse | None:
        return None if n not in (3, 4, 5) else await stalled(n)

    current: dict[str, web.Request] = {}

    async def stalled(n: int) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(current["request"])
        start = {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "standin-1",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 3, "output_tokens": 1},
        }
        await response.write(
            f"event: message_start\ndata: {json.dumps({'type': 'message_start', 'message': start})}\n\n".encode()
        )
        await asyncio.sleep(5)  # ... and nothing more
        return response

    count = 0

    async def messages(request: web.Request) -> web.StreamResponse:
        nonlocal count
        count += 1
        current["request"] = request
        return await stall(count) or await handle_messages(request)

    app = web.Application()
    app.router.add_post("/v1/messages", messages)
    upstream = await serve(app)
    agent = {"adapter": "reference", "model_base_url": upstream.url, "model": "standin-1", "llm_timeout": 0.5}
    try:
        outcome = await run_spec(RunSpec("r", make_benchmark(), agent), tmp_path)
    finally:
        await upstream.stop()
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "r" / EVENTS_FILE)
    assert any(
        e.error for e in log.events if isinstance(e, LLMExchange)
    )  # the stalled stream, recorded as cut
    check(log, "retry", says="502")  # the agent gave up on its model and said so; the send was retried


def test_a_full_disk_stops_the_run_cleanly_and_it_resumes(tmp_path: Path) -> None:
    """The run log hits a file-size limit (as on a full disk): a clear message, no traceback,
    every complete record kept; with room again, the same command finishes the run."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "gateway.cli", "demo"]
    full = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, env=env, preexec_fn=limit, timeout=120
    )
    assert full.returncode == 1, full.stdout + full.stderr
    assert "can't write run log" in full.stderr and "File too large" in full.stderr
    assert "Traceback" not in full.stderr
    log = read_log(tmp_path / "recordings" / "demo" / EVENTS_FILE)
    assert len(log.events) > 20 and not any(
        isinstance(e, RunEnded) and e.reason == "completed" for e in log.events
    )
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0 and "resuming the unfinished demo run" in again.stdout
    assert "graded 15/15, coverage complete" in again.stdout
