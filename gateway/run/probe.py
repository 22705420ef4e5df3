"""`marathon probe`: a one-minute preflight of a run's agent, before a five-hour marathon.

It starts the agent as a run would (its process, its recorder), sends a greeting with a
marker, starts a new session and asks for the marker, and reads what the recorder saw. The
result is a checklist: each check ✓, ✗ with the fix, or "?" where it can't tell (say, the
agent's model traffic is not recorded). Recorded like a run (`recordings/probe-<time>/`).

What a caller may rely on: `probe` never raises for an agent that fails — a failure is a ✗
check; only our own bugs escape. The new-session check looks at what the agent's *model* was
given (the recorder's evidence check), not at what it answers: an agent with memory may
rightly recall the marker through a memory tool.
"""

from __future__ import annotations

import re
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.base import AdapterError, OffTurnAdapter, can_compact, session_reply
from adapters.lifecycle import binary_for
from adapters.profiles import resolve
from gateway import __version__
from gateway.log.events import (
    CheckpointSaved,
    ErrorEvent,
    EvidenceCheck,
    Header,
    LLMExchange,
    Replied,
    RunEnded,
    RunStart,
    Said,
    SessionChanged,
)
from gateway.log.runlog import EVENTS_FILE, RunLogWriter, read_log
from gateway.log.vocabulary import ErrorKind, ErrorSource, Purpose, SessionAction, TerminationReason
from gateway.run.agents import AgentHandle, describe_agent, open_agent, recording_wanted, traffic_profile
from gateway.run.checkpoints import CheckpointError, SavedCheckpoint, archive_state
from gateway.run.definition import agent_version
from gateway.run.forking import fork_refusal
from gateway.run.restore import restore_state
from gateway.traffic.profile import TrafficProfile
from gateway.traffic.recorder import RunRecorder

GREETING = "Hello! This is a quick check before a longer conversation. Please note this marker: {marker}."
RECALL = "Quick check: which marker did I give you in my first message? If you can't see it, just say so."


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool | None  # None: can't tell
    detail: str
    fix: str = ""
    optional: bool = False  # a capability only some benchmarks need: without it "–", not a failure

    @property
    def failed(self) -> bool:
        return self.ok is False and not self.optional

    def line(self) -> str:
        mark = "–" if self.ok is False and self.optional else {True: "✓", False: "✗", None: "?"}[self.ok]
        return f"{mark} {self.name}: {self.detail}" + (f"\n    fix: {self.fix}" if self.fix else "")


async def probe(
    settings: dict[str, Any], recordings: Path, out: Callable[[str], None] = print
) -> tuple[Path, list[Check]]:
    """Probe the agent of `settings`; returns the recording's folder and the checklist."""
    run_id = time.strftime("probe-%Y%m%d-%H%M%S")
    run_dir = recordings / run_id
    resolved = resolve(settings)
    marker = f"PROBE-{uuid.uuid4().hex[:6].upper()}"
    checks: list[Check] = []
    header = Header(
        tool_version=__version__, run_id=run_id, persona={"driver": "probe"}, agent=describe_agent(settings)
    )
    with RunLogWriter.create(run_dir / EVENTS_FILE, header) as writer:
        profile = traffic_profile(resolved)
        recorder = None
        if recording_wanted(resolved):
            recorder = RunRecorder(
                writer.append,
                profile,
                evidence=lambda expected, history: expected in history,
                log_check=writer.check_writable,
            )
        try:
            async with open_agent(settings, run_dir, recorder) as handle:
                await _run_checks(handle.adapter, handle.llm_url, recorder, writer, marker, checks, out)
                if checks[-1].name == "compact() is possible":  # the agent answered: try a fork's round trip
                    checks.append(await _checkpoint_check(handle, resolved, run_dir, writer, marker, out))
                version = agent_version(resolved)  # what a run's header and run line record of it
                checks.append(Check("its version", None if version.startswith("unknown") else True, version))
        except AdapterError as exc:
            checks.append(
                Check("the agent starts", False, f"{type(exc).__name__}: {exc}", _start_fix(resolved))
            )
        finally:
            writer.append(RunEnded(reason=TerminationReason.COMPLETED, detail="probe"))
    checks += _traffic_checks(run_dir, resolved, profile, recorder is not None)
    return run_dir, checks


async def _run_checks(
    adapter: Any,
    llm_url: str | None,
    recorder: RunRecorder | None,
    writer: RunLogWriter,
    marker: str,
    checks: list[Check],
    out: Callable[[str], None],
) -> None:
    session = await adapter.open()
    writer.append(RunStart(session_id=session, llm_url=llm_url or ""))
    checks.append(Check("the agent starts", True, f"session {session}"))
    greeting = GREETING.format(marker=marker)
    reply = await _turn(adapter, writer, greeting, out)
    if reply is None:
        checks.append(
            Check(
                "a reply arrives and settles",
                False,
                _last_error(writer),
                "is the agent up, at the URL the settings give, answering within `timeout`?",
            )
        )
        return
    checks.append(Check("a reply arrives and settles", True, f"{reply[1]:.1f} s for the first turn"))
    background = adapter.take_off_turn() if isinstance(adapter, OffTurnAdapter) else []
    checks.append(
        Check("no messages of its own", True, "none while probed")
        if not background
        else Check(
            "no messages of its own",
            None,
            f"{len(background)} (e.g. {background[0].text[:60]!r}) — logged apart, never graded",
            'switch heartbeats off for a marathon (OpenClaw: agents.defaults.heartbeat.every = "0m")',
        )
    )
    new = await adapter.new_session()
    writer.append(
        SessionChanged(action=SessionAction.NEW_SESSION, detail=new, reply=session_reply(adapter))
    )
    if recorder is not None:
        recorder.session_changed()
        recorder.question_started("probe", RECALL, marker, False)
    second = await _turn(adapter, writer, RECALL, out)
    if recorder is not None:
        recorder.question_finished()
    if second is None:
        checks.append(
            Check(
                "a new session starts",
                False,
                _last_error(writer),
                "check `new_session_commands` (Telegram) or how the agent keys sessions",
            )
        )
    else:
        checks.append(_session_check(writer, marker, second[0]))
    checks.append(
        Check("compact() is possible", True, f"by {', '.join(adapter.compact_commands)}")
        if can_compact(adapter)
        else Check(
            "compact() is possible",
            False,
            "no compaction command — a benchmark with `await bench.compact()` is refused for this agent",
            "if the agent has one, set `compact_commands` (/compact for OpenClaw, /compress for Hermes' "
            "Telegram bot); else use `await bench.newSession()` in such benchmarks",
            optional=True,
        )
    )


async def _checkpoint_check(
    handle: AgentHandle,
    settings: dict[str, Any],
    run_dir: Path,
    writer: RunLogWriter,
    marker: str,
    out: Callable[[str], None],
) -> Check:
    """Checkpoint the agent (stop, archive its state folder, start), restore the archive over
    it (stop, restore, start) and see that it still answers — what a fork does."""
    name = "a checkpoint round trip (forks)"
    refusal = fork_refusal(settings)
    if refusal is not None or handle.state_dir is None or handle.restart_around is None:
        why = refusal or "marathonbench does not hold this agent's state"
        return Check(name, False, why, "runs of it can't checkpoint or fork; the rest works", optional=True)
    state_dir, restart = handle.state_dir, handle.restart_around
    saved: list[CheckpointSaved] = []
    restored: list[str] = []
    try:
        rules = handle.state_rules
        await restart(lambda: saved.append(archive_state(state_dir, run_dir, "probe", rules)), True)
        logged = writer.append(saved[0])
        assert isinstance(logged, CheckpointSaved)
        taken = logged
        checkpoint = SavedCheckpoint.logged(run_dir.name, run_dir, taken)
        await restart(lambda: restored.append(restore_state(checkpoint, state_dir, rules)), True)
    except (AdapterError, CheckpointError, OSError) as exc:
        return Check(name, False, f"{type(exc).__name__}: {exc}", "see agent.log in the probe's folder")
    answer = await _turn(handle.adapter, writer, RECALL, out)
    if answer is None:
        return Check(
            name, False, f"restored, but it did not answer again: {_last_error(writer)}", "see agent.log"
        )
    recalled = "recalled the marker" if marker in answer[0] else "answered (without the marker)"
    return Check(
        name,
        True,
        f"state {taken.state_hash[:12]}, {taken.bytes:,} bytes archived, restored and started again; {recalled}",
    )


async def _turn(
    adapter: Any, writer: RunLogWriter, text: str, out: Callable[[str], None]
) -> tuple[str, float] | None:
    writer.append(Said(text=text, purpose=Purpose.PROBE))
    started = time.monotonic()
    try:
        reply = str(await adapter.send(text))
    except AdapterError as exc:
        writer.append(ErrorEvent(source=ErrorSource.AGENT, kind=ErrorKind(exc.kind), message=str(exc)))
        out(f"(agent error: {exc})")
        return None
    elapsed = time.monotonic() - started
    writer.append(Replied(text=reply, elapsed=round(elapsed, 3)))
    out(f"agent> {reply[:200]}")
    return reply, elapsed


def _last_error(writer: RunLogWriter) -> str:
    errors = [e for e in read_log(writer.path).events if isinstance(e, ErrorEvent)]
    return f"{errors[-1].kind}: {errors[-1].message[:200]}" if errors else "no reply"


def _session_check(writer: RunLogWriter, marker: str, answer: str) -> Check:
    evidence = [
        e for e in read_log(writer.path).events if isinstance(e, EvidenceCheck) and e.question_id == "probe"
    ]
    if evidence:
        if evidence[0].in_context:
            return Check(
                "a new session starts",
                False,
                "the model was given the first session's messages again",
                "the agent ignores new sessions: check `new_session_commands`, the session header or the session id field",
            )
        return Check("a new session starts", True, "the model's input no longer holds the first session")
    seen = marker in answer
    return Check(
        "a new session starts",
        None if seen else True,
        "the agent still named the marker (from its context, or rightly from memory: its model traffic would tell)"
        if seen
        else "the agent no longer names the marker (its model traffic, not recorded, can't confirm)",
    )


def _traffic_checks(
    run_dir: Path, settings: dict[str, Any], profile: TrafficProfile, recorded: bool
) -> list[Check]:
    events = read_log(run_dir / EVENTS_FILE).events
    calls = [e for e in events if isinstance(e, LLMExchange) and e.kind.conversational]
    if not recorded:
        return [
            Check(
                "the agent's model calls reach the recorder",
                False,
                "not recorded: the settings give no `llm.upstream`",
                "add `llm: { upstream: <the agent's provider URL>, port: N }` and point the agent's LLM base URL at http://127.0.0.1:N",
            ),
            Check("memory tools are offered", None, "can't tell without its model traffic"),
        ]
    if not calls and not any(isinstance(e, Replied) for e in events):
        return [  # no reply at all: its silence says nothing of where its model calls go
            Check("the agent's model calls reach the recorder", None, "can't tell: the agent never answered"),
            Check("memory tools are offered", None, "can't tell without its model traffic"),
        ]
    if not calls:
        listener = next(
            (e.llm_url for e in events if isinstance(e, RunStart) and e.llm_url), "the recorder's address"
        )
        return [
            Check(
                "the agent's model calls reach the recorder",
                False,
                "no model call reached the recorder while the agent answered",
                f"point the agent's LLM base URL at {listener}",
            ),
            Check("memory tools are offered", None, "can't tell without its model traffic"),
        ]
    apis = sorted({c.api for c in calls})
    models = sorted({c.model for c in calls if c.model})
    names = {name for c in calls for name in c.tool_names}
    offered = sorted(name for name in names if profile.memory_call(name, {}) is not None)
    # an agent whose memory is reached through a wrapper (OpenClaw's deferred `tool_call`) or
    # kept in files it edits with file tools (its memory/*.md)
    offered += [
        f"{name} (a wrapper: its memory tools may be called through it)"
        for name in sorted(names & set(profile.wrapper_tools))
    ]
    files = sorted(names & set(profile.file_tools))
    if files and profile.memory_paths:
        offered.append(f"file tools {', '.join(files)} on {', '.join(profile.memory_paths[:3])}")
    return [
        Check(
            "the agent's model calls reach the recorder",
            True,
            f"{len(calls)} call(s), {', '.join(apis)}, model {', '.join(models) or 'unnamed'}",
        ),
        Check("memory tools are offered", True, ", ".join(offered))
        if offered
        else Check(
            "memory tools are offered",
            None,
            "none the profile knows (the agent may keep memory in its prompt or files)",
            f"if it has memory tools, name them in `llm.memory_tools` (profile {profile.name})",
        ),
    ]


def _start_fix(settings: dict[str, Any]) -> str:
    process = settings.get("process")
    if isinstance(process, dict):
        command = process.get("command")
        program = command[0] if isinstance(command, list) and command else None
        if program and "/" not in str(program) and shutil.which(binary_for(str(program))) is None:
            name = re.sub(r"[^A-Z0-9]", "_", str(program).upper())
            return f"`{program}` is not installed here: install it, or set MARATHON_{name}_BIN to where it is"
        return "the agent's process did not come up: run its command by hand and read agent.log in the probe folder"
    return f"is the agent running at {settings.get('url', 'its URL')}?"
