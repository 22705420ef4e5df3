"""`marathon proxy`: the recorder on its own, in front of any agent's LLM provider.

Point the agent's LLM base URL at the printed address; every call is forwarded to the upstream,
recorded into a run log of its own, and compactions and memory calls are printed as they
happen. Runs until cancelled (Ctrl-C), then closes the listener and the log.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from gateway import __version__
from gateway.log.events import Header, RunEnded
from gateway.log.redact import redact_text
from gateway.log.runlog import EVENTS_FILE, RunLogWriter
from gateway.log.vocabulary import TerminationReason
from gateway.traffic.hub import RecorderHub
from gateway.traffic.profile import load_profile
from gateway.traffic.recorder import RunRecorder


async def watch(
    upstream: str,
    recordings: Path,
    *,
    profile: str | None = None,
    port: int = 0,
    out: Callable[[str], None] = print,
    ready: asyncio.Event | None = None,
) -> Path:
    """Record until cancelled; returns the log's path. `ready` is set once the listener is up."""
    run_id = time.strftime("proxy-%Y%m%d-%H%M%S")
    log_path = recordings / run_id / EVENTS_FILE
    traffic = load_profile(profile)
    header = Header(
        tool_version=__version__,
        run_id=run_id,
        agent={"llm": {"upstream": redact_text(upstream), "profile": traffic.name}},
    )
    with RunLogWriter.create(log_path, header) as writer:

        def echo(line: str) -> None:
            out(f"{time.strftime('%H:%M:%S')} {line}")

        recorder = RunRecorder(writer.append, traffic, echo=echo, log_check=writer.check_writable)
        hub = RecorderHub.shared()
        listener = await hub.open(upstream, recorder, port)
        out(f"recording LLM traffic to {upstream} (profile: {traffic.name}) into {log_path}")
        out(f"point the agent's LLM base URL at {listener.url}; Ctrl-C to stop")
        if ready is not None:
            ready.set()
        try:
            await asyncio.Event().wait()
        finally:
            await hub.close(listener)
            # a proxy stopped on purpose is finished, not a run to resume
            stopped = f"proxy stopped after {recorder.exchanges} LLM calls"
            writer.append(RunEnded(reason=TerminationReason.COMPLETED, detail=stopped))
            out(f"stopped after {recorder.exchanges} LLM calls; log: {log_path}")
    return log_path
