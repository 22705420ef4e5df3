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


COMBINED_REVIEW = (  # Hermes 0.19.0, agent/background_review.py: the memory and skill reviews at once
    "Review the conversation above and update two things:\n\n**Memory**: who the user is. Did the user "
    "reveal persona, desires, preferences, personal details, or expectations about how you should "
    "behave? Save facts about the user and durable preferences with the memory tool.\n\n**Skills**: "
    "how to do this class of task."
)


def _writes(n: int) -> list[dict[str, Any]]:
    return [
        {"type": "tool_use", "id": f"t{i}", "name": "memory", "input": {"action": "add", "content": f"fact {i}"}}
        for i in range(n)
    ]


def test_a_call_that_does_not_answer_the_persona_is_background_by_its_shape_and_said() -> None:
    """Issue 46 item 1: Hermes' combined review prompt matched no pattern, and over Telegram 24
    memory writes were charged to q10. The gateway knows the message it sent: a call whose
    conversation doesn't end in it is the agent's own — recorded, never charged, and said."""
    base = shape("hermes_background_review_request.json")
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("anthropic"))  # its memory tool; no pattern knows Hermes' reviews
    talk = [{"role": "user", "content": "My cat is called Miso"}, {"role": "assistant", "content": "Noted."}]
    question = "What is my cat called?"
    recorder.question_started("q10", question, "Miso", abstain=False)
    recorder.turn_started(question)
    asked = [*talk, {"role": "user", "content": question}]
    recorder.record(exchange({**base, "messages": asked}, _writes(1)))  # it searches its memory
    results = [{"type": "tool_result", "tool_use_id": "t0", "content": "Miso"}]
    looped = [*asked, {"role": "assistant", "content": _writes(1)}, {"role": "user", "content": results}]
    recorder.record(exchange({**base, "messages": looped}))  # its answer, after the tool's result
    review = [*asked, {"role": "assistant", "content": "Miso."}, {"role": "user", "content": COMBINED_REVIEW}]
    recorder.record(exchange({**base, "messages": review}, _writes(24)))
    kinds = [(e.kind, e.question_id) for e in log.events if isinstance(e, LLMExchange)]
    assert kinds == [("ordinary", "q10"), ("ordinary", "q10"), ("background", None)]
    charged = [m for m in log.events if isinstance(m, MemoryCallSeen) and m.question_id == "q10"]
    assert len(charged) == 1  # its own search, not the review's 24 writes
    note = recorder.background_note()
    assert note is not None and "1 model call(s) did not answer the persona's message" in note
    assert "Review the conversation above and update two things" in note and "`llm.background`" in note
    # the profile that names the prompt labels it: background, and nothing unknown to say
    labelled = RunRecorder(MemoryLog(), load_profile("hermes"))
    labelled.turn_started(question)
    labelled.record(exchange({**base, "messages": review}, _writes(24)))
    assert labelled.background_calls == 1 and labelled.background_note() is None


def test_a_message_wrapped_by_its_agent_still_answers_the_persona() -> None:
    """An agent's wrapping — OpenClaw's context and timestamp, Letta's JSON with its letters
    escaped — is not another conversation: the call answers the persona's message."""
    from gateway.traffic.call_shape import answers
    from gateway.traffic.wire import parse_call

    def call(content: str) -> Any:
        body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": content}]}
        return parse_call("/v1/messages", json.dumps(body).encode(), b"", "")

    message = "Мою кошку зовут Мисо, ей четыре года."
    letta = json.dumps({"type": "user_message", "message": message, "time": "2026-12-05 10:00:00 AM UTC"})
    assert answers(call(letta), message)  # ensure_ascii: «\u041c\u043e\u044e…» in the wire text
    openclaw = f"[Sat 2026-12-05 10:00 UTC] {message}\n<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>x<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
    assert answers(call(openclaw), message, load_profile("openclaw").users_words)
    assert not answers(call(COMBINED_REVIEW), message)
    assert answers(call(COMBINED_REVIEW), "")  # no message known (a compaction command): never moved


def test_a_summary_call_then_the_summary_in_the_next_input_is_a_compaction_though_nothing_was_lost() -> None:
    """Issue 46 item 3: after a one-turn `compact()` Hermes said "Compressed: 9 → 9 messages",
    a summary call was recorded and the next request carried the summary — yet "compactions
    seen: 0", because no user message was lost."""
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("hermes"))
    main = shape("hermes_background_review_request.json")
    talk = [{"role": "user", "content": "My cat is called Miso"}, {"role": "assistant", "content": "Noted."}]
    recorder.record(exchange({**main, "messages": [*talk, {"role": "user", "content": "/compress"}]}, input_tokens=900))
    summary = "The user has a cat called Miso and asked to be reminded of it; nothing else was pending."
    summary_body = json.loads((FIXTURES / "hermes_compaction_request.json").read_text())
    recorder.record(
        RawExchange(
            "POST", "/v1/chat/completions", {"Content-Type": "application/json"}, json.dumps(summary_body).encode(),
            200, {"content-type": "application/json"},
            json.dumps({"choices": [{"message": {"role": "assistant", "content": summary}}]}).encode(),
        )
    )
    block = f"[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns, summarised:\n{summary}"
    after = [{"role": "user", "content": block}, *talk, {"role": "user", "content": "Where do I live?"}]
    recorder.record(exchange({**main, "messages": after}, input_tokens=950))
    (found,) = [e for e in log.events if isinstance(e, CompactionSeen)]
    assert found.kind == "hermes-summary"
    # a summary call whose summary never reaches the next input is no compaction by itself
    log2 = MemoryLog()
    other = RunRecorder(log2, load_profile("reference"))
    other.record(exchange({**main, "messages": [*talk, {"role": "user", "content": "hi"}]}, input_tokens=900))
    other.analyzer.pending_summary, other.analyzer.summary_text = "reference-summary", summary
    other.record(exchange({**main, "messages": [*talk, {"role": "user", "content": "hi"}, *talk]}, input_tokens=950))
    assert not [e for e in log2.events if isinstance(e, CompactionSeen)]


def test_openclaw_context_sent_as_a_last_user_message_of_its_own_is_skipped() -> None:
    """Issue 58: OpenClaw 2026.9.6 sends its internal-context block as a separate user message
    *after* the persona's (the heartbeat fixture shows the real shape). Once the profile's noise is
    stripped that message is empty: the call answers the persona's message before it — and the
    heartbeat prompt in the same place is still background by its pattern."""
    base = shape("openclaw_2026_9_6_heartbeat_request.json")
    context = base["messages"][-1]
    assert "BEGIN_OPENCLAW_INTERNAL_CONTEXT" in json.dumps(context)
    message = "What is my cat called?"
    turn = [{"role": "user", "content": f"[Mon 2026-12-07 17:00 UTC] {message}"}, context]
    log = MemoryLog()
    recorder = RunRecorder(log, load_profile("openclaw"))
    recorder.question_started("q1", message, "Miso", abstain=False)
    recorder.turn_started(message)
    search = [
        {
            "type": "tool_use",
            "id": "s",
            "name": "tool_call",
            "input": {"id": "memory_search", "args": {"query": "cat"}},
        }
    ]
    recorder.record(exchange({**base, "messages": turn}, search))
    recorder.record(exchange(base))  # its heartbeat, mid-turn
    answered, heartbeat = [e for e in log.events if isinstance(e, LLMExchange)]
    assert (answered.kind, answered.question_id, answered.decided_by) == ("ordinary", "q1", "")
    assert heartbeat.kind == "background" and heartbeat.decided_by.startswith("pattern:")
    (memory,) = [e for e in log.events if isinstance(e, MemoryCallSeen)]
    assert memory.question_id == "q1" and not memory.background
    assert recorder.unknown_shape_calls == 0
