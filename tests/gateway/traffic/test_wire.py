from __future__ import annotations

import json
import random

from gateway.traffic.wire import parse_call, sse_events


def test_openai_chat_stream_joins_tool_call_fragments_by_index() -> None:
    chunks = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "a", "function": {"name": "memory", "arguments": '{"act'}}
                        ]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 1, "id": "b", "function": {"name": "session_search", "arguments": "{}"}}
                        ]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": 'ion": "add"}'}}]},
                    "finish_reason": "tool_calls",
                }
            ]
        },
        {"choices": [], "usage": None},
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    call = parse_call(
        "/v1/chat/completions",
        b'{"model": "m", "stream": true, "messages": []}',
        body.encode(),
        "text/event-stream",
    )
    assert [(t.name, t.arguments) for t in call.tool_calls] == [
        ("memory", {"action": "add"}),
        ("session_search", {}),
    ]
    assert call.stop_reason == "tool_calls" and not call.warnings


def test_anthropic_error_response_is_kept_as_the_stop_reason() -> None:
    body = json.dumps(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    ).encode()
    call = parse_call("/v1/messages", b'{"model": "m", "messages": []}', body, "application/json")
    assert call.stop_reason.startswith("error:") and "Overloaded" in call.stop_reason


def test_unknown_format_is_recorded_raw_with_a_warning() -> None:
    call = parse_call(
        "/api/generate", b'{"model": "llama", "prompt": "hi"}', b'{"response": "yo"}', "application/json"
    )
    assert call.api == "unknown" and call.model == "llama"
    assert any("unknown LLM API" in w for w in call.warnings)


def test_sse_tolerates_comments_crlf_and_garbage() -> None:
    body = b': ping\r\n\r\ndata: {"a": 1}\r\n\r\ndata: not json\n\nevent: x\ndata: {"b":\ndata: 2}\n\n'
    assert sse_events(body) == [{"a": 1}, {"b": 2}]


def test_corrupted_bodies_never_raise() -> None:
    rng = random.Random(3)
    good_req = json.dumps(
        {
            "model": "m",
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": "x"}],
        }
    ).encode()
    good_resp = b'event: message_start\ndata: {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}\n\n'
    for path in ("/v1/messages", "/v1/chat/completions", "/v1/responses", "/x"):
        for _ in range(300):
            req = bytearray(good_req)
            resp = bytearray(good_resp)
            for buf in (req, resp):
                for _ in range(rng.randint(0, 4)):
                    if buf:
                        buf[rng.randrange(len(buf))] = rng.randrange(256)
                if rng.random() < 0.3:
                    del buf[rng.randint(0, len(buf)) :]
            call = parse_call(
                path, bytes(req), bytes(resp), rng.choice(["text/event-stream", "application/json", ""])
            )
            assert call.api in ("anthropic-messages", "openai-chat", "openai-responses", "unknown")
