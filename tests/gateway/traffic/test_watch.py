"""`marathon proxy` in-process: live lines for memory calls and compactions, and a log."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import anthropic

from adapters.http_server import serve
from adapters.reference.agent import TOOLS
from adapters.reference.standin import standin_app
from gateway.log.events import LLMExchange
from gateway.log.runlog import read_log
from gateway.traffic.hub import free_port
from gateway.traffic.watch import watch


async def test_watch_prints_memory_calls_as_they_happen(tmp_path: Path) -> None:
    upstream = await serve(standin_app())
    lines: list[str] = []
    ready = asyncio.Event()
    port = free_port()
    task = asyncio.create_task(
        watch(upstream.url, tmp_path, profile="reference", port=port, out=lines.append, ready=ready)
    )
    await asyncio.wait_for(ready.wait(), 10)
    client = anthropic.AsyncAnthropic(api_key="k", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    try:
        for text in ("I live in Porto", "Where do I live?"):
            messages = [{"role": "user", "content": text}]
            await client.messages.create(model="m", max_tokens=5, tools=TOOLS, messages=messages)  # type: ignore[arg-type]
    finally:
        await client.close()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await upstream.stop()
    text = "\n".join(lines)
    assert f"point the agent's LLM base URL at http://127.0.0.1:{port}" in text
    assert "memory write: memory_write" in text and "memory read: memory_search" in text
    assert "stopped after 2 LLM calls" in text
    (log_path,) = tmp_path.glob("proxy-*/events.msgpack")
    assert len([e for e in read_log(log_path).events if isinstance(e, LLMExchange)]) == 2


def test_proxy_command_rejects_a_bad_upstream(tmp_path: Path) -> None:
    from tests.marathon_cli import marathon

    result = marathon("proxy", "--upstream", "api.anthropic.com", cwd=tmp_path)
    assert result.returncode == 2 and "--upstream must be an http:// or https:// URL" in result.stderr
