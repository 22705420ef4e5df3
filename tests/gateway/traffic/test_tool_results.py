"""Tool results read back from the agent's next request, in each wire format, and when one
counts as failed (only on an explicit sign)."""

from __future__ import annotations

import json

import pytest

from gateway.traffic.tool_results import ToolResult, tool_results
from gateway.traffic.wire import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES

# what Hermes 0.19.0 sent its model after its memory was full (captured here, entries trimmed)
HERMES_FULL = json.dumps(
    {
        "success": False,
        "error": "Memory at 2,164/2,200 chars. Adding this entry (44 chars) would exceed the limit.",
        "current_entries": ["My name is Maya Keller and I am 34 years old"],
    }
)


def test_each_wire_format_s_results_are_found_by_call_id() -> None:
    anthropic = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "memory", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": HERMES_FULL, "cache_control": {}},
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "saved"}]},
            ],
        },
    ]
    found = tool_results(ANTHROPIC, anthropic)
    assert set(found) == {"t1", "t2"} and found["t1"].failed and not found["t2"].failed

    chat = [
        {"role": "tool", "tool_call_id": "c1", "content": "Error: no such file"},
        {"role": "user", "content": "hi"},
    ]
    assert tool_results(OPENAI_CHAT, chat) == {"c1": ToolResult("c1", "Error: no such file")}
    responses = [{"type": "function_call_output", "call_id": "r1", "output": '{"ok": true}'}]
    assert not tool_results(OPENAI_RESPONSES, responses)["r1"].failed
    assert tool_results(ANTHROPIC, [{"role": "user", "content": "no tools here"}, "garbage"]) == {}  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("result", "failed"),
    [
        (ToolResult("x", "anything", is_error=True), True),
        (ToolResult("x", HERMES_FULL), True),
        (ToolResult("x", '{"status": "Failed", "message": "…"}'), True),
        (ToolResult("x", '{"ok": false}'), True),
        (ToolResult("x", "error: quota"), True),
        (ToolResult("x", '{"status": "OK", "message": null}'), False),  # Letta's success
        (ToolResult("x", '{"success": true, "error": ""}'), False),
        (ToolResult("x", "The errors you made last week are noted."), False),  # only a leading "Error"
        (ToolResult("x", "[1, 2]"), False),
        (ToolResult("x", ""), False),
    ],
)
def test_a_result_fails_only_on_an_explicit_sign(result: ToolResult, failed: bool) -> None:
    assert result.failed is failed
