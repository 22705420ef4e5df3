"""Classification and findings on the real agents' captured requests and on synthetic
conversations built in their formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.traffic.analysis import FLUSH, ORDINARY, SUMMARY, TrafficAnalyzer, history_before
from gateway.traffic.profile import load_profile
from gateway.traffic.wire import LLMCall, ToolCall, parse_call

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_call(name: str) -> LLMCall:
    body = (FIXTURES / name).read_bytes()
    path = "/v1/messages" if "anthropic" in name else "/v1/chat/completions"
    return parse_call(path, body, b"", "application/json")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("hermes_llm_request.json", ORDINARY),
        ("hermes_llm_request_anthropic.json", ORDINARY),
        ("openclaw_llm_request.json", ORDINARY),
        ("openclaw_llm_request_anthropic.json", ORDINARY),
        ("openclaw_memory_flush_request.json", FLUSH),
        ("openclaw_compaction_request.json", SUMMARY),
        ("hermes_compaction_request.json", SUMMARY),
    ],
)
def test_real_requests_are_classified(name: str, kind: str) -> None:
    call = fixture_call(name)
    assert call.api in ("openai-chat", "anthropic-messages") and call.messages
    assert not [w for w in call.warnings if "request" in w or "parse" in w]
    assert TrafficAnalyzer(load_profile(None)).classify(call) == kind


def test_real_tool_lists_are_read() -> None:
    hermes = fixture_call("hermes_llm_request.json")
    assert {"memory", "session_search"} <= set(hermes.tool_names)
    openclaw = fixture_call("openclaw_llm_request_anthropic.json")
    assert "tool_call" in openclaw.tool_names and "memory_search" not in openclaw.tool_names  # deferred


@pytest.mark.parametrize(
    ("profile", "name", "args", "expected"),
    [
        (
            "openclaw",
            "tool_call",
            {"id": "memory_search", "args": {"query": "rent"}},
            ("tool_call:memory_search", "read", ""),
        ),
        ("openclaw", "tool_call", {"id": "exec", "args": {"cmd": "ls"}}, None),
        (
            "openclaw",
            "write",
            {"path": "/home/u/.openclaw/workspace/memory/2026-11-29.md", "content": "x"},
            ("write", "write", "/home/u/.openclaw/workspace/memory/2026-11-29.md"),
        ),
        ("openclaw", "edit", {"path": "MEMORY.md"}, ("edit", "write", "MEMORY.md")),
        ("openclaw", "read", {"path": "src/main.py"}, None),
        (
            "hermes",
            "memory",
            {"action": "add", "target": "memory", "content": "rent 1915"},
            ("memory", "write", ""),
        ),
        ("hermes", "session_search", {"query": "rent"}, ("session_search", "read", "")),
        ("letta", "archival_memory_search", {"query": "x"}, ("archival_memory_search", "read", "")),
        ("letta", "core_memory_append", {"content": "x"}, ("core_memory_append", "write", "")),
        ("anthropic", "memory", {"command": "view", "path": "/memories"}, ("memory", "read", "/memories")),
        (
            "anthropic",
            "memory",
            {"command": "str_replace", "path": "/memories/a.md"},
            ("memory", "write", "/memories/a.md"),
        ),
        ("reference", "memory_write", {"text": "x"}, ("memory_write", "write", "")),
        ("reference", "web_search", {"q": "x"}, None),
    ],
)
def test_memory_calls_by_profile(
    profile: str, name: str, args: dict[str, Any], expected: tuple[str, str, str] | None
) -> None:
    found = load_profile(profile).memory_call(name, args)
    assert (found and (found.tool, found.operation, found.target)) == expected


def anthropic_call(
    messages: list[dict[str, Any]],
    system: str = "You are helpful.",
    tools: tuple[str, ...] = ("memory_search",),
) -> LLMCall:
    return LLMCall(
        api="anthropic-messages",
        system=system,
        messages=messages,
        tools=[{"name": t, "input_schema": {}} for t in tools],
    )


def growing_conversation(turns: int) -> list[LLMCall]:
    """An agent's calls over a conversation that only grows, with tool turns that the agent
    drops from its history after each answer (as the reference agent does)."""
    history: list[dict[str, Any]] = []
    calls = []
    for i in range(turns):
        history.append({"role": "user", "content": f"message {i}: I like colour number {i}"})
        calls.append(anthropic_call(list(history)))
        tool_turn = [
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{i}", "name": "memory_search", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "notes " * 50}],
            },
        ]
        calls.append(anthropic_call(history + tool_turn))
        history.append({"role": "assistant", "content": f"noted {i}"})
    return calls


def test_no_compaction_in_a_growing_conversation() -> None:
    analyzer = TrafficAnalyzer(load_profile(None))
    findings = [c for call in growing_conversation(200) for c in analyzer.observe(call).compactions]
    assert findings == []


def test_a_summary_then_a_shrunk_context_is_one_named_compaction() -> None:
    analyzer = TrafficAnalyzer(load_profile("reference"))
    calls = growing_conversation(10)
    for call in calls:
        analyzer.observe(call)
    summary = anthropic_call(
        [{"role": "user", "content": "<conversation>...</conversation>"}],
        system="You are summarizing a conversation so that it can continue in a smaller context.",
        tools=(),
    )
    assert analyzer.observe(summary).kind == SUMMARY
    after = anthropic_call(
        [
            {"role": "user", "content": "Summary of our earlier conversation:\nlikes colours"},
            {"role": "assistant", "content": "Understood."},
            {"role": "user", "content": "message 10: and colour 10"},
        ]
    )
    found = analyzer.observe(after).compactions
    assert [c.kind for c in found] == ["reference-summary"]
    assert found[0].tokens_before > found[0].tokens_after


def test_a_replayed_summary_names_the_agent_without_seeing_the_summary_call() -> None:
    analyzer = TrafficAnalyzer(load_profile(None))
    for call in growing_conversation(6):
        analyzer.observe(call)
    after = anthropic_call(
        [
            {"role": "user", "content": "[CONTEXT COMPACTION — REFERENCE ONLY] earlier turns"},
            {"role": "user", "content": "next"},
        ]
    )
    assert [c.kind for c in analyzer.observe(after).compactions] == ["hermes-replayed-summary"]


def test_a_new_session_is_not_a_compaction() -> None:
    analyzer = TrafficAnalyzer(load_profile(None))
    for call in growing_conversation(6):
        analyzer.observe(call)
    analyzer.reset_context()
    assert analyzer.observe(anthropic_call([{"role": "user", "content": "hello again"}])).compactions == []


def test_server_side_compaction_blocks_are_compactions() -> None:
    stream = b"".join(
        f"event: x\ndata: {json.dumps(e)}\n\n".encode()
        for e in [
            {"type": "message_start", "message": {"usage": {"input_tokens": 900}}},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "compaction", "content": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "compaction_delta", "content": "summary"},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
        ]
    )
    call = parse_call(
        "/v1/messages",
        json.dumps({"model": "m", "stream": True, "messages": []}).encode(),
        stream,
        "text/event-stream",
    )
    assert call.server_compactions == 1
    assert [c.kind for c in TrafficAnalyzer(load_profile(None)).observe(call).compactions] == [
        "anthropic-server"
    ]


def test_canaries_are_found_only_once_armed() -> None:
    analyzer = TrafficAnalyzer(load_profile(None))
    call = anthropic_call([{"role": "user", "content": "my ex DANIEL-7731 called"}])
    assert analyzer.observe(call).canary_hits == []
    analyzer.arm_canary("DANIEL-7731")
    assert analyzer.observe(call).canary_hits == ["DANIEL-7731"]


def test_history_before_the_question_leaves_out_tool_results() -> None:
    call = anthropic_call(
        [
            {"role": "user", "content": "My rent is 1,840 euros"},
            {"role": "assistant", "content": "noted"},
            {"role": "user", "content": "[Sun 2026-11-29 12:58 UTC] What is my rent?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "memory_search", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": "rent 1,915"}],
            },
        ]
    )
    history = history_before(call, "What is my rent?")
    assert history is not None and "1,840" in history and "1,915" not in history
    assert history_before(call, "Where do I live?") is None


def test_memory_calls_come_from_the_response() -> None:
    call = anthropic_call([{"role": "user", "content": "x"}])
    call.tool_calls = [ToolCall("memory_search", {"query": "x"}), ToolCall("calculator", {})]
    assert [m.tool for m in TrafficAnalyzer(load_profile("reference")).observe(call).memory_calls] == [
        "memory_search"
    ]


def test_context_management_edits_and_responses_compaction_items_are_compactions() -> None:
    edited = parse_call(
        "/v1/messages",
        b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}',
        json.dumps(
            {
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10},
                "context_management": {
                    "applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3}]
                },
            }
        ).encode(),
        "application/json",
    )
    compacted = parse_call(
        "/v1/responses",
        b'{"model": "m", "input": "hi"}',
        json.dumps(
            {
                "status": "completed",
                "output": [{"type": "compaction", "id": "c1", "encrypted_content": "..."}],
            }
        ).encode(),
        "application/json",
    )
    analyzer = TrafficAnalyzer(load_profile(None))
    assert [c.kind for c in analyzer.observe(edited).compactions] == ["anthropic-context-edit"]
    assert [c.kind for c in analyzer.observe(compacted).compactions] == ["openai-responses"]


REPLAYED = "The conversation history before this point was compacted into the following summary:\n<summary>x</summary>"


def test_openclaw_summary_then_replay_is_one_openclaw_compaction() -> None:
    analyzer = TrafficAnalyzer(load_profile("openclaw"))
    for call in growing_conversation(8):
        analyzer.observe(call)
    analyzer.observe(fixture_call("openclaw_compaction_request.json"))
    after = anthropic_call(
        [
            {
                "role": "user",
                "content": REPLAYED,
            },
            {"role": "user", "content": "next question"},
        ]
    )
    assert [c.kind for c in analyzer.observe(after).compactions] == ["openclaw-summary"]


def test_openclaw_regenerating_its_wrapper_context_is_not_a_compaction() -> None:
    """OpenClaw re-wraps user turns with timestamps and an internal-context block it rebuilds
    every call; seen from a real OpenClaw run, this once looked like lost user messages."""
    block = (
        "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\\n"
        + "Conversation data: none\\n" * 40
        + "<<<END_OPENCLAW_INTERNAL_CONTEXT>>>"
    )
    turns = [f"my fact number {i}" for i in range(6)]
    before = anthropic_call(
        [
            m
            for t in turns
            for m in (
                {"role": "user", "content": f"[Sun 2026-11-29 12:58 UTC] {t}"},
                {"role": "user", "content": block},
                {"role": "assistant", "content": "ok"},
            )
        ][:-1]
    )
    after = anthropic_call(
        [
            m
            for t in turns
            for m in (
                {"role": "user", "content": t},
                {"role": "assistant", "content": "ok"},
            )
        ]
        + [{"role": "user", "content": "[Sun 2026-11-29 12:59 UTC] next\\nRuntime: agent=main"}]
    )
    analyzer = TrafficAnalyzer(load_profile("openclaw"))
    analyzer.observe(before)
    assert analyzer.observe(after).compactions == []
