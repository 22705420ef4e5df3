"""A run's LLM-traffic recorder: raw exchanges in, typed events out.

The mitmproxy addon (`hub.py`) hands each finished exchange to the run's `RunRecorder` as a
`RawExchange` — plain bytes and headers, nothing of mitmproxy — so everything here is testable
without a proxy. Each exchange is redacted, parsed, stored content-addressed (each distinct
message, system prompt, tool list and response body once, as a `blob`), analysed, and logged
as an `llm_exchange` followed by what it showed: compactions, memory calls, the evidence check
of the question being asked, canary hits.

Fail closed: if the log can't be written, the recorder turns unhealthy and stays so; the addon
then refuses the agent's further LLM calls, and the runner stops the run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from gateway.log.events import (
    Blob,
    CanaryHit,
    CompactionSeen,
    ErrorEvent,
    Event,
    EvidenceCheck,
    LLMExchange,
    MemoryCallFailed,
    MemoryCallSeen,
    MemoryResult,
)
from gateway.log.redact import DEFAULT, Redactor
from gateway.log.runlog import RunLogWriteError
from gateway.log.scrub import scrub
from gateway.log.vocabulary import CallKind, ErrorKind, ErrorSource
from gateway.traffic.analysis import CallAnalysis, TrafficAnalyzer, history_before
from gateway.traffic.call_shape import answers, calls_a_tool, last_user_text
from gateway.traffic.profile import TrafficProfile
from gateway.traffic.tool_results import result_items, tool_results
from gateway.traffic.wire import UNKNOWN, LLMCall, parse_call, text_of

type Log = Callable[[Event], Event]
type Echo = Callable[[str], None]


@dataclass
class RawExchange:
    method: str
    path: str
    request_headers: dict[str, str]
    request_body: bytes
    status: int = 0
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: bytes = b""
    started: float = 0.0
    first_byte: float = 0.0
    ended: float = 0.0
    error: str = ""

    @property
    def response_type(self) -> str:
        return next((v for k, v in self.response_headers.items() if k.lower() == "content-type"), "")


@dataclass
class OpenQuestion:
    id: str
    text: str
    expected: str
    abstain: bool
    evidence_checked: bool = False


MAX_PENDING_RESULTS = 256  # memory calls remembered until their result comes back
PROBE_PATHS = ("/models", "/api/tags", "/api/show", "/props", "/version", "/health")


def is_probe(raw: RawExchange) -> bool:
    """A model-listing or health probe (agents send several at start), not a model call."""
    path = raw.path.split("?", 1)[0].rstrip("/")
    return raw.method == "GET" or path.endswith(PROBE_PATHS) or "/models/" in path


def failure_of(raw: RawExchange) -> tuple[ErrorKind, str] | None:
    """(kind, what happened) when a model call failed — the agent got no model answer from it:
    no connection or a cut stream, a refusal (4xx), rate limiting (429), an overloaded or broken
    provider (529, 5xx). None for a call that was answered."""
    if raw.error:
        return (ErrorKind.STREAM_CUT if raw.status else ErrorKind.NO_CONNECTION), raw.error
    if raw.status == 429:
        return ErrorKind.RATE_LIMITED, "HTTP 429 (rate limited)"
    if raw.status == 529:
        return ErrorKind.OVERLOADED, "HTTP 529 (overloaded)"
    if raw.status >= 500:
        return ErrorKind.SERVER_ERROR, f"HTTP {raw.status}"
    if raw.status >= 400:
        return ErrorKind.REFUSED, f"HTTP {raw.status}"
    return None


@dataclass
class Turn:
    """The model calls of one persona message's turn, as far as the recorder saw them."""

    calls: int = 0
    failures: list[str] = field(default_factory=list)
    last_failed: bool = False
    ended: bool = False  # the reply came back: calls from here to the next message are the agent's own
    message: str = ""  # the persona's message the turn answers ("" when not a message: a compaction)


def cleaned(call: LLMCall, redactor: Redactor = DEFAULT) -> LLMCall:
    """The call as it may be analysed and stored, made so once: lone surrogates (from JSON
    escapes in its bodies) replaced — noted in its warnings — so a hostile body can't make the
    log unwritable (and the proxy answer 503), and secrets removed, by field name and by shape."""
    fields: dict[str, Any] = {}
    total = 0
    for name in ("model", "system", "messages", "tools", "params", "text", "stop_reason"):
        value, found = scrub(getattr(call, name))
        fields[name] = redactor.body(value)
        total += found
    tool_calls = []
    for tc in call.tool_calls:
        (name, a), (arguments, b) = scrub(tc.name), scrub(tc.arguments)
        tool_calls.append(replace(tc, name=name, arguments=redactor.body(arguments)))
        total += a + b
    notes = [f"{total} lone surrogate code point(s) in the call's bodies replaced by U+FFFD"] if total else []
    warnings = [redactor.text(w) for w in call.warnings] + notes
    return replace(call, **fields, tool_calls=tool_calls, warnings=warnings)


def current_turn_text(call: LLMCall) -> str:
    """The user side of the turn the call is in: every user message after the agent's last
    finished reply (an assistant message with text and no tool call). A background prompt is
    found in it also when context follows it (OpenClaw's internal-context block) or when the
    agent is a tool call into it (Hermes' review writing memories)."""
    texts: list[str] = []
    for m in reversed(call.messages):
        if m.get("role") == "assistant" and text_of(m.get("content")).strip() and not calls_a_tool(m):
            break
        if m.get("role") == "user":
            texts.append(text_of(m.get("content")))
    return "\n".join(reversed(texts))


def bypass_warning(llm_url: str) -> ErrorEvent:
    """The warning logged when the agent's first reply came and none of its model calls reached
    the recorder at `llm_url` (the runner, at the first reply; a re-derivation, likewise)."""
    message = (
        f"the agent replied, but none of its LLM calls reached the recorder: point the agent's "
        f"LLM base URL at {llm_url} — until then its compactions and memory calls are not observable"
    )
    return ErrorEvent(source=ErrorSource.RUNNER, kind=ErrorKind.RECORDER_BYPASSED, message=message)


def blob_ref(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RunRecorder:
    def __init__(
        self,
        log: Log,
        profile: TrafficProfile,
        *,
        known_blobs: Iterable[str] = (),
        evidence: Callable[[str, str], bool] | None = None,
        echo: Echo | None = None,
        log_check: Callable[[], None] | None = None,
        secrets: Iterable[str] = (),
    ) -> None:
        """`evidence(expected, history)` says whether an expected answer is in a text;
        `log_check()` raises `RunLogWriteError` when the log can't take an exchange now (asked
        before a streamed answer starts, so it is refused rather than cut halfway)."""
        self._log = log
        self._log_check = log_check
        self.profile = profile
        self.redactor = Redactor(frozenset(profile.secret_names), values=secrets)
        self.analyzer = TrafficAnalyzer(profile)
        self.known_blobs = set(known_blobs)
        self.evidence = evidence
        self.echo = echo
        self.question: OpenQuestion | None = None
        self.phase = -1
        self.failure: str | None = None
        self.exchanges = 0
        self.model_calls = 0  # exchanges that were model calls, not probes
        self.in_flight = 0  # calls the proxy has forwarded and not yet handed over
        self.turn = Turn(ended=True)
        self.background_calls = 0  # calls the profile's background patterns recognised
        self.unknown_shape_calls = 0  # calls not answering the persona's message that no pattern names
        self.unknown_shape_example = ""  # the first one's last user text, shortened
        self.unexplained_calls = 0  # other calls outside any persona turn
        self.previous_refs: tuple[int, list[str]] = (-1, [])  # the last exchange's seq and message refs
        # memory calls whose result hasn't come back yet: tool call id → the call's event seq
        self.pending_memory: dict[str, int] = {}

    @property
    def healthy(self) -> bool:
        return self.failure is None

    def ready(self) -> bool:
        """Whether a streamed answer may start: the recorder is healthy and the log can take it."""
        if self.failure is None and self._log_check is not None:
            try:
                self._log_check()
            except RunLogWriteError as exc:
                self.failure = str(exc)
        return self.failure is None

    def refused(self, method: str, path: str) -> None:
        """An answer was kept from the agent because the log can't be written (said on the
        `marathon proxy` console; a run stops on the failure itself)."""
        if self.echo:
            self.echo(
                f"REFUSED {method} {self.redactor.text(path)}: the log can't be written ({self.failure})"
            )

    # -- what the runner tells the recorder ------------------------------------------------

    def question_started(self, question_id: str, text: str, expected: str, abstain: bool) -> None:
        self.question = OpenQuestion(question_id, text, expected, abstain)

    def question_finished(self) -> None:
        self.question = None

    def session_changed(self) -> None:
        self.analyzer.reset_context()

    def turn_started(self, message: str = "") -> None:
        """A persona message is about to be sent: the calls from here on are its turn's, and a
        call that doesn't answer `message` is the agent's own (`call_shape`)."""
        self.turn = Turn(message=message)

    def turn_ended(self) -> None:
        """The reply to the persona's message came back."""
        self.turn.ended = True

    def background_note(self) -> str | None:
        """Said once at a run's end: calls of a shape we don't know — not answering the
        persona's message, and no background pattern names them (recorded as the agent's own,
        never counted against a question); or calls outside any persona turn while no
        background pattern ever matched (background work the profile may not know, counted as
        the conversation's)."""
        notes = []
        if self.unknown_shape_calls:
            notes.append(
                f"{self.unknown_shape_calls} model call(s) did not answer the persona's message — their "
                f"conversation ended in something else (the first: {self.unknown_shape_example!r}) — and no "
                f"background pattern of the profile {self.profile.name!r} names them: recorded as the agent's "
                "own work, never counted against a question; add their prompt to `llm.background` to label them"
            )
        if self.unexplained_calls and not self.background_calls:
            patterns = (
                f"the profile {self.profile.name!r}'s background patterns"
                if self.profile.background
                else f"the profile {self.profile.name!r} has no background patterns and"
            )
            notes.append(
                f"{self.unexplained_calls} model call(s) came between a reply and the next message, and "
                f"{patterns} never matched a call: if the agent does background work (a heartbeat, a review), "
                "its calls and memory writes were counted as the conversation's — add its prompt to `llm.background`"
            )
        return "; ".join(notes) or None

    def turn_failure(self) -> str | None:
        """Why the turn's answer came out of a failed model call — the turn's last model call
        failed — or None (no call seen, or the agent got an answer in the end)."""
        if not self.turn.last_failed:
            return None
        tried = len(self.turn.failures)
        return f"{tried} failed model call{'s' if tried > 1 else ''} in this turn, the last: {self.turn.failures[-1]}"

    def arm_canary(self, marker: str) -> None:
        self.analyzer.arm_canary(marker)

    # -- recording -------------------------------------------------------------------------

    def record(self, raw: RawExchange) -> None:
        """Log one exchange and its findings. Raises `RunLogWriteError` (and stays unhealthy)
        when the log can't be written."""
        if self.failure:
            raise RunLogWriteError(self.failure)
        try:
            self._record(raw)
        except RunLogWriteError as exc:
            self.failure = str(exc)
            raise

    def _blob(self, data: bytes) -> str:
        ref = blob_ref(data)
        if ref not in self.known_blobs:
            self._log(Blob(ref=ref, data=data))
            self.known_blobs.add(ref)
        return ref

    def _json_blob(self, value: Any) -> str:
        return self._blob(json.dumps(value, sort_keys=True, ensure_ascii=False).encode())

    def _record(self, raw: RawExchange) -> None:
        call = cleaned(
            parse_call(raw.path, raw.request_body, raw.response_body, raw.response_type), self.redactor
        )
        self.record_call(call, raw)

    def record_call(self, call: LLMCall, raw: RawExchange) -> LLMExchange:
        """Analyse and log one parsed, cleaned call (`raw` gives its method, path, status,
        headers, timing and bodies): the live path after `cleaned(parse_call(…))`, and the
        re-derivation of a recorded run (`gateway.traffic.rederive`), which hands the call rebuilt
        from the log. Returns the logged exchange."""
        probe = is_probe(raw)
        pattern = None if probe else self.profile.background_pattern(call.system, current_turn_text(call))
        labelled = pattern is not None
        by_shape = (
            not probe
            and not labelled
            and not answers(call, self.turn.message, self.profile.users_words)
            and self.analyzer.classify(call) == CallKind.ORDINARY  # only for a call that doesn't answer
        )
        if by_shape:
            self.unknown_shape_calls += 1
            self.unknown_shape_example = self.unknown_shape_example or " ".join(
                self.profile.users_words(last_user_text(call, self.profile.users_words) or "").split()
            )[:120]
        background = labelled or by_shape
        skipped = CallKind.PROBE if probe else CallKind.BACKGROUND if background else None  # not the conversation
        if skipped is not None:  # no compaction read from it; a background call's memory work is its own
            analysis = CallAnalysis(kind=skipped, memory_calls=[] if probe else self.analyzer.memory_calls(call))
        else:
            analysis = self.analyzer.observe(call)
        if labelled:
            self.background_calls += 1
        elif not probe and self.turn.ended:
            self.unexplained_calls += 1  # after the reply, before the next message: the agent's own
        question = None if background else self.question
        refs = [self._json_blob(m) for m in call.messages]
        base, previous = self.previous_refs
        shared = 0
        for mine, theirs in zip(refs, previous, strict=False):
            if mine != theirs:
                break
            shared += 1
        exchange = LLMExchange(
            base=base if shared else -1,
            base_len=shared,
            api=call.api,
            method=raw.method,
            path=self.redactor.text(raw.path),
            status=raw.status,
            model=call.model,
            stream=call.stream,
            kind=analysis.kind,
            system_ref=self._blob(call.system.encode()) if call.system else "",
            message_refs=refs[shared:],
            tools_ref=self._json_blob(call.tools) if call.tools else "",
            tool_names=call.tool_names,
            params=call.params,
            request_headers={
                k.lower(): str(self.redactor.value(v, k)) for k, v in raw.request_headers.items()
            },
            request_ref=self._blob(self.redactor.bytes(raw.request_body))
            if call.api == UNKNOWN and raw.request_body
            else "",
            response_ref=self._blob(self.redactor.bytes(raw.response_body)) if raw.response_body else "",
            response_type=raw.response_type,
            text=call.text,
            tool_calls=[{"name": tc.name, "arguments": tc.arguments} for tc in call.tool_calls],
            usage={
                "input": call.usage.input,
                "output": call.usage.output,
                "cache_read": call.usage.cache_read,
                "cache_write": call.usage.cache_write,
            },
            input_tokens=analysis.input_tokens,
            stop_reason=call.stop_reason,
            started=raw.started,
            ttfb=max(0.0, raw.first_byte - raw.started) if raw.first_byte else 0.0,
            duration=max(0.0, raw.ended - raw.started) if raw.ended else 0.0,
            question_id=question.id if question else None,
            phase=self.phase,
            warnings=call.warnings,
            error=self.redactor.text(raw.error),
            decided_by="probe" if probe else f"pattern:{pattern}" if labelled else "shape" if by_shape else "",
        )
        seq = exchange.seq = self._log(exchange).seq
        if self.pending_memory and not probe:
            self._check_results(call)
        self.previous_refs = (seq, refs)
        self.exchanges += 1
        if not probe and not background:
            self._count_call(raw, seq)
        qid = question.id if question else None
        for c in analysis.compactions:
            self._log(
                CompactionSeen(
                    kind=c.kind,
                    tokens_before=c.tokens_before,
                    tokens_after=c.tokens_after,
                    exchange=seq,
                    phase=self.phase,
                    question_id=qid,
                )
            )
            what = "compaction or a new session" if c.kind == "generic" else "compaction"
            self._say(f"{what} ({c.kind}): {c.tokens_before} → {c.tokens_after} tokens")
        for m in analysis.memory_calls:
            seen = self._log(
                MemoryCallSeen(
                    tool=m.tool,
                    operation=m.operation,
                    target=m.target,
                    exchange=seq,
                    question_id=qid,
                    background=background,
                )
            )
            if m.call_id:
                self.pending_memory[m.call_id] = seen.seq
                while len(self.pending_memory) > MAX_PENDING_RESULTS:  # results that never came back
                    del self.pending_memory[next(iter(self.pending_memory))]
            self._say(
                f"memory {m.operation}: {m.tool}"
                + (f" {m.target}" if m.target else "")
                + (f"  [question {qid}]" if qid else "")
                + ("  [background]" if background else "")
            )
        for marker in analysis.canary_hits:
            self._log(CanaryHit(marker=marker, exchange=seq, question_id=qid))
            self._say(f"CANARY {marker!r} is back in the agent's input")
        if question and not question.evidence_checked and not question.abstain and self.evidence:
            history = history_before(call, question.text)
            if history is not None:
                question.evidence_checked = True
                self._log(
                    EvidenceCheck(
                        question_id=question.id,
                        in_context=self.evidence(question.expected, history),
                        exchange=seq,
                    )
                )
        for warning in call.warnings:
            if not probe:
                self._say(f"warning: {warning}")
        return exchange

    def _check_results(self, call: LLMCall) -> None:
        """The memory calls whose results this request carries: one the tool refused is logged
        as failed (made, but nothing stored or found)."""
        for call_id, result in tool_results(call.api, call.messages).items():
            seq = self.pending_memory.pop(call_id, None)
            if seq is not None:  # what it gave the model: returned-item parity (paper 003)
                self._log(MemoryResult(call=seq, items=result_items(result.text), chars=len(result.text)))
            if seq is not None and result.failed:
                detail = self.redactor.text(" ".join(result.text.split())[:200])
                self._log(MemoryCallFailed(call=seq, detail=detail))
                self._say(f"memory call failed: {detail}")

    def _count_call(self, raw: RawExchange, seq: int) -> None:
        self.model_calls += 1
        self.turn.calls += 1
        failed = failure_of(raw)
        self.turn.last_failed = failed is not None
        if failed is None:
            return
        kind, what = failed
        self.turn.failures.append(what)
        where = f"LLM call #{seq} ({raw.method} {self.redactor.text(raw.path)})"
        self._log(ErrorEvent(source=ErrorSource.AGENT_LLM, kind=kind, message=f"{where}: {what}"))
        self._say(f"the agent's LLM call failed: {what}")

    def _say(self, line: str) -> None:
        if self.echo:
            self.echo(line)


def message_refs(exchange: LLMExchange, by_seq: dict[int, LLMExchange]) -> list[str]:
    """The full list of an exchange's message refs, following its `base` chain."""
    chain = [exchange]
    while chain[-1].base >= 0 and chain[-1].base in by_seq and len(chain) <= len(by_seq):
        chain.append(by_seq[chain[-1].base])
    refs: list[str] = []
    for link in reversed(chain):
        refs = refs[: link.base_len] + link.message_refs if link.base >= 0 else list(link.message_refs)
    return refs
