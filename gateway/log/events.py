"""The typed records of a run log (design §6).

The log on disk is a stream of msgpack maps; these dataclasses are what code reads and writes.
Each event class has a `type` tag; its fields are the map's keys (plus `seq` and `ts`, which
the writer stamps). The table of tags and the reading of a record are `gateway.log.records`; a
reader meeting a tag it doesn't know keeps it as `UnknownEvent` rather than failing, so older
tools can still show newer logs' known parts. Kinds are typed with `gateway.log.vocabulary`.

Callers may rely on: `seq` increasing by one from 0 within a log as written; `ts` being Unix
seconds. A log read with a `rescore --traffic` re-derivation in place
(gateway/report/traffic_overlay.py) carries the re-derived findings with `seq`s above the
log's last, each right after the record it follows, with that record's `ts`.

"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from gateway.log.field_types import enum_fields
from gateway.log.run_meta import RunMeta
from gateway.log.vocabulary import (
    CallKind,
    ErrorKind,
    ErrorSource,
    Purpose,
    SessionAction,
    SlipKind,
    TerminationReason,
)
from persona.drivers.actions import Slip
from persona.outcome import most

MAGIC = "marathonbench.events"
# 2: each record framed with a CRC (gateway/log/frames.py); 3: a slip names its fact and question
FORMAT_VERSION = 3


@dataclass
class Event:
    type: ClassVar[str] = ""
    seq: int = field(default=-1, kw_only=True)
    ts: float = field(default=0.0, kw_only=True)

    def __post_init__(self) -> None:
        """A kind given as its value (`source="agent"`) becomes its member, so `is` and a
        member's properties work on every event, however it was built."""
        for name, enum in enums_of(type(self)).items():
            value = getattr(self, name)
            if type(value) is not enum:
                setattr(self, name, enum(value))

    def to_record(self) -> dict[str, Any]:
        record = {"t": self.type}
        record.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})
        return record


@dataclass
class Header(Event):
    """First record of every log: what ran, with which tool and format."""

    type: ClassVar[str] = "header"
    magic: str = MAGIC
    format: int = FORMAT_VERSION
    tool_version: str = ""
    run_id: str = ""
    created: float = 0.0
    benchmark: dict[str, Any] = field(default_factory=dict)
    persona: dict[str, Any] = field(default_factory=dict)
    agent: dict[str, Any] = field(default_factory=dict)
    # where the run sits in a matrix: config run id, repeat, rung; experiment, task, pair, variant
    meta: dict[str, Any] = field(default_factory=dict)
    # a fork: {run, checkpoint, seq, state_hash, archive_sha256} of the checkpoint it started from;
    # the parent's events up to `seq` are this run's inherited prefix (gateway/run/lineage.py)
    parent: dict[str, Any] = field(default_factory=dict)
    # what else defines the run: limits, correctness rule, persona and its prompt's hash, grader
    # and judge (gateway/run/definition.py); {} in logs from before it was logged
    defines: dict[str, Any] = field(default_factory=dict)

    @property
    def run_meta(self) -> RunMeta:
        """`meta` typed, its defaults decided once (gateway/log/run_meta.py)."""
        return RunMeta.of(self.meta)

    @property
    def question_count(self) -> int:
        """How many questions the run plays. `benchmark.questions` is their count — or, in a
        fork that plays some of them only (an isolated exam), their ids."""
        questions = self.benchmark.get("questions", 0)
        if isinstance(questions, list):
            return len(questions)
        return questions if isinstance(questions, int) and not isinstance(questions, bool) else 0


@dataclass
class RunStart(Event):
    """Each start of the runner on this log; `resumed` when earlier events existed."""

    type: ClassVar[str] = "run_start"
    resumed: bool = False
    replayed_events: int = 0
    session_id: str = ""
    llm_url: str = ""  # the recorder's listener, when the agent's LLM traffic is recorded
    pid: int = 0  # the runner's process: a watcher tells a live run from a killed one by it
    node: str = ""  # the cluster node the runner ran on ("" for the machine holding the log)
    # the agent's state folder as this start found it: its sha256 (a fresh run: the snapshot's,
    # or an empty folder's), or "unknown (why)" for an agent whose state we don't hold
    state: str = ""
    restored: bool = False  # a fork's start that restored its checkpoint (`state` is then its hash)
    # the persona's window settings (`context_tokens`, `compaction`) this start changed from the
    # header's: a resume may (the persona's model got a larger window); {} when unchanged
    persona_window: dict[str, Any] = field(default_factory=dict)


@dataclass
class PhaseEntered(Event):
    type: ClassVar[str] = "phase"
    index: int = 0
    chapter: str = ""
    title: str = ""
    require_all_facts: list[str] = field(default_factory=list)


@dataclass
class Said(Event):
    """A persona message sent to the agent, and why (`purpose`).

    `resent` marks a message re-sent on resume because no reply was logged before a crash.
    """

    type: ClassVar[str] = "say"
    text: str = ""
    purpose: Purpose = Purpose.LINE
    fact_ids: list[str] = field(default_factory=list)
    question_id: str | None = None
    resent: bool = False


@dataclass
class Asked(Event):
    """A question of the exam sent to the agent (attempt 2 = after the search-memory nudge)."""

    type: ClassVar[str] = "question"
    question_id: str = ""
    text: str = ""
    expected: str = ""
    tags: list[str] = field(default_factory=list)
    resent: bool = False


@dataclass
class Replied(Event):
    """The agent's settled reply to the last `say` / `question`."""

    type: ClassVar[str] = "reply"
    text: str = ""
    elapsed: float = 0.0


@dataclass
class FactTold(Event):
    type: ClassVar[str] = "fact_told"
    file: str = ""
    fact_id: str = ""


@dataclass
class FactEdited(Event):
    """A live fact copy changed (`new` of `—` = deleted). Benchmark files never change."""

    type: ClassVar[str] = "fact_edit"
    file: str = ""
    fact_id: str = ""
    old: str | None = None
    new: str = ""


@dataclass
class SessionChanged(Event):
    """A new session (`detail`: its id) or a compaction asked of the agent. `reply`: what the
    agent answered the session command (a Telegram bot's answer to `/new`), when it answers."""

    type: ClassVar[str] = "session"
    action: SessionAction = SessionAction.NEW_SESSION
    detail: str = ""
    reply: str = ""


@dataclass
class CheckpointSaved(Event):
    """The agent's state folder archived between two settled turns (`bench.checkpoint`): runs
    fork from it. `state_hash` is the folder's content hash (`folder_hash`), `archive` the
    archive's path inside the run folder, `archive_sha256` its bytes' digest, `bytes` its size.
    `state_bytes` and `members` are what restoring it writes (the bound a restore holds it to;
    0 in logs older than them), `left_out` what the profile says is not state (caches, temp)."""

    type: ClassVar[str] = "checkpoint"
    name: str = ""
    state_hash: str = ""
    archive: str = ""
    archive_sha256: str = ""
    bytes: int = 0
    state_bytes: int = 0
    members: int = 0
    left_out: list[str] = field(default_factory=list)


@dataclass
class Evaluation(Event):
    """The final grade of one question (written once per question)."""

    type: ClassVar[str] = "evaluation"
    question_id: str = ""
    score: float = 0.0
    reason: str = ""
    attempts: int = 1  # 2: the try after the retry rule's nudge counts (its grade ×0.5 is `score`)
    first_score: float = 0.0
    answer: str = ""
    grader: str = ""
    # False: `score` is the grader's best guess, not a verdict (the exact grader abstained, the
    # reason says why): the question is unresolved and no report states a confident mean over it
    certain: bool = True
    # where an unresolved grade can lie, when known better than 0…10 (…5 after a nudge): an
    # unsure never-told reading spans the first try's grade and the nudged one's
    low: float | None = None
    high: float | None = None
    # the exact grader's rule that decided the counted try (persona/grading/rules.py) and the
    # rewrites applied to the answer before matching; "" and [] from a judge, or a log from before
    decided_by: str = ""
    rewrites: list[str] = field(default_factory=list)

    def bounds(self) -> tuple[float, float]:
        """The grade itself when certain; else the least and most it can be."""
        if self.certain:
            return (self.score, self.score)
        top = most(self.attempts)
        return (0.0 if self.low is None else self.low, top if self.high is None else self.high)


@dataclass
class ErrorEvent(Event):
    """Something went wrong: whose failure (`source`), what kind, and the words. `agent-llm`:
    a call of the agent to its own model failed (the recorder saw it: no answer, a 5xx,
    429/529, a cut stream), or an answer came out of such a call. Agent and agent-llm errors
    are reported apart from memory failures."""

    type: ClassVar[str] = "error"
    source: ErrorSource = ErrorSource.RUNNER
    kind: ErrorKind = ErrorKind.ADAPTER_ERROR
    message: str = ""


@dataclass
class AgentInitiated(Event):
    """Text the agent sent on its own — not a reply to a persona message (a heartbeat, a
    greeting, a reminder). Shown in the report and the viewer; never graded. `why`: how it was
    told apart from a reply."""

    type: ClassVar[str] = "agent_initiated"
    text: str = ""
    why: str = ""


@dataclass
class LateReply(Event):
    """A reply that came after the runner had given up waiting for it (a timeout): logged
    against its own message (`answers`, that message's text), never joined to the reply to
    another message and never graded."""

    type: ClassVar[str] = "late_reply"
    text: str = ""
    answers: str = ""


@dataclass
class RunEnded(Event):
    """How a start ended (`reason`) and its detail in words ("agent_turns: 30 messages sent,
    the limit is 30") — two fields: a reader compares the reason, shows the detail."""

    type: ClassVar[str] = "end"
    reason: TerminationReason = TerminationReason.COMPLETED
    detail: str = ""
    # the runner's process, as in its RunStart: an end whose pid no RunStart had is a start that
    # stopped before its agent was up (0 in logs from before it was logged)
    pid: int = 0


@dataclass
class Blob(Event):
    """Content stored once and referred to by its sha256 (`ref`): a message, a system prompt, a
    tool list, a response body. Keeps a marathon's log linear in its unique content."""

    type: ClassVar[str] = "blob"
    ref: str = ""
    data: bytes = b""


@dataclass
class LLMExchange(Event):
    """One call of the agent to its LLM, seen by the recorder. Bodies are blob refs; headers are
    redacted. `kind`: what the call was (`CallKind`: a background call — a heartbeat, a title,
    matched by the profile's `background` patterns — is never counted against a question)."""

    type: ClassVar[str] = "llm_exchange"
    api: str = ""
    method: str = "POST"
    path: str = ""
    status: int = 0
    model: str = ""
    stream: bool = False
    kind: CallKind = CallKind.ORDINARY
    system_ref: str = ""
    # the request's messages: the first `base_len` of exchange `base`'s, then `message_refs`
    # (a conversation that grows by a turn per call stores two refs per call, not all of them)
    base: int = -1
    base_len: int = 0
    message_refs: list[str] = field(default_factory=list)
    tools_ref: str = ""
    tool_names: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    request_headers: dict[str, str] = field(default_factory=dict)
    request_ref: str = ""  # the raw request body, only when its format is unknown
    response_ref: str = ""
    response_type: str = ""
    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    stop_reason: str = ""
    started: float = 0.0
    ttfb: float = 0.0
    duration: float = 0.0
    question_id: str | None = None
    phase: int = -1
    warnings: list[str] = field(default_factory=list)
    error: str = ""
    # what decided `kind` when the call is not the conversation's: "pattern:<regex>" (a background
    # pattern of the profile), "shape" (it doesn't answer the persona's message), "probe"; ""
    # for a call of the conversation, and in logs recorded before the field existed
    decided_by: str = ""


@dataclass
class CompactionSeen(Event):
    """The agent compacted its context (seen in its LLM traffic); `exchange` is the seq of the
    `llm_exchange` that showed it."""

    type: ClassVar[str] = "compaction"
    kind: str = ""
    tokens_before: int = 0
    tokens_after: int = 0
    exchange: int = -1
    phase: int = -1
    question_id: str | None = None


@dataclass
class MemoryCallSeen(Event):
    """A memory tool call the agent's model made; attributed to the question being asked."""

    type: ClassVar[str] = "memory_call"
    tool: str = ""
    operation: str = ""
    target: str = ""
    exchange: int = -1
    question_id: str | None = None
    # made in a background call of the agent's own (a heartbeat, a review of the conversation):
    # its memory work, never a question's
    background: bool = False


@dataclass
class MemoryCallFailed(Event):
    """The memory tool call logged as `call` (its seq) returned an error — seen in the result the
    agent then sent its model (`gateway.traffic.tool_results`): the call was made, nothing was
    stored or found. `detail` is the start of what the tool said."""

    type: ClassVar[str] = "memory_call_failed"
    call: int = -1
    detail: str = ""


@dataclass
class MemoryResult(Event):
    """What the memory call logged as `call` (its seq) returned, as the agent sent it to its
    model next: `chars` of text and `items` (a JSON list's entries, or a `results`/`items`/
    `memories`/`matches` list's; else its non-empty lines) — the exposure a read gave the model."""

    type: ClassVar[str] = "memory_result"
    call: int = -1
    items: int = 0
    chars: int = 0


@dataclass
class EvidenceCheck(Event):
    """Was the expected answer still in the agent's context (its conversation history, not its
    memory tools) when it was asked? Checked on its first LLM call for the question."""

    type: ClassVar[str] = "evidence"
    question_id: str = ""
    in_context: bool = False
    exchange: int = -1


@dataclass
class CanaryHit(Event):
    """A revoked marker reached the agent's LLM input again."""

    type: ClassVar[str] = "canary"
    marker: str = ""
    exchange: int = -1
    question_id: str | None = None


@dataclass
class FactsMarked(Event):
    """The LLM persona marked facts told (`file:id`); each also gets a `fact_told`."""

    type: ClassVar[str] = "facts_marked"
    fact_ids: list[str] = field(default_factory=list)


@dataclass
class PersonaTurn(Event):
    """One response of the persona's (or judge's) model, kept so a resumed run can replay the
    persona exactly; `usage` feeds the cost split."""

    type: ClassVar[str] = "persona_llm"
    client: str = ""
    response: dict[str, Any] = field(default_factory=dict)


@dataclass
class PersonaSlip(Event):
    """The LLM persona broke a rule the engine checks (e.g. marked a fact told it never said).
    `fact` (`file:id`) and `question_id` name what it is about, where it is about one (logs of
    format 2 have them read out of `detail` by the migration)."""

    type: ClassVar[str] = "persona_slip"
    kind: SlipKind = SlipKind.OUT_OF_CHARACTER
    detail: str = ""
    fact: str = ""
    question_id: str = ""
    missing: list[str] = field(default_factory=list)  # fact_not_said: the details never said

    @classmethod
    def of(cls, slip: Slip) -> PersonaSlip:
        """The persona's slip as the log keeps it, every field carried (a fact, a question)."""
        return cls(kind=slip.kind, detail=slip.detail, fact=slip.fact, question_id=slip.question_id,
                   missing=list(slip.missing))  # fmt: skip


@dataclass
class UnknownEvent(Event):
    type: ClassVar[str] = "unknown"
    tag: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class InvalidEvent(UnknownEvent):
    """A record whose fields don't have the types its event declares (`problem` says which):
    readers that display skip it (it is an `UnknownEvent`); resume refuses to build on it."""

    type: ClassVar[str] = "invalid"
    problem: str = ""


def enums_of(cls: type[Event]) -> dict[str, type[StrEnum]]:
    """Each of `cls`'s enum fields with its enum, looked up once per class."""
    found = _ENUMS.get(cls)
    if found is None:
        found = _ENUMS[cls] = enum_fields(cls, frozenset(f.name for f in dataclasses.fields(cls)))
    return found


_ENUMS: dict[type[Event], dict[str, type[StrEnum]]] = {}
