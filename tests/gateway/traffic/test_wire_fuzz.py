"""Property test: the LLM-traffic parsers take any bytes without raising."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.traffic.wire import parse_call

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "role",
                    "content",
                    "messages",
                    "tools",
                    "model",
                    "stream",
                    "choices",
                    "delta",
                    "usage",
                    "index",
                    "input",
                    "name",
                    "output",
                    "item",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(
    path=st.sampled_from(["/v1/messages", "/v1/chat/completions", "/v1/responses", "/x"]),
    request=json_values,
    events=st.lists(json_values, max_size=6),
    raw=st.binary(max_size=80),
    streamed=st.booleans(),
)
def test_parsers_never_raise(
    path: str, request: object, events: list[object], raw: bytes, streamed: bool
) -> None:
    body = json.dumps(request).encode()
    response = (
        b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + raw
        if streamed
        else json.dumps(events[0] if events else None).encode() + raw
    )
    call = parse_call(path, body, response, "text/event-stream" if streamed else "application/json")
    assert call.api in ("anthropic-messages", "openai-chat", "openai-responses", "unknown")
