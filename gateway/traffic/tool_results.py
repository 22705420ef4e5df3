"""What a tool call returned, read from the next request the agent sends its model.

A model's tool call and the tool's result cross the recorder in two exchanges: the call in a
response, its result in the following request (Anthropic `tool_result` blocks, OpenAI chat
`role: "tool"` messages, Responses `function_call_output` items), tied by the call's id. The
recorder uses this to tell a memory write that stored something from one the tool refused
(Hermes: "Memory at 2,164/2,200 chars … would exceed the limit").

What a caller may rely on: `tool_results` never raises on a malformed body (a result it can't
read is absent); `failed` is True only on an explicit sign — an `is_error` flag, a JSON result
saying `success`/`ok` false, `status` error/failed or a non-empty `error`, or a text starting
"Error" — so an unknown shape counts as succeeded, never as a failure we made up.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from gateway.traffic.wire import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES

_ERROR_TEXT = re.compile(r"^\s*(error|failed|failure)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    text: str
    is_error: bool = False

    @property
    def failed(self) -> bool:
        if self.is_error:
            return True
        try:
            data = json.loads(self.text)
        except ValueError:
            return bool(_ERROR_TEXT.match(self.text))
        if not isinstance(data, dict):
            return False
        if data.get("success") is False or data.get("ok") is False:
            return True
        if str(data.get("status", "")).lower() in ("error", "failed", "failure"):
            return True
        return bool(data.get("error"))


_LISTS = ("results", "items", "memories", "matches", "entries", "hits")


def result_items(text: str) -> int:
    """How many items a tool result holds: a JSON list's entries, or those of its first list
    under a usual key; else its non-empty lines (0 for an empty result)."""
    try:
        data = json.loads(text)
    except ValueError:
        return sum(1 for line in text.splitlines() if line.strip())
    if isinstance(data, list):
        return len(data)
    if isinstance(data, dict):
        for key in _LISTS:
            if isinstance(data.get(key), list):
                return len(data[key])
    return 1 if text.strip() else 0


def tool_results(api: str, messages: list[dict[str, Any]]) -> dict[str, ToolResult]:
    """The tool results a request carries, by the id of the call they answer."""
    found: dict[str, ToolResult] = {}
    for message in messages:
        if not isinstance(message, dict):
            continue
        for result in _results(api, message):
            found[result.call_id] = result
    return found


def _results(api: str, message: dict[str, Any]) -> list[ToolResult]:
    if api == ANTHROPIC and isinstance(message.get("content"), list):
        return [
            ToolResult(str(b.get("tool_use_id", "")), _text(b.get("content")), bool(b.get("is_error")))
            for b in message["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id")
        ]
    if api == OPENAI_CHAT and message.get("role") == "tool" and message.get("tool_call_id"):
        return [ToolResult(str(message["tool_call_id"]), _text(message.get("content")))]
    if api == OPENAI_RESPONSES and message.get("type") == "function_call_output" and message.get("call_id"):
        return [ToolResult(str(message["call_id"]), _text(message.get("output")))]
    return []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""
