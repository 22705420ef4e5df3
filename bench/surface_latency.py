"""Added latency of one chat exchange through each surface, vs talking to the same fake agent
directly — measured side by side (interleaved) in one run, loopback only.

HTTP: the HTTP adapter vs a bare aiohttp POST. WebSocket: the adapter vs bare frames on an
open connection. Telegram: the emulated Bot API + reply settling vs the bot's reply function
called in-process; the settling quiet period (here 50 ms) is part of what a Telegram exchange
costs. Usage: `.venv/bin/python bench/surface_latency.py [N]`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
from aiohttp import web
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection
from websockets.asyncio.server import serve as ws_serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.http import HttpAdapter
from adapters.http_server import serve
from adapters.reference.telegram_bot import call
from adapters.telegram import TelegramAdapter
from adapters.websocket import WebSocketAdapter


def answer(text: str) -> str:
    return f"echo: {text}"


async def timed(fn: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await fn()
    return time.perf_counter() - started


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200

    async def http_handler(request: web.Request) -> web.Response:
        return web.json_response({"reply": answer((await request.json())["message"])})

    app = web.Application()
    app.router.add_post("/chat", http_handler)
    http_server = await serve(app)

    async def ws_handler(ws: ServerConnection) -> None:
        async for raw in ws:
            await ws.send(json.dumps({"type": "delta", "text": answer(json.loads(raw)["text"])}))
            await ws.send(json.dumps({"type": "done"}))

    ws_server = await ws_serve(ws_handler, "127.0.0.1", 0)
    ws_url = f"ws://127.0.0.1:{next(iter(ws_server.sockets)).getsockname()[1]}"

    telegram = TelegramAdapter({"quiet": 0.05, "timeout": 10})
    root = await telegram.start()
    base = f"{root}/bot{telegram.emulator.token}"
    stop = asyncio.Event()

    async def echo_bot() -> None:
        offset = 0
        async with aiohttp.ClientSession() as session:
            while not stop.is_set():
                for update in await call(session, base, "getUpdates", offset=offset, timeout=1):
                    offset = update["update_id"] + 1
                    message = update["message"]
                    await call(
                        session,
                        base,
                        "sendMessage",
                        chat_id=message["chat"]["id"],
                        text=answer(message["text"]),
                    )

    bot = asyncio.create_task(echo_bot())
    await telegram.wait_for_bot(5)

    http_adapter = HttpAdapter({"url": f"{http_server.url}/chat"})
    ws_adapter = WebSocketAdapter({"url": ws_url})
    await ws_adapter.open()
    results: dict[str, dict[str, list[float]]] = {
        s: {"direct": [], "surface": []} for s in ("http", "websocket", "telegram")
    }
    async with aiohttp.ClientSession() as direct_http, connect(ws_url) as direct_ws:

        async def http_direct() -> None:
            async with direct_http.post(
                f"{http_server.url}/chat", json={"message": "hi", "session_id": "s"}
            ) as r:
                await r.json()

        async def ws_direct() -> None:
            await direct_ws.send(json.dumps({"type": "message", "session": "s", "text": "hi"}))
            while json.loads(await direct_ws.recv())["type"] != "done":
                pass

        async def telegram_direct() -> None:
            answer("hi")

        pairs = {
            "http": (http_direct, lambda: http_adapter.send("hi")),
            "websocket": (ws_direct, lambda: ws_adapter.send("hi")),
            "telegram": (telegram_direct, lambda: telegram.send("hi")),
        }
        for i in range(n + 10):
            for surface, (direct, through) in pairs.items():
                if surface == "telegram" and i % 4:
                    continue  # each Telegram exchange waits out its quiet period: sample fewer
                d, t = await timed(direct), await timed(through)
                if i >= 10:
                    results[surface]["direct"].append(d)
                    results[surface]["surface"].append(t)
    stop.set()
    await bot
    await http_adapter.close()
    await ws_adapter.close()
    await telegram.close()
    ws_server.close()
    await http_server.stop()
    print(f"one exchange, direct vs through the surface (interleaved; {n} rounds, Telegram every 4th):")
    for surface, r in results.items():
        d, s = r["direct"], r["surface"]
        print(
            f"  {surface:<9} direct p50 {statistics.median(d) * 1e3:7.2f} ms p99 {pct(d, 0.99) * 1e3:7.2f} ms | "
            f"surface p50 {statistics.median(s) * 1e3:7.2f} ms p99 {pct(s, 0.99) * 1e3:7.2f} ms | "
            f"added p50 {(statistics.median(s) - statistics.median(d)) * 1e3:7.2f} ms"
            + (f", ratio {statistics.median(s) / statistics.median(d):.1f}x" if surface != "telegram" else "")
        )


if __name__ == "__main__":
    asyncio.run(main())
