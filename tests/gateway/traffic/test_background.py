"""The agents' own background calls, in the request shapes the real agents sent: Hermes 0.19.0's
review of the conversation (over a whole earlier conversation, mid-exam) and OpenClaw 2026.9.6's
heartbeat. Recorded, shown apart, never read as the conversation: no compaction inferred from
the jump, no memory write charged to the question in flight."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gateway.log.events import CompactionSeen, LLMExchange, MemoryCallSeen
from gateway.traffic.profile import load_profile
from gateway.traffic.recorder import RawExchange, RunRecorder
from tests.gateway.traffic.conftest import MemoryLog

FIXTURES = Path(__file__).parent / "fixtures"


def exchange(
    shape: dict[str, Any], content: list[dict[str, Any]] | None = None, input_tokens: int = 0
) -> RawExchange:
    """An Anthropic request with the shape's system, tools and messages, answered by `content`."""
    body = {
        "model": shape.get("model", "m"),
        "max_tokens": 100,
        "system": shape["system"],
        "tools": [{"name": n, "input_schema": {"type": "object"}} for n in shape["tool_names"]],
        "messages": shape["messages"],
    }
    blocks = content or [{"type": "text", "text": "ok"}]
    response = {
        "type": "message",
        "content": blocks,
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn",
        "usage": {"input_tokens": input_tokens, "output_tokens": 5} if input_tokens else {},
    }
    return RawExchange(
        "POST", "/v1/messages", {"Content-Type": "application/json"}, json.dumps(body).encode(),
        200, {"content-type": "application/json"}, json.dumps(response).encode(),
    )  # fmt: skip


def shape(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / name).read_text()))


def test_hermes_review_mid_exam_is_background_and_no_compaction() -> None:
    review = shape("hermes_background_review_request.json")
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("hermes"))
    # this session's conversation: four turns, then the question
    talk: list[dict[str, Any]] = []
    for text in ("Hello again!", "My cat is called Miso", "I moved to Porto", "I like tea"):
        talk += [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
    recorder.question_started("q5", "What is my cat called?", "Miso", abstain=False)
    recorder.turn_started()
    asked = [*talk, {"role": "user", "content": "What is my cat called?"}]
    recorder.record(exchange({**review, "messages": asked}))
    # Hermes' own review, over the previous session's 41 messages, writing memories
    writes = [
        {
            "type": "tool_use",
            "id": f"t{i}",
            "name": "memory",
            "input": {"action": "add", "content": f"fact {i}"},
        }
        for i in range(3)
    ]
    recorder.record(exchange(review, writes))
    # the question's next call: this session's conversation again, shorter than the review
    recorder.record(exchange({**review, "messages": [*asked, {"role": "assistant", "content": "Miso."}]}))
    kinds = [(e.kind, e.question_id) for e in log.events if isinstance(e, LLMExchange)]
    assert kinds == [("ordinary", "q5"), ("background", None), ("ordinary", "q5")]
    assert not [e for e in log.events if isinstance(e, CompactionSeen)]
    memory = [e for e in log.events if isinstance(e, MemoryCallSeen)]
    assert len(memory) == 3 and all(m.background and m.question_id is None for m in memory)
    assert recorder.turn.calls == 2


def test_a_jump_to_another_conversation_is_no_compaction_even_unrecognised() -> None:
    """A background call no pattern knows: the call after it goes on from the call before it,
    so the jump was between conversations, not a compaction."""
    review = shape("hermes_background_review_request.json")
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("reference"))  # knows nothing of Hermes' review
    talk = [{"role": "user", "content": "My cat is called Miso"}, {"role": "assistant", "content": "Noted."}]
    talk += [{"role": "user", "content": "I moved to Porto"}, {"role": "assistant", "content": "Noted."}]
    talk.append({"role": "user", "content": "What is my cat called?"})
    recorder.record(exchange({**review, "messages": talk}))
    recorder.record(exchange(review))
    talk += [{"role": "assistant", "content": "Miso."}, {"role": "user", "content": "Where do I live?"}]
    recorder.record(exchange({**review, "messages": talk}))
    assert not [e for e in log.events if isinstance(e, CompactionSeen)]


def test_openclaw_2026_9_6_heartbeat_is_background() -> None:
    heartbeat = shape("openclaw_2026_9_6_heartbeat_request.json")
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("openclaw"))
    recorder.question_started("q1", "What is my cat called?", "Miso", abstain=False)
    write = [
        {"type": "tool_use", "id": "w", "name": "write", "input": {"path": "memory/notes.md", "content": "x"}}
    ]
    recorder.record(exchange(heartbeat, write))
    (seen,) = [e for e in log.events if isinstance(e, LLMExchange)]
    assert (seen.kind, seen.question_id) == ("background", None)
    (memory,) = [e for e in log.events if isinstance(e, MemoryCallSeen)]
    assert memory.background and memory.question_id is None
    assert recorder.background_note() is None


def test_calls_between_turns_that_no_pattern_knows_are_said_at_the_end() -> None:
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("openclaw"))
    base = shape("openclaw_2026_9_6_heartbeat_request.json")
    recorder.turn_started()
    recorder.record(exchange({**base, "messages": [{"role": "user", "content": "hi"}]}))
    recorder.turn_ended()
    assert recorder.background_note() is None
    recorder.record(
        exchange({**base, "messages": [{"role": "user", "content": "Check your inbox, reply NOTHING."}]})
    )
    note = recorder.background_note()
    assert note is not None and "1 model call(s) came between a reply and the next message" in note
    assert "`llm.background`" in note


def test_a_summary_call_then_a_shorter_list_is_a_compaction_whatever_the_usage() -> None:
    """Hermes' summariser, then its next request with 30 of 41 messages gone — while the
    provider reports the same input size: a compaction (the summary label and the list say so)."""
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("hermes"))
    main = shape("hermes_background_review_request.json")
    long = [
        m
        for i in range(20)
        for m in ({"role": "user", "content": f"fact {i}"}, {"role": "assistant", "content": "Noted."})
    ]
    long.append({"role": "user", "content": "one more"})
    recorder.record(exchange({**main, "messages": long}, input_tokens=9000))
    summary_body = json.loads((FIXTURES / "hermes_compaction_request.json").read_text())
    recorder.record(
        RawExchange(
            "POST",
            "/v1/chat/completions",
            {"Content-Type": "application/json"},
            json.dumps(summary_body).encode(),
            200,
            {"content-type": "application/json"},
            json.dumps({"choices": [{"message": {"role": "assistant", "content": "summary"}}]}).encode(),
        )
    )
    short = [{"role": "user", "content": "[CONTEXT SUMMARY]: facts 0–15"}, *long[-10:]]
    recorder.record(exchange({**main, "messages": short}, input_tokens=9000))
    (found,) = [e for e in log.events if isinstance(e, CompactionSeen)]
    assert found.kind.startswith("hermes")
