"""Parsers for the LLM wire formats the recorder sees: Anthropic Messages, OpenAI Chat
Completions and OpenAI Responses, streamed (server-sent events) or not.

`parse_call()` never raises: a body it can't read yields an `LLMCall` with `api="unknown"` (or
with what it could read) and a warning, so an exchange is recorded raw rather than dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ANTHROPIC = "anthropic-messages"
OPENAI_CHAT = "openai-chat"
OPENAI_RESPONSES = "openai-responses"
UNKNOWN = "unknown"


@dataclass
class ToolCall:
    name: str
    arguments: Any  # parsed JSON when it parses, else the raw string
    id: str = ""


@dataclass
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def total_input(self) -> int:
        """All input tokens, cached or not (Anthropic reports cache reads apart from input)."""
        return self.input + self.cache_read + self.cache_write


@dataclass
class LLMCall:
    """One request/response with the agent's LLM, in a format-independent shape."""

    api: str
    model: str = ""
    system: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    stream: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    server_compactions: int = 0
    applied_edits: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def tool_names(self) -> list[str]:
        return [tool_name(t) for t in self.tools]


def detect_api(path: str) -> str:
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/messages") and not path.endswith("/count_tokens"):
        return ANTHROPIC
    if path.endswith("/chat/completions"):
        return OPENAI_CHAT
    if path.endswith("/responses"):
        return OPENAI_RESPONSES
    return UNKNOWN


def tool_name(tool: Any) -> str:
    if not isinstance(tool, dict):
        return ""
    function = tool.get("function")
    if isinstance(function, dict):
        return str(function.get("name", ""))
    return str(tool.get("name", tool.get("type", "")))


def text_of(value: Any) -> str:
    """Every string inside a JSON value, joined: what a model reads of a message."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for v in value if (t := text_of(v)))
    if isinstance(value, dict):
        return "\n".join(
            t
            for k, v in value.items()
            if k not in ("type", "id", "role", "cache_control") and (t := text_of(v))
        )
    return ""


def _json(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError, RecursionError):  # junk, or nested past the stack
        return None


def sse_events(body: bytes) -> list[Any]:
    """The `data:` payloads of a server-sent-event body, JSON-decoded (non-JSON ones skipped)."""
    out: list[Any] = []
    text = body.decode("utf-8", "replace").replace("\r\n", "\n")
    for block in text.split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.split("\n") if line.startswith("data:"))
        if not data or data == "[DONE]":
            continue
        try:
            out.append(json.loads(data))
        except (ValueError, RecursionError):
            continue
    return out


def parse_call(path: str, request_body: bytes, response_body: bytes, response_type: str = "") -> LLMCall:
    api = detect_api(path)
    request = _json(request_body)
    call = LLMCall(api=api)
    if not isinstance(request, dict):
        if api != UNKNOWN:
            call.warnings.append("request body is not a JSON object")
        call.api = UNKNOWN
        return call
    streamed = "text/event-stream" in response_type or bool(request.get("stream"))
    try:
        if api in _PARSERS:
            read_request, read_stream, read_response = _PARSERS[api]
            read_request(call, request)
            if streamed:
                read_stream(call, sse_events(response_body))
            else:
                read_response(call, _json(response_body))
        else:
            call.model = str(request.get("model", ""))
            call.warnings.append(f"unknown LLM API at {path}; recorded raw")
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        call.warnings.append(f"could not fully parse the {api} exchange: {type(exc).__name__}: {exc}")
    call.stream = streamed
    return call


_SKIP_PARAMS = {"messages", "system", "tools", "input", "instructions"}


def _params(request: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v for k, v in request.items() if k not in _SKIP_PARAMS and isinstance(v, (str, int, float, bool))
    }


# -- Anthropic Messages ------------------------------------------------------------------------


def _anthropic_request(call: LLMCall, request: dict[str, Any]) -> None:
    call.model = str(request.get("model", ""))
    call.system = text_of(request.get("system", ""))
    call.messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    call.tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
    call.params = _params(request)


def _anthropic_blocks(call: LLMCall, blocks: list[Any]) -> None:
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            call.text += str(block.get("text", ""))
        elif kind in ("tool_use", "server_tool_use"):
            call.tool_calls.append(
                ToolCall(str(block.get("name", "")), block.get("input", {}), str(block.get("id", "")))
            )
        elif kind == "compaction":
            call.server_compactions += 1


def _anthropic_usage(call: LLMCall, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    u = call.usage
    u.input = int(usage.get("input_tokens") or u.input)
    u.output = int(usage.get("output_tokens") or u.output)
    u.cache_read = int(usage.get("cache_read_input_tokens") or u.cache_read)
    u.cache_write = int(usage.get("cache_creation_input_tokens") or u.cache_write)


def _anthropic_response(call: LLMCall, response: Any) -> None:
    if not isinstance(response, dict):
        call.warnings.append("response body is not JSON")
        return
    if response.get("type") == "error":
        call.stop_reason = f"error: {text_of(response.get('error'))}"
        return
    _anthropic_blocks(call, response.get("content") or [])
    _anthropic_usage(call, response.get("usage"))
    call.stop_reason = str(response.get("stop_reason") or "")
    _context_management(call, response.get("context_management"))


def _context_management(call: LLMCall, value: Any) -> None:
    if isinstance(value, dict) and isinstance(value.get("applied_edits"), list):
        call.applied_edits.extend(value["applied_edits"])


def _anthropic_stream(call: LLMCall, events: list[Any]) -> None:
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "message_start":
            _anthropic_usage(call, (event.get("message") or {}).get("usage"))
        elif kind == "content_block_start":
            blocks[int(event["index"])] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            index, delta = int(event["index"]), event.get("delta") or {}
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            if delta.get("type") == "text_delta":
                block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                partial[index] = partial.get(index, "") + str(delta.get("partial_json", ""))
            elif delta.get("type") == "compaction_delta":
                block["type"] = "compaction"
        elif kind == "message_delta":
            _anthropic_usage(call, event.get("usage"))
            call.stop_reason = str((event.get("delta") or {}).get("stop_reason") or call.stop_reason)
            _context_management(call, event.get("context_management"))
        elif kind == "error":
            call.stop_reason = f"error: {text_of(event.get('error'))}"
    for index, raw in partial.items():
        try:
            blocks[index]["input"] = json.loads(raw) if raw else {}
        except (ValueError, RecursionError):
            blocks[index]["input"] = raw
            call.warnings.append(f"tool input of block {index} is not valid JSON")
    _anthropic_blocks(call, [blocks[i] for i in sorted(blocks)])


# -- OpenAI Chat Completions -------------------------------------------------------------------


def _openai_chat_request(call: LLMCall, request: dict[str, Any]) -> None:
    call.model = str(request.get("model", ""))
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    call.system = "\n".join(
        text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    )
    call.messages = [m for m in messages if m.get("role") not in ("system", "developer")]
    call.tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
    call.params = _params(request)


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw else {}
        except (ValueError, RecursionError):
            return raw
    return raw


def _openai_usage(call: LLMCall, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
    prompt = int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0)
    call.usage = Usage(
        input=prompt - cached,
        output=int(usage.get("completion_tokens") or usage.get("output_tokens") or 0),
        cache_read=cached,
    )


def _openai_chat_response(call: LLMCall, response: Any) -> None:
    if not isinstance(response, dict):
        call.warnings.append("response body is not JSON")
        return
    if "error" in response and "choices" not in response:
        call.stop_reason = f"error: {text_of(response.get('error'))}"
        return
    choice = (response.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    call.text = text_of(message.get("content") or "")
    for tc in message.get("tool_calls") or []:
        function = tc.get("function") or {}
        call.tool_calls.append(
            ToolCall(
                str(function.get("name", "")), _arguments(function.get("arguments")), str(tc.get("id", ""))
            )
        )
    call.stop_reason = str(choice.get("finish_reason") or "")
    _openai_usage(call, response.get("usage"))


def _openai_chat_stream(call: LLMCall, events: list[Any]) -> None:
    calls: dict[int, dict[str, str]] = {}
    for event in events:
        if not isinstance(event, dict):
            continue
        if event.get("usage"):
            _openai_usage(call, event["usage"])
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                call.text += delta["content"]
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(int(tc.get("index", 0)), {"name": "", "arguments": "", "id": ""})
                function = tc.get("function") or {}
                slot["id"] = tc.get("id") or slot["id"]
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                call.stop_reason = str(choice["finish_reason"])
    for index in sorted(calls):
        slot = calls[index]
        call.tool_calls.append(ToolCall(slot["name"], _arguments(slot["arguments"]), slot["id"]))


# -- OpenAI Responses --------------------------------------------------------------------------


def _responses_request(call: LLMCall, request: dict[str, Any]) -> None:
    call.model = str(request.get("model", ""))
    call.system = text_of(request.get("instructions") or "")
    items = request.get("input")
    if isinstance(items, str):
        call.messages = [{"role": "user", "content": items}]
    else:
        call.messages = [i for i in items or [] if isinstance(i, dict)]
    call.tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
    call.params = _params(request)


def _responses_output(call: LLMCall, items: list[Any]) -> None:
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message":
            call.text += text_of(
                [c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict)]
            )
        elif kind == "function_call":
            call.tool_calls.append(
                ToolCall(
                    str(item.get("name", "")), _arguments(item.get("arguments")), str(item.get("call_id", ""))
                )
            )
        elif kind == "compaction":
            call.server_compactions += 1


def _responses_response(call: LLMCall, response: Any) -> None:
    if not isinstance(response, dict):
        call.warnings.append("response body is not JSON")
        return
    if response.get("error"):
        call.stop_reason = f"error: {text_of(response.get('error'))}"
    _responses_output(call, response.get("output") or [])
    _openai_usage(call, response.get("usage"))
    call.stop_reason = call.stop_reason or str(response.get("status") or "")


def _responses_stream(call: LLMCall, events: list[Any]) -> None:
    done_items: list[Any] = []
    completed: dict[str, Any] | None = None
    for event in events:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "response.output_item.done":
            done_items.append(event.get("item"))
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            completed = event.get("response") or {}
    if completed is not None and completed.get("output"):
        _responses_response(call, completed)
    else:
        _responses_output(call, done_items)
        if completed is not None:
            _openai_usage(call, completed.get("usage"))
            call.stop_reason = str(completed.get("status") or "")


# per API: the request reader, the event-stream reader and the JSON-response reader
_PARSERS: dict[
    str,
    tuple[
        Callable[[LLMCall, dict[str, Any]], None],
        Callable[[LLMCall, list[Any]], None],
        Callable[[LLMCall, Any], None],
    ],
] = {
    ANTHROPIC: (_anthropic_request, _anthropic_stream, _anthropic_response),
    OPENAI_CHAT: (_openai_chat_request, _openai_chat_stream, _openai_chat_response),
    OPENAI_RESPONSES: (_responses_request, _responses_stream, _responses_response),
}
