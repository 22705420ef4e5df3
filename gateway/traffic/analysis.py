"""What an agent's LLM traffic tells, call by call: its compactions, its memory calls, whether
evidence was still in its context, and whether a revoked canary came back.

Everything here works on parsed calls (`wire.LLMCall`); it knows nothing of mitmproxy or the
run log, so it is the same for a live run, `marathon proxy` and a re-analysis of a recording.

Compaction, generically: calls are grouped into lineages by the set of tools they offer (the
agent's main loop always offers the same tools; a summariser offers none). A call compacts its
lineage when user messages of the previous call of that lineage are gone *and* the input
shrank — a conversation that only grows, or only drops its tool turns, never qualifies. Named
signatures (a summary request, a replayed summary, cleared tool outputs, a server-side
compaction block) name the kind.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from gateway.log.vocabulary import CallKind
from gateway.traffic.profile import MemoryCallInfo, TrafficProfile
from gateway.traffic.wire import LLMCall, text_of

ORDINARY, SUMMARY, FLUSH = CallKind.ORDINARY, CallKind.SUMMARY, CallKind.MEMORY_FLUSH
RECENT_CALLS = 8  # ordinary calls remembered to tell a compaction from a jump between conversations


@dataclass(frozen=True)
class CompactionFinding:
    kind: str
    tokens_before: int
    tokens_after: int


@dataclass
class CallAnalysis:
    kind: CallKind  # ordinary | summary | memory_flush (probe, background: read no further)
    memory_calls: list[MemoryCallInfo] = field(default_factory=list)
    compactions: list[CompactionFinding] = field(default_factory=list)
    canary_hits: list[str] = field(default_factory=list)
    input_tokens: int = 0


def message_hash(message: Any) -> str:
    return hashlib.sha256(json.dumps(message, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def user_texts(call: LLMCall, profile: TrafficProfile | None = None) -> set[str]:
    """Hashes of the user's own words (not tool results, not the context an agent wraps around
    them) in the call's input."""
    out = set()
    for m in call.messages:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            continue
        text = text_of(content)
        words = profile.users_words(text) if profile else " ".join(text.split())
        if words:
            out.add(hashlib.sha256(words.encode()).hexdigest())
    return out


def input_tokens(call: LLMCall) -> int:
    """The provider's count when it reported one, else about four characters per token."""
    reported = call.usage.total_input
    if reported:
        return reported
    return (len(call.system) + sum(len(json.dumps(m, ensure_ascii=False)) for m in call.messages)) // 4


def lineage(call: LLMCall) -> tuple[str, ...]:
    return tuple(sorted(call.tool_names))


def _edges(call: LLMCall) -> str:
    """System prompt, first and last message: where the agents put their signatures."""
    parts = [call.system]
    if call.messages:
        parts += [text_of(call.messages[0].get("content")), text_of(call.messages[-1].get("content"))]
    return "\n".join(parts)


def _has(text: str, markers: tuple[str, ...]) -> str | None:
    return next((m for m in markers if m in text), None)


class TrafficAnalyzer:
    """Stateful over one agent's calls, in order. Not thread-safe; one per run."""

    def __init__(self, profile: TrafficProfile) -> None:
        self.profile = profile
        self.previous: dict[tuple[str, ...], LLMCall] = {}
        self.recent: list[set[str]] = []  # the user texts of the last ordinary calls, newest last
        self.pending_summary: str | None = None
        self.summary_text = ""  # what the pending summary call answered: the summary itself
        self.summary_tokens = 0  # the pending summary call's input: the context it summarised
        self.armed_canaries: list[str] = []

    def reset_context(self) -> None:
        """A new session started on purpose: what follows is not a compaction of what was."""
        self.previous.clear()
        self.recent.clear()
        self.pending_summary = None

    def arm_canary(self, marker: str) -> None:
        if marker not in self.armed_canaries:
            self.armed_canaries.append(marker)

    def classify(self, call: LLMCall) -> str:
        return self._classify(call)[0]

    def _classify(self, call: LLMCall) -> tuple[CallKind, str | None]:
        """The call's kind, and the signature that named it."""
        edges = _edges(call)
        if marker := _has(edges, self.profile.summary):
            return SUMMARY, marker
        if marker := _has(edges, self.profile.flush):
            return FLUSH, marker
        return ORDINARY, None

    def memory_calls(self, call: LLMCall) -> list[MemoryCallInfo]:
        """The memory calls the model made in `call`, by the profile."""
        found = []
        for tc in call.tool_calls:
            info = self.profile.memory_call(tc.name, tc.arguments)
            if info:
                found.append(dataclasses.replace(info, call_id=tc.id))
        return found

    def observe(self, call: LLMCall) -> CallAnalysis:
        kind, marker = self._classify(call)
        result = CallAnalysis(kind=kind, input_tokens=input_tokens(call), memory_calls=self.memory_calls(call))
        if call.server_compactions:
            server = "anthropic-server" if call.api == "anthropic-messages" else "openai-responses"
            result.compactions.append(CompactionFinding(server, result.input_tokens, 0))
        if call.applied_edits:
            result.compactions.append(
                CompactionFinding("anthropic-context-edit", result.input_tokens, result.input_tokens)
            )
        if result.kind == SUMMARY and marker:
            self.pending_summary = f"{self.profile.agent_of(marker)}-summary"
            self.summary_text, self.summary_tokens = " ".join(call.text.split()), result.input_tokens
        elif result.kind == ORDINARY:
            self._generic(call, result)
        if self.armed_canaries:
            whole = call.system + "\n" + text_of(call.messages)
            result.canary_hits = [m for m in self.armed_canaries if m in whole]
        return result

    def _generic(self, call: LLMCall, result: CallAnalysis) -> None:
        key = lineage(call)
        before = self.previous.get(key)
        self.previous[key] = call
        users = user_texts(call, self.profile)
        earlier, self.recent = self.recent, [*self.recent[-(RECENT_CALLS - 1) :], users]
        if self.pending_summary is not None and self._carries_summary(call):
            # a summary call, then the summary in the next input: a compaction, even one that lost
            # no message (Hermes' one-turn `compact()`: "Compressed: 9 → 9 messages")
            tokens = input_tokens(before) if before is not None else self.summary_tokens
            result.compactions.append(CompactionFinding(self.pending_summary, tokens, result.input_tokens))
            self.pending_summary = None
            return
        if before is None:
            return
        tokens_before = input_tokens(before)
        old_users = user_texts(before, self.profile)
        lost = len(old_users - users)
        if lost and any(len(e) >= 2 and e <= users and 2 * len(e) > len(users) for e in earlier[:-1]):
            return  # it goes on from a call before the last one: that one was another conversation
        # the provider's usage, or the message list, or a summary call just before: a list that
        # lost 30 of its 41 messages after a recorded summary call is compacted whatever the usage
        shrank = (
            result.input_tokens < tokens_before
            or len(call.messages) < len(before.messages)
            or self.pending_summary is not None
        )
        cleared = self.profile.cleared and (
            text_of(call.messages).count(self.profile.cleared[0])
            > text_of(before.messages).count(self.profile.cleared[0])
        )
        if lost >= min(2, max(1, len(old_users) // 2)) and shrank:
            replay = _has(text_of(call.messages[:3]), self.profile.replay)
            kind = self.pending_summary or (
                f"{self.profile.agent_of(replay)}-replayed-summary" if replay else "generic"
            )
            result.compactions.append(CompactionFinding(kind, tokens_before, result.input_tokens))
            self.pending_summary = None
        elif cleared and shrank:
            result.compactions.append(
                CompactionFinding("tool-output-cleared", tokens_before, result.input_tokens)
            )


    def _carries_summary(self, call: LLMCall) -> bool:
        """The summary the pending summary call wrote is in `call`'s input: its text (the
        first `SUMMARY_EXCERPT` characters, when it has that many), or the profile's marker of
        a replayed summary."""
        whole = " ".join(text_of(call.messages).split()) + " " + " ".join(call.system.split())
        excerpt = self.summary_text[:SUMMARY_EXCERPT]
        if len(excerpt) >= SUMMARY_EXCERPT and excerpt in whole:
            return True
        return _has(whole, self.profile.replay) is not None


# how much of a summary's text must reappear in the next input to show the summary was put there
SUMMARY_EXCERPT = 60


def history_before(call: LLMCall, question: str) -> str | None:
    """The conversation text before the last user message that contains `question` — what was
    still in the agent's context when it was asked (system prompt and tool results excluded:
    those are memory at work, not context). None if the question isn't in this call."""
    return conversation_before(call.messages, question)


def conversation_before(messages: list[dict[str, Any]], question: str) -> str | None:
    """`history_before` over a request's messages as logged (the memory autopsy reads them
    again from the log, to tie a match to the fact asked about)."""
    needle = " ".join(question.split())[:200]
    for index in range(len(messages) - 1, -1, -1):
        m = messages[index]
        if m.get("role") == "user" and needle in " ".join(text_of(m.get("content")).split()):
            return "\n".join(
                text_of(h.get("content"))
                for h in messages[:index]
                if not (
                    isinstance(h.get("content"), list)
                    and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in h["content"])
                )
                and h.get("role") != "tool"
            )
    return None
