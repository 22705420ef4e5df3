"""Replies are bounded: an endless body, an oversized frame, a huge Bot API payload, JSON
nested past the stack — each a typed, logged agent error or a refusal, memory flat, the run
going on (an oversized reply is cut, logged `reply_too_large` with its size, graded on nothing)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from adapters.base import AgentProtocolError, AgentReplyTooLarge
from adapters.http import HttpAdapter
from adapters.http_server import serve
from adapters.telegram import TelegramAdapter
from adapters.websocket import WebSocketAdapter
from gateway.log.events import ErrorEvent, Evaluation
from gateway.log.runlog import EVENTS_FILE, read_log
from tests.conftest import BenchFactory
from tests.marathon_cli import MARATHON_ENV

# Python's own count of the bytes it holds (every bytes object a socket read makes is in it):
# the OS's peak RSS is not comparable across machines (one CI machine reported 451 MiB for
# what is 88 MiB here), tracemalloc's peak is.
PEAK = (
    "import sys, tracemalloc\n"
    "tracemalloc.start()\n"
    "from gateway.cli.main import main\n"
    "rc = main(sys.argv[1:])\n"
    "print('peak-traced-bytes', tracemalloc.get_traced_memory()[1])\n"
    "sys.exit(rc)\n"
)


async def test_an_endless_reply_is_cut_at_the_limit_and_memory_stays_flat(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """An agent streaming at full speed took marathon to 8.9 GB in 8 s; now past
    `max_reply_bytes` the body is not read further (here up to 1 GB is offered per reply)."""

    sent: list[int] = []  # what the agent got out before marathon stopped reading

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if "?" not in body["message"]:
            return web.json_response({"reply": "Noted."})
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(b'{"reply": "')
        chunk = b"x" * (1 << 20)
        try:
            for _ in range(1024):
                await response.write(chunk)
                sent.append(len(chunk))
        except (ConnectionResetError, aiohttp.ClientConnectionResetError):
            pass
        return response

    app = web.Application()
    app.router.add_post("/chat", handler)
    served = await serve(app)
    config = tmp_path / "config.jsonc"
    agent = {"adapter": "http", "url": f"{served.url}/chat", "retries": 0}
    config.write_text(
        json.dumps({"runs": [{"id": "big", "benchmark": str(make_benchmark()), "agent": agent}]})
    )
    try:
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", PEAK, "run", str(config)],
            cwd=tmp_path, capture_output=True, text=True, timeout=180, env=MARATHON_ENV,
        )  # fmt: skip
    finally:
        await served.stop()
    peak_mib = int(done.stdout.rsplit("peak-traced-bytes", 1)[1].split()[0]) / (1 << 20)
    assert peak_mib < 150, f"peak traced memory {peak_mib:.0f} MiB"
    assert sum(sent) < 64 << 20, f"{sum(sent) >> 20} MiB taken from the agent"  # of 1 GiB a reply
    log = read_log(tmp_path / "recordings" / "big" / EVENTS_FILE)
    cut = [e for e in log.events if isinstance(e, ErrorEvent) and e.kind == "reply_too_large"]
    assert cut and "past the limit of 1,048,576 (`max_reply_bytes`)" in cut[0].message
    graded = [e for e in log.events if isinstance(e, Evaluation)]
    assert graded and all(e.score == 0 and e.answer == "" for e in graded)  # graded on nothing


async def test_json_nested_past_the_stack_is_a_typed_agent_error() -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(text="[" * 200_000 + "]" * 200_000, content_type="application/json")

    app = web.Application()
    app.router.add_post("/chat", handler)
    served = await serve(app)
    adapter = HttpAdapter({"url": f"{served.url}/chat", "retries": 0, "max_reply_bytes": 1 << 21})
    try:
        with pytest.raises(AgentProtocolError, match="nested too deeply"):
            await adapter.send("hi")
    finally:
        await adapter.close()
        await served.stop()


async def test_an_oversized_websocket_frame_is_reply_too_large() -> None:
    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for _ in ws:
            await ws.send_str(json.dumps({"text": "x" * (2 << 20)}))
        return ws

    app = web.Application()
    app.router.add_get("/ws", handler)
    served = await serve(app)
    adapter = WebSocketAdapter({"url": served.url.replace("http", "ws") + "/ws", "retries": 0, "timeout": 5})
    try:
        with pytest.raises(AgentReplyTooLarge, match="frame"):
            await adapter.send("hi")
    finally:
        await adapter.close()
        await served.stop()


async def test_a_huge_bot_api_request_is_refused_as_telegram_does() -> None:
    telegram = TelegramAdapter({"max_reply_bytes": 64 * 1024})
    root = await telegram.start()
    try:
        async with aiohttp.ClientSession() as http:
            url = f"{root}/bot{telegram.emulator.token}/sendMessage"
            async with http.post(url, json={"chat_id": 424242, "text": "x" * (1 << 20)}) as response:
                status, body = response.status, await response.json()
            deep = "[" * 30_000 + "]" * 30_000  # under the limit, past the stack
            async with http.post(url, data=deep, headers={"Content-Type": "application/json"}) as response:
                deep_status, deep_body = response.status, await response.json()
    finally:
        await telegram.close()
    assert (status, body["ok"], body["error_code"]) == (413, False, 413) and telegram.emulator.oversized == 1
    assert deep_status == 400 and "nested too deeply" in deep_body["description"]
