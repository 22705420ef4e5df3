"""Turning a run's `agent` settings into a live `AgentAdapter` (and whatever it needs running).

`adapter: "http"` reaches an agent that is already running. `adapter: "reference"` starts the
reference agent on a free loopback port for the run (its memory folder inside the run's
folder, so a resumed run finds what the agent wrote before), and, unless `model_base_url` is
given, the offline model stand-in beside it. Everything started here is stopped on exit.

With a `RunRecorder`, the agent's LLM traffic goes through the recorder: the reference agent's
model base URL is pointed at it; an `http` agent must be pointed at it by its owner, at the
fixed port `llm.port` (its upstream is `llm.upstream`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.base import AdapterConfigError, AgentAdapter
from adapters.http import HttpAdapter
from adapters.reference.http_server import serve
from adapters.reference.standin import STANDIN_NAME, standin_app
from gateway.redact import redact
from gateway.traffic.recorder import RunRecorder

ADAPTERS = ("http", "reference")


def describe_agent(settings: dict[str, Any]) -> dict[str, Any]:
    """What the log header and report record about the agent: settings, secrets redacted, and
    the model it runs on when we know it (the stand-in is always named as such)."""
    info = redact(settings)
    if settings.get("adapter") == "reference":
        if settings.get("model_base_url"):
            info["model"] = settings.get("model", "claude-sonnet-4-5")
        else:
            info["model"] = STANDIN_NAME
            info["offline_stand_in"] = True
    return dict(info)


def check_agent_settings(settings: dict[str, Any]) -> None:
    """Raise `AdapterConfigError` (a ValueError) for settings that can't work, before a run starts:
    an unknown adapter, a bad URL, a secret named from an unset environment variable."""
    kind = settings.get("adapter")
    if kind not in ADAPTERS:
        raise AdapterConfigError(f"unknown agent adapter {kind!r}; available: {', '.join(ADAPTERS)}")
    if kind == "http":
        HttpAdapter(settings)


@dataclass(frozen=True)
class AgentHandle:
    adapter: AgentAdapter
    llm_url: str | None  # where the agent's LLM calls must go to be recorded


def recording_wanted(settings: dict[str, Any]) -> bool:
    """The reference agent is always recorded (unless `record_llm: false`); another agent when
    its settings say where its LLM lives (`llm.upstream`)."""
    if settings.get("adapter") == "reference":
        return bool(settings.get("record_llm", True))
    llm = settings.get("llm")
    return isinstance(llm, dict) and isinstance(llm.get("upstream"), str)


@asynccontextmanager
async def open_agent(
    settings: dict[str, Any], run_dir: Path, recorder: RunRecorder | None = None
) -> AsyncIterator[AgentHandle]:
    check_agent_settings(settings)
    async with AsyncExitStack() as stack:

        async def record(upstream: str, port: int = 0) -> str:
            """Open a recorder listener forwarding to `upstream`; returns its URL."""
            from gateway.traffic.hub import RecorderHub  # mitmproxy loads only when recording

            assert recorder is not None
            hub = RecorderHub.shared()
            listener = await hub.open(upstream, recorder, port)
            stack.push_async_callback(hub.close, listener)
            return listener.url

        if settings["adapter"] == "http":
            llm = settings.get("llm") or {}
            url = (
                await record(str(llm["upstream"]), int(llm.get("port", 0))) if recorder is not None else None
            )
            yield AgentHandle(HttpAdapter(settings), url)
            return
        handle = await _start_reference(settings, run_dir, stack, record if recorder is not None else None)
        yield handle


type Record = Callable[[str], Awaitable[str]]


async def _start_reference(
    settings: dict[str, Any], run_dir: Path, stack: AsyncExitStack, record: Record | None
) -> AgentHandle:
    # imported here: the anthropic SDK takes ~2 s to import, and only this agent needs it
    from adapters.reference.agent import AgentConfig, ReferenceAgent

    base_url = settings.get("model_base_url")
    api_key = "offline-stand-in"
    if base_url:
        api_key = os.environ.get(str(settings.get("api_key_env", "ANTHROPIC_API_KEY")), "")
    else:
        standin = await serve(standin_app())
        stack.push_async_callback(standin.stop)
        base_url = standin.url
    llm_url = await record(str(base_url)) if record is not None else None
    agent = ReferenceAgent(
        AgentConfig(
            base_url=llm_url or str(base_url),
            api_key=api_key,
            memory_dir=run_dir / "agent-state" / "memory",
            model=str(settings.get("model", "standin-1")),
            context_tokens=int(settings.get("context_tokens", 1200)),
            keep_turns=int(settings.get("keep_turns", 2)),
            stream=bool(settings.get("stream", True)),
        )
    )
    stack.push_async_callback(agent.close)
    served = await serve(agent.app())
    stack.push_async_callback(served.stop)
    adapter = HttpAdapter(
        {"url": f"{served.url}/chat", "timeout": settings.get("timeout", 60), "session_prefix": "ref"}
    )
    return AgentHandle(adapter, llm_url)
