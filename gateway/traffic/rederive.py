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
from collections.abc import Callable, Iterable
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
from gateway.traffic.profile import TrafficProfile
from gateway.traffic.recorder import RawExchange, RunRecorder, Turn, bypass_warning, message_refs
from gateway.traffic.wire import LLMCall, ToolCall, Usage, parse_call
from persona.benchmark.model import DELETED_MARKERS

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
    "profile.py",
    "profiles.json5",
    "wire.py",
    "tool_results.py",
    "rederive.py",
)


@cache
def analyzer_identity() -> str:
    """A digest of the traffic rules: the analysis code and the profiles' patterns. Two readings
    of one run with the same identity are the same reading."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in _SOURCES:
        digest.update(name.encode() + b"\0" + (here / name).read_bytes() + b"\0")
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
    session change) and the logged compaction."""
    turn: list[int] = []
    found: set[int] = set()
    for event in events:
        if isinstance(event, (Replied, Said, Asked, RunStart, CheckpointSaved)):
            turn = []
        elif isinstance(event, LLMExchange):
            turn.append(event.seq)
        elif isinstance(event, SessionChanged):
            if event.action is SessionAction.COMPACT:
                found.update(turn)
            turn = []
    return found


def rederive(
    events: list[Event],
    profile: TrafficProfile,
    *,
    canaries: Iterable[str] = (),
    revoked: dict[int, list[str]] | None = None,
    evidence: Callable[[str, str], bool] | None = None,
    inherited_blobs: dict[str, bytes] | None = None,
) -> Rederived:
    """`events` (a run log's, header excluded) with today's traffic readings.

    `canaries`: the benchmark's declared canaries (a deleted fact holding one arms it);
    `revoked`: the markers each phase index revokes; `evidence(expected, history)`: the
    evidence rule (the run's grader's `contains_expected`); `inherited_blobs`: blobs a fork's
    exchanges may refer to from its parent's log."""
    blobs: dict[str, bytes] = dict(inherited_blobs or {})
    blobs.update({e.ref: e.data for e in events if isinstance(e, Blob)})
    by_seq = {e.seq: e for e in events if isinstance(e, LLMExchange)}
    next_seq = max((e.seq for e in events), default=0) + 1
    out: list[Event] = []
    derived: list[tuple[int, Event]] = []
    anchor = -1  # the original event the next derived one follows
    current: LLMExchange | None = None

    def log(event: Event) -> Event:
        nonlocal next_seq
        if isinstance(event, Blob):
            return event
        if isinstance(event, ErrorEvent) and event.source is ErrorSource.AGENT_LLM:
            return event  # a failed call is one by its status, whatever the rules: the log's own stands
        if isinstance(event, LLMExchange) and current is not None:
            event = dataclasses.replace(
                current,
                kind=event.kind,
                question_id=event.question_id,
                decided_by=event.decided_by,
                input_tokens=event.input_tokens,
            )
        else:
            event.seq, next_seq = next_seq, next_seq + 1
        out.append(event)
        derived.append((anchor, event))
        return event

    recorder = RunRecorder(log, profile, known_blobs=blobs, evidence=evidence)
    compacting = _compact_turns(events)
    markers = list(canaries)
    bypass_checked, llm_url, in_compact = True, "", False
    for event in events:
        if is_derived(event):
            continue
        if isinstance(event, LLMExchange):
            if event.seq in compacting and not in_compact:
                recorder.turn_started()
                in_compact = True
            current, anchor = event, event.seq
            recorder.record_call(rebuilt_call(event, blobs, by_seq), _raw(event))
            current = None
            continue
        previous, anchor = anchor, event.seq
        out.append(event)
        match event:
            case RunStart():
                recorder.session_changed()  # a (re)started agent: its first call is no compaction
                recorder.turn = Turn(ended=True)
                bypass_checked, llm_url = False, event.llm_url
            case PhaseEntered():
                recorder.phase = event.index
                for marker in (revoked or {}).get(event.index, []):
                    recorder.arm_canary(marker)
            case FactEdited() if event.old and event.new.strip() in DELETED_MARKERS:
                for marker in markers:
                    if marker in event.old:
                        recorder.arm_canary(marker)
            case Asked():
                recorder.question_started(
                    event.question_id, event.text, event.expected, "abstain" in event.tags
                )
                recorder.turn_started(event.text)
            case Said():
                recorder.turn_started(event.text)
            case Replied():
                recorder.turn_ended()
                if not bypass_checked and llm_url:
                    bypass_checked = True
                    if recorder.model_calls == 0:
                        log(bypass_warning(llm_url))
            case Evaluation():
                recorder.question_finished()
            case SessionChanged() if event.action is SessionAction.NEW_SESSION:
                recorder.session_changed()
            case SessionChanged() if event.action is SessionAction.COMPACT:
                recorder.turn_ended()
                in_compact = False
            case CheckpointSaved():
                recorder.session_changed()
            case RunEnded():
                out.pop()  # the note comes before the end, as the runner logs it
                anchor = previous
                if note := recorder.background_note():
                    log(
                        ErrorEvent(
                            source=ErrorSource.RUNNER, kind=ErrorKind.BACKGROUND_UNRECOGNISED, message=note
                        )
                    )
                out.append(event)
                anchor = event.seq
                _reset_counts(recorder)
    return Rederived(out, derived, analyzer_identity())


def _reset_counts(recorder: RunRecorder) -> None:
    """What a new process's recorder starts without (the live one is built anew at each start)."""
    recorder.background_calls = recorder.unknown_shape_calls = recorder.unexplained_calls = 0
    recorder.unknown_shape_example = ""
