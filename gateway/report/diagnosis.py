"""Why a question went wrong, link by link (protocol 001's diagnostic chain): the fact was
told → written to memory → retrieved → in the model's input → used in the answer.

Read from the log alone, as far as it can tell: "told" — a persona message held the expected
answer; "written" — a memory write's arguments held it and its tool didn't refuse it
(`memory_call_failed`); "retrieved" — a tool result in the
question's turn held it; "in input" — that, or the answer still in the agent's context (the
evidence check), or in its system prompt (agents that load memory there). The first link that
doesn't hold is where the chain broke; when everything held, the answer didn't use it. What a
caller may rely on: with the agent's traffic unrecorded only "told" can be judged, and the
result says so instead of guessing.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from gateway.log.events import Blob, EvidenceCheck, LLMExchange, MemoryCallFailed, MemoryCallSeen, Said
from gateway.report.recordings import RecordedRun
from persona.grading.exact import contains_expected
from persona.terms import split_items

# "in input" can't fail on its own here: a retrieved result is in the model's input by definition
LINKS = ("not told", "not written", "not retrieved", "not used")
COMPUTED = "aggregation"  # a total or a count: never told as such, so the chain can't be followed
UNKNOWN = "unknown: the agent's LLM traffic was not recorded"


class Diagnoser:
    """Indexes one run's log once; `broken_link` per question."""

    def __init__(self, run: RecordedRun) -> None:
        events = run.log.events
        self.observed = run.observed
        self.said = [e.text for e in events if isinstance(e, Said)]
        self.blobs = {e.ref: e.data for e in events if isinstance(e, Blob)}
        self.exchanges = {e.seq: e for e in events if isinstance(e, LLMExchange)}
        refused = {e.call for e in events if isinstance(e, MemoryCallFailed)}  # made, nothing stored
        self.writes = [
            e
            for e in events
            if isinstance(e, MemoryCallSeen) and e.operation != "read" and e.seq not in refused
        ]
        self.evidence = {e.question_id: e.in_context for e in events if isinstance(e, EvidenceCheck)}

    def _text(self, ref: str) -> str:
        data = self.blobs.get(ref, b"")
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)

    def _written(self, expected: str) -> bool:
        for write in self.writes:
            exchange = self.exchanges.get(write.exchange)
            calls = exchange.tool_calls if exchange else []
            if any(
                contains_expected(expected, json.dumps(c.get("arguments"), ensure_ascii=False)) for c in calls
            ):
                return True
        return False

    def _tool_results(self, question_id: str) -> list[str]:
        texts = []
        for exchange in self.exchanges.values():
            if exchange.question_id != question_id:
                continue
            for ref in exchange.message_refs:
                try:
                    message: Any = json.loads(self._text(ref))
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                content = message.get("content")
                if message.get("role") == "tool" or (
                    isinstance(content, list)
                    and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
                ):
                    texts.append(json.dumps(content, ensure_ascii=False))
        return texts

    def _in_system(self, question_id: str, expected: str) -> bool:
        return any(
            e.question_id == question_id
            and e.system_ref
            and contains_expected(expected, self._text(e.system_ref))
            for e in self.exchanges.values()
        )

    def broken_link(self, question_id: str, expected: str, tags: tuple[str, ...] = ()) -> str:
        if COMPUTED in tags:
            return "not diagnosed: the answer is computed from several facts"
        if not all(
            any(contains_expected(item, text) for text in self.said) for item in split_items(expected)
        ):
            return "not told"  # some part of the expected answer was never in a persona message
        if not self.observed:
            return UNKNOWN
        if self.evidence.get(question_id) or self._in_system(question_id, expected):
            return "not used"  # it was in the model's input without any memory at work
        items = split_items(expected)  # a list answer may be written and found in pieces
        if not all(self._written(item) for item in items):
            return "not written"
        results = self._tool_results(question_id)
        if not all(any(contains_expected(item, text) for text in results) for item in items):
            return "not retrieved"
        return "not used"


def chain_counts(run: RecordedRun, wrong: list[str]) -> Counter[str]:
    """How many of the run's wrong questions broke at each link."""
    diagnoser = Diagnoser(run)
    questions = {q.id: q for q in run.benchmark.questions}
    return Counter(
        diagnoser.broken_link(qid, questions[qid].expected, questions[qid].tags)
        for qid in wrong
        if qid in questions
    )
