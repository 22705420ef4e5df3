"""Loopback fake LLM providers speaking the exact OpenAI wire formats (the Anthropic one is the
reference agent's stand-in). Each answers a `memory_search` tool call when the last user
message ends with '?', else the text "ok" — enough to see tool calls and text through a proxy."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web


def _wants_tool(body: dict[str, Any]) -> bool:
    items = body.get("messages") or body.get("input") or []
    last = items[-1] if isinstance(items, list) and items else {"content": items}
    content = last.get("content", "") if isinstance(last, dict) else ""
    return isinstance(content, str) and content.rstrip().endswith("?")


async def _sse(request: web.Request, events: list[tuple[str | None, Any]]) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for name, data in events:
        prefix = f"event: {name}\n" if name else ""
        payload = data if isinstance(data, str) else json.dumps(data)
        await response.write(f"{prefix}data: {payload}\n\n".encode())
    await response.write_eof()
    return response


USAGE = {
    "prompt_tokens": 120,
    "completion_tokens": 7,
    "total_tokens": 127,
    "prompt_tokens_details": {"cached_tokens": 100},
}


async def chat_completions(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    tool = _wants_tool(body)
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "memory_search", "arguments": json.dumps({"query": "rent"})},
    }
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": None if tool else "ok"}
        if tool:
            message["tool_calls"] = [call]
        choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if tool else "stop"}
        return web.json_response(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 1,
                "model": body["model"],
                "choices": [choice],
                "usage": USAGE,
            }
        )
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": body["model"]}
    events: list[tuple[str | None, Any]] = [
        (None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
    ]
    if tool:
        args = call["function"]["arguments"]  # type: ignore[index]
        first = {
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": {"name": "memory_search", "arguments": args[:5]},
        }
        rest = {"index": 0, "function": {"arguments": args[5:]}}
        events += [
            (None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [d]}, "finish_reason": None}]})
            for d in (first, rest)
        ]
        events.append((None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}))
    else:
        events += [
            (None, {**base, "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": None}]})
            for t in ("o", "k")
        ]
        events.append((None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    events += [(None, {**base, "choices": [], "usage": USAGE}), (None, "[DONE]")]
    return await _sse(request, events)


async def responses(request: web.Request) -> web.StreamResponse:
    body = await request.json()
    tool = _wants_tool(body)
    item: dict[str, Any] = (
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "memory_search",
            "arguments": '{"query": "rent"}',
            "status": "completed",
        }
        if tool
        else {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
    )
    usage = {
        "input_tokens": 50,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 3,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 53,
    }
    done = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": body["model"],
        "output": [item],
        "usage": usage,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    if not body.get("stream"):
        return web.json_response(done)
    started = {**done, "status": "in_progress", "output": [], "usage": None}
    return await _sse(
        request,
        [
            ("response.created", {"type": "response.created", "sequence_number": 0, "response": started}),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "sequence_number": 1, "output_index": 0, "item": item},
            ),
            ("response.completed", {"type": "response.completed", "sequence_number": 2, "response": done}),
        ],
    )


def openai_app() -> web.Application:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_post("/v1/responses", responses)
    return app


class SlowStream:
    """An SSE upstream that sends its first event, then waits until told before the rest —
    so a test can prove the first chunk reached the client before the upstream finished."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.finished = False

    async def handle(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'data: {"n": 1}\n\n')
        await self.release.wait()
        await response.write(b'data: {"n": 2}\n\n')
        self.finished = True
        await response.write_eof()
        return response

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.handle)
        return app
