"""A recorded run's traffic analysis derived again, with today's rules and profiles.

The recorder analyses each model call as it passes: whether it answers the persona or is the
agent's own work, which question it is charged to, compactions, memory calls, the evidence
check. Those readings are logged beside the exchange — and go stale when a rule or a profile
changes (OpenClaw 2026.9.6's internal-context block made every one of its calls background
under one release's shape rule). The exchanges themselves are recorded whole (messages,
system prompt, tools and the response body as blobs), so the readings can be made again:
`rederive` walks the log, rebuilds each call, and feeds a fresh `RunRecorder` the same
notices the runner gave the live one (a message sent, its reply, a question asked and graded,
a new session, a compaction command, a restart), in the order the log keeps them.

What a caller may rely on: the result is the log with every recorder-derived event (the
exchanges' kind, question and `decided_by`; compactions, memory calls and their results,
evidence checks, canary hits; the "recorder bypassed" and "background unrecognised" warnings)
replaced by today's; every other event untouched, in place, with its `seq`. New findings take
sequence numbers above the log's last, placed right after the exchange that showed them.
Re-deriving a run recorded by today's code gives back its own readings (the CI corpus of real
agents' traffic holds it to that).

One reading can't be re-made exactly: which calls a `compact()` command caused. The live
recorder is told when the command is sent; the log keeps only the command's end. The calls
between the last reply and the logged compaction are taken to be its turn.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from gateway.log.events import (
    Asked,
    Blob,
    CanaryHit,
    CheckpointSaved,
    CompactionSeen,
    ErrorEvent,
    Evaluation,
    Event,
    EvidenceCheck,
    FactEdited,
    LLMExchange,
    MemoryCallFailed,
    MemoryCallSeen,
    MemoryResult,
    PhaseEntered,
    Replied,
    RunEnded,
    RunStart,
    Said,
    SessionChanged,
)
from gateway.log.vocabulary import ErrorKind, ErrorSource, SessionAction
from gateway.traffic.notices import RecorderNotices
from gateway.traffic.profile import TrafficProfile
from gateway.traffic.recorder import RawExchange, RunRecorder, bypass_warning, message_refs
from gateway.traffic.wire import LLMCall, ToolCall, Usage, parse_call
from persona.benchmark.model import Benchmark

# the events the recorder derives from traffic: replaced as a whole by a re-derivation
DERIVED_TYPES: tuple[type[Event], ...] = (
    CompactionSeen,
    MemoryCallSeen,
    MemoryCallFailed,
    MemoryResult,
    EvidenceCheck,
    CanaryHit,
)
DERIVED_WARNINGS = (ErrorKind.RECORDER_BYPASSED, ErrorKind.BACKGROUND_UNRECOGNISED)
_SOURCES = (
    "call_shape.py",
    "analysis.py",
    "recorder.py",
    "notices.py",
    "profile.py",
    "profiles.json5",
    "wire.py",
    "tool_results.py",
    "rederive.py",
)


@cache
def analyzer_identity() -> str:
    """A digest of the traffic rules: the analysis code, the profiles' patterns (the traffic
    profiles and the agent profiles that pick and extend them) and the evidence rule (the exact
    grader's `contains_expected`, in persona/grading/exact.py). Two readings of one run with the
    same identity are the same reading."""
    here = Path(__file__).parent
    root = here.parent.parent
    files = [here / name for name in _SOURCES]
    files += [*sorted((root / "adapters" / "profiles").glob("*.jsonc")), root / "persona" / "grading" / "exact.py"]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def is_derived(event: Event) -> bool:
    """Whether the recorder made `event` from the traffic (replaced by a re-derivation)."""
    return isinstance(event, DERIVED_TYPES) or (
        isinstance(event, ErrorEvent) and event.kind in DERIVED_WARNINGS
    )


def rebuilt_call(exchange: LLMExchange, blobs: dict[str, bytes], by_seq: dict[int, LLMExchange]) -> LLMCall:
    """The call as the recorder parsed it: its input from the blobs (messages through the
    `base` chain), its answer re-read from the recorded response body (tool call ids, server
    compactions, context edits) — or, without a body, from the fields the exchange kept."""
    stream = json.dumps({"stream": exchange.stream}).encode()
    body = blobs.get(exchange.response_ref, b"") if exchange.response_ref else b""
    call = (
        parse_call(exchange.path, stream, body, exchange.response_type) if body else LLMCall(api=exchange.api)
    )
    call.api = exchange.api
    call.model, call.stream, call.params = exchange.model, exchange.stream, dict(exchange.params)
    call.system = _text(blobs.get(exchange.system_ref, b"")) if exchange.system_ref else ""
    call.messages = [
        m for ref in message_refs(exchange, by_seq) if isinstance(m := _json(blobs.get(ref)), dict)
    ]
    tools = _json(blobs.get(exchange.tools_ref)) if exchange.tools_ref else []
    call.tools = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []
    kept = [
        ToolCall(str(c.get("name", "")), c.get("arguments"))
        for c in exchange.tool_calls
        if isinstance(c, dict)
    ]
    if [c.name for c in call.tool_calls] != [c.name for c in kept]:
        call.tool_calls = kept  # the body said something else (cut, unparsed): what was logged holds
    if not body:
        call.text = exchange.text
    usage = exchange.usage
    call.usage = Usage(
        int(usage.get("input", 0)),
        int(usage.get("output", 0)),
        int(usage.get("cache_read", 0)),
        int(usage.get("cache_write", 0)),
    )
    call.stop_reason = exchange.stop_reason
    call.warnings = list(exchange.warnings)
    return call


def _raw(exchange: LLMExchange) -> RawExchange:
    return RawExchange(
        method=exchange.method,
        path=exchange.path,
        request_headers=dict(exchange.request_headers),
        request_body=b"",
        status=exchange.status,
        response_headers={"content-type": exchange.response_type} if exchange.response_type else {},
        started=exchange.started,
        first_byte=exchange.started + exchange.ttfb if exchange.ttfb else 0.0,
        ended=exchange.started + exchange.duration if exchange.duration else 0.0,
        error=exchange.error,
    )


def _json(data: bytes | None) -> Any:
    try:
        return json.loads(data) if data else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


@dataclass
class Rederived:
    """A run's events with the traffic readings made again (`events`), and those readings alone
    (`derived`: each with the `seq` of the original event it follows, -1 for the log's start)."""

    events: list[Event]
    derived: list[tuple[int, Event]] = field(default_factory=list)
    identity: str = ""


def _compact_turns(events: list[Event]) -> set[int]:
    """The exchanges of each `compact()` command's turn: those between the last reply (or
    session change) and the logged compaction. A command refused before it was sent
    ("unsupported") had no turn."""
    turn: list[int] = []
    found: set[int] = set()
    for event in events:
        if isinstance(event, (Replied, Said, Asked, RunStart, CheckpointSaved)):
            turn = []
        elif isinstance(event, LLMExchange):
            turn.append(event.seq)
        elif isinstance(event, SessionChanged):
            if event.action is SessionAction.COMPACT and event.detail != "unsupported":
                found.update(turn)
            turn = []
    return found


class _Walk:
    """One pass over a log: a recorder per agent process, as the runner builds one at each start
    (primed by `RecorderNotices.replay` with the history so far: a fork's inherited teaching, then
    what this walk re-derived), told what the runner told the live one."""

    def __init__(
        self,
        events: list[Event],
        benchmark: Benchmark,
        profile: TrafficProfile,
        evidence: Callable[[str, str], bool] | None,
        inherited: list[Event],
    ) -> None:
        self.benchmark, self.profile, self.evidence = benchmark, profile, evidence
        self.inherited = [e for e in inherited if not isinstance(e, Blob)]
        self.blobs = {e.ref: e.data for e in inherited if isinstance(e, Blob)}
        self.blobs.update({e.ref: e.data for e in events if isinstance(e, Blob)})
        self.by_seq = {e.seq: e for e in events if isinstance(e, LLMExchange)}
        self.compacting = _compact_turns(events)
        self.next_seq = max((e.seq for e in events), default=0) + 1
        self.out: list[Event] = []
        self.derived: list[tuple[int, Event]] = []
        self.anchor: Event | None = None  # the original event the next derived one follows
        self.current: LLMExchange | None = None  # the exchange being re-read
        self.started = False  # this process's RunStart seen
        self.bypass_checked, self.llm_url, self.in_compact = True, "", False
        self.recorder, self.notices = self._fresh()

    def _fresh(self) -> tuple[RunRecorder, RecorderNotices]:
        recorder = RunRecorder(self._log, self.profile, known_blobs=self.blobs, evidence=self.evidence)
        notices = RecorderNotices(recorder, self.benchmark)
        notices.replay([*self.inherited, *self.out])
        self.started, self.in_compact = False, False
        return recorder, notices

    def _log(self, event: Event) -> Event:
        """What the recorder logs: an exchange replaces the one being re-read (its seq and time);
        a finding takes the next free seq and its anchor's time."""
        if isinstance(event, Blob):
            return event
        if isinstance(event, ErrorEvent) and event.source is ErrorSource.AGENT_LLM:
            return event  # a failed call is one by its status, whatever the rules: the log's own stands
        if isinstance(event, LLMExchange) and self.current is not None:
            event = dataclasses.replace(
                self.current,
                kind=event.kind,
                question_id=event.question_id,
                decided_by=event.decided_by,
                input_tokens=event.input_tokens,
            )
        else:
            event.seq, self.next_seq = self.next_seq, self.next_seq + 1
            event.ts = self.anchor.ts if self.anchor is not None else 0.0
        self.out.append(event)
        self.derived.append((self.anchor.seq if self.anchor is not None else -1, event))
        return event

    def run(self, events: list[Event]) -> None:
        for event in events:
            if is_derived(event):
                continue
            if isinstance(event, RunStart) and self.started:  # a process killed, then a new one
                self.recorder, self.notices = self._fresh()
            if isinstance(event, LLMExchange):
                self._exchange(event)
            elif isinstance(event, RunEnded):
                if note := self.recorder.background_note():  # logged before the end, as the runner does
                    self._log(
                        ErrorEvent(
                            source=ErrorSource.RUNNER, kind=ErrorKind.BACKGROUND_UNRECOGNISED, message=note
                        )
                    )
                self._keep(event)
                self.recorder, self.notices = self._fresh()
            else:
                self._keep(event)
                self._notice(event)

    def _keep(self, event: Event) -> None:
        self.out.append(event)
        self.anchor = event

    def _exchange(self, exchange: LLMExchange) -> None:
        if exchange.seq in self.compacting and not self.in_compact:
            self.recorder.turn_started()
            self.in_compact = True
        self.current = self.anchor = exchange
        self.recorder.record_call(rebuilt_call(exchange, self.blobs, self.by_seq), _raw(exchange))
        self.current = None

    def _notice(self, event: Event) -> None:
        """What the runner told the live recorder when it logged `event`."""
        recorder, notices = self.recorder, self.notices
        match event:
            case RunStart():
                self.started = True
                recorder.session_changed()  # a (re)started agent: its first call is no compaction
                self.bypass_checked, self.llm_url = False, event.llm_url
            case PhaseEntered():
                notices.enter_phase(event.index)
            case FactEdited():
                notices.fact_edited(event.old, event.new)
            case Asked():
                notices.question_started(event.question_id, event.text, event.expected, event.tags)
                recorder.turn_started(event.text)
            case Said():
                recorder.turn_started(event.text)
            case Replied():
                recorder.turn_ended()
                if not self.bypass_checked and self.llm_url:
                    self.bypass_checked = True
                    if recorder.model_calls == 0:
                        self._log(bypass_warning(self.llm_url))
            case Evaluation():
                notices.question_finished()
            case SessionChanged() if event.action is SessionAction.NEW_SESSION:
                notices.session_changed()
            case SessionChanged() if event.action is SessionAction.COMPACT:
                recorder.turn_ended()
                self.in_compact = False
            case CheckpointSaved():
                notices.session_changed()  # the agent was restarted around its archive


def rederive(
    events: list[Event],
    benchmark: Benchmark,
    profile: TrafficProfile,
    *,
    evidence: Callable[[str, str], bool] | None = None,
    inherited: list[Event] | None = None,
) -> Rederived:
    """`events` (a run log's, header excluded) with today's traffic readings.

    `benchmark`: the run's as played (its phases revoke canaries, its deleted facts arm them);
    `evidence(expected, history)`: the evidence rule (the exact grader's `contains_expected`);
    `inherited`: a fork's events from its parent's log up to its checkpoint (its recorder starts
    from them, as the live one did, and its exchanges may refer to their blobs)."""
    walk = _Walk(events, benchmark, profile, evidence, inherited or [])
    walk.run(events)
    return Rederived(walk.out, walk.derived, analyzer_identity())
