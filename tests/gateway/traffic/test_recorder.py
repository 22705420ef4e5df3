from __future__ import annotations

import json
from typing import Any

from gateway.log.events import Blob, ErrorEvent, EvidenceCheck, LLMExchange
from gateway.traffic.profile import load_profile
from gateway.traffic.recorder import RawExchange, RunRecorder, message_refs
from persona.grading.exact import contains_expected
from tests.gateway.traffic.conftest import MemoryLog


def raw(
    messages: list[dict[str, Any]], reply: str = "ok", tool_calls: list[dict[str, Any]] | None = None
) -> RawExchange:
    """An Anthropic exchange: the request's `messages`, answered with `reply` — or with
    `tool_calls` (tool_use blocks) when given."""
    body = json.dumps({"model": "m", "max_tokens": 10, "system": "sys", "messages": messages}).encode()
    response = json.dumps(
        {
            "type": "message",
            "content": tool_calls if tool_calls is not None else [{"type": "text", "text": reply}],
            "stop_reason": "tool_use" if tool_calls else "end_turn",
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


def test_a_heartbeat_call_is_background_never_counted_against_the_question() -> None:
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("openclaw"))
    recorder.question_started("q1", "What is my cat called?", "Miso", abstain=False)
    heartbeat = (
        "Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. "
        "If nothing needs attention, reply HEARTBEAT_OK."
    )
    recorder.turn_started()
    recorder.record(raw([{"role": "user", "content": heartbeat}], reply="HEARTBEAT_OK"))
    recorder.record(raw([{"role": "user", "content": "What is my cat called?"}], reply="Miso"))
    first, second = (e for e in log.events if isinstance(e, LLMExchange))
    assert (first.kind, first.question_id) == ("background", None)
    assert (second.kind, second.question_id) == ("ordinary", "q1")
    assert recorder.turn.calls == 1  # the turn's model calls are the conversation's only


def test_a_failed_model_call_is_an_agent_llm_error_and_fails_the_turn_until_one_succeeds() -> None:
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile(None))
    recorder.turn_started()
    down = raw([{"role": "user", "content": "hi"}])
    for status, error in ((529, ""), (502, ""), (0, "connection refused")):
        recorder.record(RawExchange("POST", "/v1/messages", {}, down.request_body, status, error=error))
    errors = [e for e in log.events if isinstance(e, ErrorEvent)]
    assert [(e.source, e.kind) for e in errors] == [
        ("agent-llm", "overloaded"),
        ("agent-llm", "server_error"),
        ("agent-llm", "no_connection"),
    ]
    assert recorder.turn_failure() == "3 failed model calls in this turn, the last: connection refused"
    recorder.record(raw([{"role": "user", "content": "hi"}]))  # the agent's retry got an answer
    assert recorder.turn_failure() is None


def test_a_memory_write_the_tool_refused_is_logged_as_failed() -> None:
    """Hermes' memory full: the write was called, its result says it stored nothing — the
    report must not count it as stored."""
    from gateway.log.events import MemoryCallFailed, MemoryCallSeen
    from tests.gateway.traffic.test_tool_results import HERMES_FULL

    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("hermes"))
    add = {"action": "add", "target": "memory", "content": "My cat is Miso"}
    calls = [
        {"type": "tool_use", "id": "t1", "name": "memory", "input": add},
        {"type": "tool_use", "id": "t2", "name": "memory", "input": {**add, "content": "I live in Porto"}},
    ]
    told = [{"role": "user", "content": "My cat is Miso. I live in Porto."}]
    recorder.record(raw(told, tool_calls=calls))
    results = [
        {"type": "tool_result", "tool_use_id": "t1", "content": '{"success": true}'},
        {"type": "tool_result", "tool_use_id": "t2", "content": HERMES_FULL},
    ]
    recorder.record(
        raw(
            [*told, {"role": "assistant", "content": calls}, {"role": "user", "content": results}],
            tool_calls=[],
        )
    )
    seen = [e for e in log.events if isinstance(e, MemoryCallSeen)]
    failed = [e for e in log.events if isinstance(e, MemoryCallFailed)]
    assert len(seen) == 2 and [f.call for f in failed] == [seen[1].seq]
    assert "would exceed the limit" in failed[0].detail
