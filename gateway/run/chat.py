"""`marathon chat`: a person types as the persona; every exchange goes through the gateway and
is recorded like a run's (header, `say`, `reply`, `error`, LLM traffic when the profile says
where the agent's model is). For trying a profile before a long run.

Lines starting with `/new-session` start a new session the way the profile does; `/help` says
the chat's own commands (never sent to the agent: a bot may have a /help of its own, which a
person trying it did not mean to ask); an empty line or end of input ends the chat
(`completed`); a stop signal ends it `interrupted`. A person at a terminal is prompted `you> `.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from adapters.base import AdapterError
from adapters.profiles import resolve
from gateway import __version__
from gateway.log.events import ErrorEvent, Header, Replied, RunEnded, RunStart, Said, SessionChanged
from gateway.log.runlog import EVENTS_FILE, RunLogWriter
from gateway.log.vocabulary import ErrorKind, ErrorSource, Purpose, SessionAction, TerminationReason
from gateway.run.agents import describe_agent, open_agent, recording_wanted, traffic_profile
from gateway.traffic.recorder import RunRecorder

HELP = (
    "(the chat's own commands — everything else goes to the agent as typed:\n"
    "  /new-session   start a new session, as a run does\n"
    "  /help          this\n"
    "  an empty line  stop; the chat is recorded)"
)
PROMPT = "you> "


async def chat(
    settings: dict[str, Any],
    recordings: Path,
    lines: TextIO,
    out: Callable[[str], None],
    prompt: Callable[[str], None] | None = None,
) -> Path:
    """`prompt(PROMPT)` before each line, when given (the CLI gives it for a terminal)."""
    run_id = time.strftime("chat-%Y%m%d-%H%M%S")
    run_dir = recordings / run_id
    header = Header(
        tool_version=__version__, run_id=run_id, persona={"driver": "human"}, agent=describe_agent(settings)
    )
    with RunLogWriter.create(run_dir / EVENTS_FILE, header) as writer:
        resolved = resolve(settings)
        recorder = None
        if recording_wanted(resolved):
            recorder = RunRecorder(
                writer.append,
                traffic_profile(resolved),
                echo=lambda line: out(f"  [llm] {line}"),
                log_check=writer.check_writable,
            )
        async with open_agent(settings, run_dir, recorder) as handle:
            session = await handle.adapter.open()
            writer.append(RunStart(session_id=session, llm_url=handle.llm_url or ""))
            if handle.llm_url:
                out(f"(the agent's LLM traffic is recorded at {handle.llm_url})")
            if header.agent.get("offline_stand_in"):
                out("(the agent runs on the offline rule-based model stand-in, not an LLM)")
            name = settings.get("profile") or header.agent.get("adapter", "the agent")
            out(f"chatting with {name} — empty line to stop, /new-session for a new session, /help")
            ended = TerminationReason.COMPLETED
            incoming = _lines_of(lines)
            try:
                while True:
                    if prompt is not None:
                        prompt(PROMPT)
                    text = (await incoming.get()).rstrip("\n")
                    if not text.strip():
                        break
                    if text.strip() == "/help":
                        out(HELP)
                        continue
                    if text.strip() == "/new-session":
                        session = await handle.adapter.new_session()
                        writer.append(SessionChanged(action=SessionAction.NEW_SESSION, detail=session))
                        if recorder is not None:  # a smaller input next is the new session, no compaction
                            recorder.session_changed()
                        out(f"(new session {session})")
                        continue
                    writer.append(Said(text=text, purpose=Purpose.HUMAN))
                    started = time.monotonic()
                    try:
                        reply = await handle.adapter.send(text)
                    except AdapterError as exc:
                        writer.append(ErrorEvent(source=ErrorSource.AGENT, kind=ErrorKind(exc.kind), message=str(exc)))
                        out(f"(agent error: {exc})")
                        continue
                    writer.append(Replied(text=reply, elapsed=round(time.monotonic() - started, 3)))
                    out(f"agent> {reply}")
            except asyncio.CancelledError:
                ended = TerminationReason.INTERRUPTED
                raise
            finally:  # the adapter closes with the agent (open_agent), after its process stopped
                writer.append(RunEnded(reason=ended, detail="chat ended"))
    out(f"recorded in {run_dir}")
    return run_dir


def _lines_of(stream: TextIO) -> asyncio.Queue[str]:
    """The stream's lines as they come ("" at its end), read by a daemon thread: a chat stopped
    while the person hasn't typed anything must not wait for a `readline` that never returns
    (asyncio's default executor is joined at exit; a daemon thread is not)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str] = asyncio.Queue()

    def read() -> None:
        while True:
            try:
                line = stream.readline()
            except (OSError, ValueError):
                line = ""
            try:
                loop.call_soon_threadsafe(queue.put_nowait, line)
            except RuntimeError:  # the loop is closed: the chat is over
                return
            if not line:
                return

    threading.Thread(target=read, name="chat-input", daemon=True).start()
    return queue
