"""A run's log as the memory autopsy reads it: every persona message, fact edit, memory write
(with its own call's arguments, and whether its tool refused it), and each question's turn —
what its reads returned and what its system prompts held — over the run's own events and, for
a fork, the events it inherits from its parent (and its parent's parent).

Why its own index: a fork's inherited events come from other logs, whose record numbers
(`seq`) start again at 0 — so the trail orders events by their place in the whole history
(`Mark.order`) and keeps each one's `seq` and whether it is inherited only to show it. What a
caller may rely on: a parent log that can't be read leaves the trail with the run's own events
and `unseen` saying why.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.log.events import (
    Asked,
    Blob,
    CheckpointSaved,
    Evaluation,
    Event,
    EvidenceCheck,
    FactEdited,
    LLMExchange,
    MemoryCallFailed,
    MemoryCallSeen,
    Said,
)
from gateway.log.lineage import LineageError, inherited_events, parent_log_path
from gateway.log.runlog import RunLog
from gateway.traffic.analysis import conversation_before
from gateway.traffic.recorder import message_refs
from gateway.traffic.tool_results import tool_results


@dataclass(frozen=True)
class Mark:
    """Where a record is: its place in the whole history, its own log's `seq`, and whether
    it is the parent's (a fork's inherited teaching)."""

    order: int
    seq: int
    inherited: bool = False

    def __str__(self) -> str:
        return f"parent:{self.seq}" if self.inherited else str(self.seq)


@dataclass(frozen=True)
class Write:
    at: Mark
    text: str  # the strings of the call's arguments, a line each
    accepted: bool  # False: its tool returned an error (nothing stored)
    # where its result is read from (`Trail.result_of`): the log segment, the exchange whose
    # response made the call, and which call of its tool in that response it was
    segment: int = -1
    exchange: int = -1
    tool: str = ""
    nth: int = 0


@dataclass
class _Segment:
    """One log's exchanges and blobs (a fork's parent's, or its own), kept to read a write's
    tool result or a question's conversation again when the autopsy asks for one."""

    exchanges: dict[int, LLMExchange]
    blobs: dict[str, Blob]

    def messages(self, exchange: LLMExchange, whole: bool) -> list[dict[str, Any]]:
        """The request's messages (`whole`), or only those it added to its base's."""
        refs = message_refs(exchange, self.exchanges) if whole else exchange.message_refs
        out = []
        for ref in refs:
            blob = self.blobs.get(ref)
            try:
                message = json.loads(_text(blob.data)) if blob is not None else None
            except ValueError:
                continue
            if isinstance(message, dict):
                out.append(message)
        return out


@dataclass
class Trail:
    said: list[tuple[Mark, str]] = field(default_factory=list)
    edits: list[tuple[Mark, FactEdited]] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    asked: dict[str, Mark] = field(default_factory=dict)  # question → its first asking
    asked_text: dict[str, str] = field(default_factory=dict)  # question → its words, as first asked
    evidence: dict[str, bool] = field(default_factory=dict)  # question → still in context when asked
    graded: dict[str, Mark] = field(default_factory=dict)  # question → its evaluation
    read: dict[str, list[str]] = field(default_factory=dict)  # question → what its turn's tools returned
    system: dict[str, list[str]] = field(default_factory=dict)  # question → its turn's system prompts
    # each checkpoint the history holds, with its archive (the run's own, and the one a fork
    # started from, in its parent's folder)
    checkpoints: list[tuple[Mark, str, Path]] = field(default_factory=list)
    unseen: str = ""  # why the inherited part is missing ("" when there is none or it was read)
    segments: list[_Segment] = field(default_factory=list)
    # question → (segment, exchange) of the call its evidence check read
    checked: dict[str, tuple[int, int]] = field(default_factory=dict)
    _results: dict[tuple[int, int, str, int], str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, log: RunLog) -> Trail:
        trail = cls()
        try:
            inherited = inherited_events(log.path, log.header) if log.path is not None else []
        except LineageError as exc:
            inherited, trail.unseen = [], f"the parent's log can't be read ({exc})"
        segments = [*_segments(inherited), log.events]
        folders: list[Path | None] = [None] * len(segments)
        folders[-1] = log.path.parent
        if len(segments) > 1:
            with contextlib.suppress(LineageError):
                parent = parent_log_path(log.path, log.header)
                folders[-2] = parent.parent if parent is not None else None
        order = 0
        for n, segment in enumerate(segments):
            order = trail._add(segment, order, inherited=n < len(segments) - 1, folder=folders[n])
        return trail

    def _add(self, events: list[Event], order: int, inherited: bool, folder: Path | None) -> int:
        blobs = {e.ref: e for e in events if isinstance(e, Blob)}  # bytes read when a turn needs them
        exchanges = {e.seq: e for e in events if isinstance(e, LLMExchange)}
        segment = len(self.segments)
        self.segments.append(_Segment(exchanges, blobs))
        refused = {e.call for e in events if isinstance(e, MemoryCallFailed)}
        taken: dict[tuple[int, str], int] = {}
        for event in events:
            at = Mark(order, event.seq, inherited)
            order += 1
            match event:
                case Said():
                    self.said.append((at, event.text))
                case FactEdited():
                    self.edits.append((at, event))
                case Asked() if not event.resent:
                    self.asked.setdefault(event.question_id, at)
                    self.asked_text.setdefault(event.question_id, event.text)
                case EvidenceCheck():
                    self.evidence[event.question_id] = event.in_context
                    self.checked[event.question_id] = (segment, event.exchange)
                case Evaluation():
                    self.graded[event.question_id] = at
                case CheckpointSaved() if folder is not None and event.archive:
                    self.checkpoints.append((at, event.name, folder / event.archive))
                case MemoryCallSeen():
                    # its tool's n-th call in that response — counting reads too (one `memory`
                    # tool may view and write); a wrapped call ("tool_call:memory_search") is
                    # its wrapper's call
                    tool = event.tool.partition(":")[0]
                    exchange = exchanges.get(event.exchange)
                    calls = [c for c in (exchange.tool_calls if exchange else []) if c.get("name") == tool]
                    n = taken.get((event.exchange, tool), 0)
                    taken[(event.exchange, tool)] = n + 1
                    if event.operation != "read":
                        args = calls[n].get("arguments") if n < len(calls) else None
                        accepted = event.seq not in refused
                        self.writes.append(
                            Write(at, "\n".join(strings(args)), accepted, segment, event.exchange, tool, n)
                        )
                case LLMExchange() if event.question_id:
                    self._turn(event, self.segments[segment])
        return order

    def result_of(self, write: Write) -> str | None:
        """What the write's tool answered, as the agent sent it to its model next (None: not
        found — no later request carried it, or its bodies were not recorded)."""
        key = (write.segment, write.exchange, write.tool, write.nth)
        if key not in self._results:
            self._results[key] = self._find_result(write)
        return self._results[key]

    def _find_result(self, write: Write) -> str | None:
        if not 0 <= write.segment < len(self.segments):
            return None
        segment = self.segments[write.segment]
        made = segment.exchanges.get(write.exchange)
        if made is None:
            return None
        names = [str(c.get("name", "")) for c in made.tool_calls]
        later = sorted(seq for seq in segment.exchanges if seq > write.exchange)[:RESULT_WINDOW]
        for seq in later:
            exchange = segment.exchanges[seq]
            messages = segment.messages(exchange, whole=False)
            ids = _call_ids(messages, names, write.tool)
            if ids is None:
                continue
            results = tool_results(exchange.api, messages)
            if write.nth < len(ids) and ids[write.nth] in results:
                return results[ids[write.nth]].text
            return None
        return None

    def context_before(self, question_id: str, question: str) -> str | None:
        """The conversation (no system prompt, no tool results) the agent's model had before the
        question, in the call its evidence check read (None: no check, or not readable)."""
        where = self.checked.get(question_id)
        if where is None or not 0 <= where[0] < len(self.segments):
            return None
        segment = self.segments[where[0]]
        exchange = segment.exchanges.get(where[1])
        if exchange is None:
            return None
        return conversation_before(segment.messages(exchange, whole=True), question)

    def _turn(self, exchange: LLMExchange, segment: _Segment) -> None:
        """What one model call of a question's turn was given: tool results and the system prompt."""
        qid = str(exchange.question_id)
        if exchange.system_ref:
            blob = segment.blobs.get(exchange.system_ref)
            self.system.setdefault(qid, []).append(_text(blob.data) if blob is not None else "")
        for message in segment.messages(exchange, whole=False):
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            if message.get("role") == "tool":
                self.read.setdefault(qid, []).extend(result_texts(content))
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self.read.setdefault(qid, []).extend(result_texts(block.get("content")))


RESULT_WINDOW = 8  # how many later calls of the agent are searched for a write's tool result


def _call_ids(messages: list[dict[str, Any]], names: list[str], tool: str) -> list[str] | None:
    """The ids of `tool`'s calls in the assistant message whose calls are `names` (the response
    that made them, as the next request repeats it); None when the request holds no such message.
    OpenAI Responses items (one a call) that follow each other count as one message."""
    groups: list[list[tuple[str, str]]] = []
    responses_run = False
    for message in messages:
        calls = _assistant_calls(message)
        if calls and message.get("type") == "function_call" and responses_run:
            groups[-1] += calls
        elif calls:
            groups.append(calls)
        responses_run = message.get("type") == "function_call"
    for calls in reversed(groups):
        if [name for _, name in calls] == names:
            return [call_id for call_id, name in calls if name == tool]
    return None


def _assistant_calls(message: dict[str, Any]) -> list[tuple[str, str]]:
    """(id, name) of each tool call an assistant message (or a Responses item) carries."""
    if message.get("type") == "function_call":  # OpenAI Responses: one item a call
        return [(str(message.get("call_id", "")), str(message.get("name", "")))]
    if message.get("role") != "assistant":
        return []
    content = message.get("content")
    if isinstance(content, list):  # Anthropic
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        if blocks:
            return [(str(b.get("id", "")), str(b.get("name", ""))) for b in blocks]
    calls = message.get("tool_calls")
    if isinstance(calls, list):  # OpenAI chat
        return [
            (str(c.get("id", "")), str((c.get("function") or {}).get("name", "")))
            for c in calls if isinstance(c, dict)
        ]  # fmt: skip
    return []


def _segments(inherited: list[Event]) -> list[list[Event]]:
    """The inherited events split into their logs (each log's `seq` grows; a new log's starts again)."""
    out: list[list[Event]] = []
    last = None
    for event in inherited:
        if last is None or event.seq <= last:
            out.append([])
        out[-1].append(event)
        last = event.seq
    return out


def _text(data: object) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)


def strings(value: object) -> list[str]:
    """Every string in a tool call's arguments (its text, a file's content, a key's value)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    return []


def result_texts(content: object) -> list[str]:
    """The text a tool result carried, without its envelope (ids, types): the strings under
    `content` and `text`, or the result itself when it is a string."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [t for item in content for t in result_texts(item)]
    if isinstance(content, dict):
        return [t for key in ("content", "text") if key in content for t in result_texts(content[key])]
    return []
