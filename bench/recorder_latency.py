"""Recorder latency: added time per LLM call through the recorder vs direct, and the
time-to-first-chunk of a stream, measured side by side (interleaved) in one run.

The upstream is a loopback fake: JSON answers for plain calls; for streams, a first event at
once and the rest 50 ms later. Usage: `.venv/bin/python bench/recorder_latency.py [N]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.http_server import serve
from gateway.log.events import Event
from gateway.traffic.hub import RecorderHub
from gateway.traffic.profile import load_profile
from gateway.traffic.recorder import RunRecorder

BODY = {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "hello " * 200}]}
ANSWER = {
    "type": "message",
    "content": [{"type": "text", "text": "hi"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 300, "output_tokens": 2},
}


async def plain(request: web.Request) -> web.Response:
    await request.read()
    return web.json_response(ANSWER)


async def streamed(request: web.Request) -> web.StreamResponse:
    await request.read()
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    await response.write(
        b'event: message_start\ndata: {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}\n\n'
    )
    await asyncio.sleep(0.05)
    await response.write(b'event: message_stop\ndata: {"type": "message_stop"}\n\n')
    await response.write_eof()
    return response


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    app = web.Application()
    app.router.add_post("/v1/messages", plain)
    app.router.add_post("/v1/stream", streamed)
    upstream = await serve(app)
    events: list[Event] = []
    recorder = RunRecorder(lambda e: events.append(e) or e, load_profile(None))  # type: ignore[func-returns-value]
    hub = RecorderHub.shared()
    listener = await hub.open(upstream.url, recorder)
    times: dict[str, list[float]] = {"direct": [], "recorded": []}
    ttfc: dict[str, list[float]] = {"direct": [], "recorded": []}
    async with aiohttp.ClientSession() as http:
        for i in range(n + 20):  # interleaved, first 20 are warm-up
            for name, base in (("direct", upstream.url), ("recorded", listener.url)):
                started = time.perf_counter()
                async with http.post(f"{base}/v1/messages", json=BODY) as r:
                    await r.read()
                if i >= 20:
                    times[name].append(time.perf_counter() - started)
        for _ in range(max(20, n // 10)):
            for name, base in (("direct", upstream.url), ("recorded", listener.url)):
                started = time.perf_counter()
                async with http.post(f"{base}/v1/stream", json=BODY) as r:
                    await r.content.readuntil(b"\n\n")
                    ttfc[name].append(time.perf_counter() - started)
                    await r.read()
    await hub.close(listener)
    await upstream.stop()
    d, r = times["direct"], times["recorded"]
    d50, r50, d99, r99 = statistics.median(d), statistics.median(r), pct(d, 0.99), pct(r, 0.99)
    print(f"plain calls: {len(d)} each, interleaved; request body {len(str(BODY)):,} bytes")
    print(f"  direct    p50 {d50 * 1e3:6.2f} ms   p99 {d99 * 1e3:6.2f} ms")
    print(f"  recorded  p50 {r50 * 1e3:6.2f} ms   p99 {r99 * 1e3:6.2f} ms")
    print(f"  added     p50 {(r50 - d50) * 1e3:6.2f} ms   ratio p50 {r50 / d50:.1f}x, p99 {r99 / d99:.1f}x")
    td, tr = statistics.median(ttfc["direct"]), statistics.median(ttfc["recorded"])
    print(
        f"stream time-to-first-chunk ({len(ttfc['direct'])} each; the upstream's last chunk comes 50 ms later):"
    )
    print(f"  direct p50 {td * 1e3:.2f} ms, recorded p50 {tr * 1e3:.2f} ms, ratio {tr / td:.1f}x")
    print(f"recorded exchanges: {sum(1 for e in events if e.type == 'llm_exchange')}")


if __name__ == "__main__":
    asyncio.run(main())
