from __future__ import annotations

import json

from gateway.log.events import Blob, EvidenceCheck, LLMExchange
from gateway.traffic.profile import load_profile
from gateway.traffic.recorder import RawExchange, RunRecorder, message_refs
from persona.grading.exact import contains_expected
from tests.gateway.traffic.conftest import MemoryLog


def raw(messages: list[dict[str, str]], reply: str = "ok") -> RawExchange:
    body = json.dumps({"model": "m", "max_tokens": 10, "system": "sys", "messages": messages}).encode()
    response = json.dumps(
        {
            "type": "message",
            "content": [{"type": "text", "text": reply}],
            "stop_reason": "end_turn",
            "usage": {},
        }
    ).encode()
    return RawExchange(
        "POST",
        "/v1/messages",
        {"Content-Type": "application/json"},
        body,
        200,
        {"content-type": "application/json"},
        response,
    )


def test_each_message_is_stored_once_and_requests_can_be_rebuilt() -> None:
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile(None))
    conversation: list[dict[str, str]] = []
    sent = []
    for i in range(30):
        conversation.append({"role": "user", "content": f"turn {i}"})
        recorder.record(raw(conversation))
        sent.append(list(conversation))
        conversation.append({"role": "assistant", "content": "ok"})
    recorder.record(raw([{"role": "user", "content": "fresh start"}]))  # not an extension
    sent.append([{"role": "user", "content": "fresh start"}])
    blobs = {b.ref: b.data for b in log.events if isinstance(b, Blob)}
    exchanges = [e for e in log.events if isinstance(e, LLMExchange)]
    by_seq = {e.seq: e for e in exchanges}
    for exchange, messages in zip(exchanges, sent, strict=True):
        assert [json.loads(blobs[r]) for r in message_refs(exchange, by_seq)] == messages
    assert max(len(e.message_refs) for e in exchanges[1:]) <= 2  # only the new tail per call
    # the user turns, the "ok" turn, "fresh start", the system prompt, and one response (all are equal)
    assert len(blobs) == 30 + 1 + 1 + 1 + 1


def test_evidence_is_checked_once_on_the_first_call_for_the_question() -> None:
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile(None), evidence=contains_expected)
    history = [{"role": "user", "content": "My rent is 1,840 euros"}, {"role": "assistant", "content": "ok"}]
    recorder.question_started("q1", "What is my rent?", "1,840 euros", abstain=False)
    recorder.record(raw([{"role": "user", "content": "unrelated call"}]))  # not the question's call
    recorder.record(raw([*history, {"role": "user", "content": "What is my rent?"}]))
    recorder.record(raw([{"role": "user", "content": "What is my rent?"}]))
    recorder.question_finished()
    checks = [e for e in log.events if isinstance(e, EvidenceCheck)]
    assert [(c.question_id, c.in_context) for c in checks] == [("q1", True)]
