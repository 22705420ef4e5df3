"""Where the persona's Anthropic requests put their cache breakpoints: only where a prefix
reaches the model's own minimum, so none of the four is wasted (issue 45 item 7)."""

from __future__ import annotations

from typing import Any

import pytest

from persona.llm.cache_breakpoints import MAX_BREAKPOINTS, min_cacheable_tokens, place_breakpoints
from persona.llm.types import estimate_tokens


@pytest.mark.parametrize(
    ("model", "minimum"),
    [
        ("claude-sonnet-4-5-20250929", 1024),
        ("claude-sonnet-4-20250514", 1024),
        ("claude-3-7-sonnet-20250219", 1024),
        ("claude-opus-4-1", 1024),
        ("claude-opus-4-20250514", 1024),
        ("claude-sonnet-4-6", 2048),
        ("claude-3-5-haiku-20241022", 2048),
        ("claude-3-haiku-20240307", 2048),
        ("claude-opus-4-5-20251101", 4096),
        ("claude-opus-4.6", 4096),
        ("claude-haiku-4-5", 4096),
        ("fake-persona", 1024),  # a name we can't read: the common minimum
    ],
)
def test_each_model_has_its_documented_minimum(model: str, minimum: int) -> None:
    assert min_cacheable_tokens(model) == minimum


def _marked(blocks: list[dict[str, Any]]) -> list[int]:
    return [i for i, b in enumerate(blocks) if "cache_control" in b]


def _message_marks(messages: list[dict[str, Any]]) -> list[int]:
    return [i for i, m in enumerate(messages) if any("cache_control" in b for b in m["content"])]


TOOLS = [{"name": f"tool{n}", "description": "d" * 300, "input_schema": {}} for n in range(8)]  # ~650 tokens
SYSTEM = [{"type": "text", "text": "r" * 4000}, {"type": "text", "text": "s" * 500}, {"type": "text", "text": "p" * 800}]
TALK = [{"role": "user" if n % 2 == 0 else "assistant", "content": [{"type": "text", "text": "m" * 2000}]} for n in range(12)]


def test_no_breakpoint_sits_below_the_minimum_and_none_is_wasted_on_the_tools() -> None:
    """The tools alone (~650 tokens) reach no model's minimum: their breakpoint never wrote."""
    for minimum in (1024, 2048, 4096):
        tools, system, messages = place_breakpoints(TOOLS, SYSTEM, TALK, 2, minimum)
        assert _marked(tools) == []
        stable_end = estimate_tokens(TOOLS) + estimate_tokens(SYSTEM[:2])
        assert _marked(system) == ([1] if stable_end >= minimum else [])
        total = estimate_tokens(TOOLS) + estimate_tokens(SYSTEM)
        ends = [total + estimate_tokens(TALK[: i + 1]) for i in range(len(TALK))]
        marks = _message_marks(messages)
        assert marks and all(ends[i] >= minimum for i in marks)
        assert marks == list(range(len(TALK) - len(marks), len(TALK)))  # the last messages
        assert len(_marked(system)) + len(marks) == MAX_BREAKPOINTS


def test_a_short_conversation_on_a_4096_model_gets_no_breakpoint_it_cant_use() -> None:
    short = TALK[:2]
    tools, system, messages = place_breakpoints(TOOLS, SYSTEM, short, 2, 4096)
    assert _marked(tools) == _marked(system) == _message_marks(messages) == []
    _, system, messages = place_breakpoints(TOOLS, SYSTEM, short, 2, 1024)
    assert _marked(system) == [1] and _message_marks(messages) == [0, 1]


def test_the_persona_state_is_never_changed() -> None:
    before = repr((TOOLS, SYSTEM, TALK))
    place_breakpoints(TOOLS, SYSTEM, TALK, 2, 1024)
    assert repr((TOOLS, SYSTEM, TALK)) == before
