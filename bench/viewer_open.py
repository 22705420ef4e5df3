"""How fast `marathon view` opens a huge run: a synthetic log of N events (default 100,000:
persona messages, agent replies, LLM exchanges, memory calls, questions and grades), then,
side by side in one run: reading the whole log with `read_log`, the viewer's first page
(cold: it indexes the whole log), a later page (warm), the runs list, and a live refresh
after 1,000 more events are appended. Usage: `.venv/bin/python bench/viewer_open.py [N]`.
"""

from __future__ import annotations

import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.http_server import serve
from gateway.log.events import Asked, Evaluation, Header, LLMExchange, MemoryCallSeen, Replied, RunStart, Said
from gateway.log.runlog import EVENTS_FILE, RunLogWriter, read_log
from gateway.viewer.app import make_app


def write(writer: RunLogWriter, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        match i % 6:
            case 0:
                writer.append(Said(text=f"fact number {i}: the blue house has {i} windows", purpose="fact"))
            case 1:
                writer.append(
                    LLMExchange(
                        api="anthropic-messages", path="/v1/messages", status=200, input_tokens=i % 5000
                    )
                )
            case 2:
                writer.append(MemoryCallSeen(tool="memory_write", operation="write", exchange=i - 1))
            case 3:
                writer.append(Replied(text=f"Noted, fact {i}."))
            case 4:
                writer.append(
                    Asked(question_id=f"q{i}", text=f"How many windows at {i - 4}?", expected=str(i - 4))
                )
            case 5:
                writer.append(
                    Evaluation(question_id=f"q{i - 1}", score=10, reason="exact", answer=str(i - 5))
                )


async def timed(http: aiohttp.ClientSession, url: str) -> tuple[float, int]:
    started = time.perf_counter()
    async with http.get(url) as response:
        body = await response.read()
    return time.perf_counter() - started, len(body)


async def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        recordings = Path(tmp)
        path = recordings / "huge" / EVENTS_FILE
        writer = RunLogWriter.create(
            path, Header(run_id="huge", benchmark={"name": "synthetic", "phases": 1, "questions": n // 6})
        )
        writer.append(RunStart())
        write(writer, n)
        size = path.stat().st_size
        started = time.perf_counter()
        read_log(path)
        whole = time.perf_counter() - started
        served = await serve(make_app(recordings))
        async with aiohttp.ClientSession() as http:
            cold, first_bytes = await timed(http, f"{served.url}/api/runs/huge/items?limit=500")
            warm, _ = await timed(http, f"{served.url}/api/runs/huge/items?after={n // 2}&limit=500")
            listing, _ = await timed(http, f"{served.url}/api/runs")
            run, run_bytes = await timed(http, f"{served.url}/api/runs/huge")
            write(writer, 1000, n)
            live, _ = await timed(http, f"{served.url}/api/runs/huge/items?after={n}&limit=500")
        await served.stop()
        writer.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"log: {n:,} events, {size / 1e6:.1f} MB")
    print(f"read_log (whole log, reference)     {whole * 1000:8.0f} ms")
    print(
        f"viewer first page, cold (indexes)   {cold * 1000:8.0f} ms   "
        f"({cold / whole:.2f}× read_log; page {first_bytes / 1e3:.0f} kB)"
    )
    print(f"viewer a later page, warm           {warm * 1000:8.1f} ms")
    print(f"viewer runs list, warm              {listing * 1000:8.1f} ms")
    print(f"viewer run page data (chart series) {run * 1000:8.1f} ms   ({run_bytes / 1e3:.0f} kB)")
    print(f"viewer refresh after +1,000 events  {live * 1000:8.1f} ms")
    print(f"peak memory of this process         {peak:8.0f} MiB")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000))
