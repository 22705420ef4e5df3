"""One writer per run folder: a second `marathon run` on a running run is refused, naming the
holder; a SIGKILLed run leaves no stale lock; readers never wait for it."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

from aiohttp import web

from adapters.http_server import serve
from gateway.log.events import RunStart
from gateway.log.lock import RunInUse, RunLock
from gateway.log.runlog import EVENTS_FILE, read_log
from tests.conftest import BenchFactory
from tests.marathon_cli import count_records, explain, marathon, spawn_marathon


def test_a_second_lock_on_a_run_folder_is_refused_with_the_holder(tmp_path: Path) -> None:
    held = RunLock.acquire(tmp_path / "r")
    try:
        RunLock.acquire(tmp_path / "r")
    except RunInUse as exc:
        assert "being written by another marathon (pid" in str(exc)
    else:
        raise AssertionError("a second writer got the lock")
    finally:
        held.release()
    RunLock.acquire(tmp_path / "r").release()  # free again once released


async def test_two_marathon_runs_on_one_config_never_share_a_log(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    # The first run's second message stalls until it is killed: on a slow machine it could
    # otherwise finish while the second `marathon` starts, and leave nothing to resume.
    stalled, release = asyncio.Event(), asyncio.Event()
    served = 0

    async def slow_chat(request: web.Request) -> web.Response:
        nonlocal served
        served += 1
        if served > 1 and not release.is_set():
            stalled.set()
            await release.wait()
        await asyncio.sleep(0.2)
        return web.json_response({"reply": "Noted."})

    app = web.Application()
    app.router.add_post("/chat", slow_chat)
    agent = await serve(app)
    config = tmp_path / "config.jsonc"
    runs = [{"id": "r", "benchmark": str(make_benchmark()), "agent": {"adapter": "http", "url": f"{agent.url}/chat"}}]
    config.write_text(json.dumps({"recordings": "out", "runs": runs}))
    log_path = tmp_path / "out" / "r" / EVENTS_FILE
    first = spawn_marathon("run", str(config), cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not (stalled.is_set() and count_records(log_path) >= 4) and first.poll() is None:
            assert time.monotonic() < deadline, "the first run never reached its second message"
            await asyncio.sleep(0.02)
        second = await asyncio.to_thread(marathon, "run", str(config), cwd=tmp_path)
        assert second.returncode == 1, explain(second, log_path)
        assert f"being written by another marathon (pid {first.pid}" in second.stderr, explain(second, log_path)
        assert first.poll() is None  # the first goes on undisturbed
        first.send_signal(signal.SIGKILL)  # ... until killed: the kernel drops its lock
        first.communicate(timeout=30)
        release.set()
        third = await asyncio.to_thread(marathon, "run", str(config), cwd=tmp_path)
    finally:
        if first.poll() is None:
            first.kill()
        await agent.stop()
    assert third.returncode == 0 and "[r] completed" in third.stdout, explain(third, log_path)
    log = read_log(log_path)
    assert [e.resumed for e in log.events if isinstance(e, RunStart)] == [False, True]
    seqs = [e.seq for e in log.events]
    assert len(seqs) == len(set(seqs))
