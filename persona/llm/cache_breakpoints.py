"""Where the persona's Anthropic requests put their four cache breakpoints, by the model's own
minimum cacheable prefix.

Anthropic caches a prefix only at a `cache_control` breakpoint, and only when the prefix holds
at least the model's minimum: 1,024 tokens for Sonnet 3.7–4.5 and Opus 3–4.1, 2,048 for Haiku
3 / 3.5 and Sonnet 4.6, 4,096 for Opus 4.5+ and Haiku 4.5 (Anthropic's prompt-caching docs).
A breakpoint on a shorter prefix never writes: the tools alone (~616 tokens) never reached any
minimum, so one of the four was always wasted, and the tools with the stable system part
(~1,750) cache only on 1,024-token models. So a breakpoint goes where a prefix reaches the
minimum: on the last stable system part (the rules and the scenario — the live profile after it
changes with a facts edit), else on the last tool; every other one on the last messages, each
where its prefix reaches the minimum (the conversation is the bulk of every request; with a
breakpoint on the last message, each request reads what the one before wrote). Sizes are
estimated as JSON characters / 4, as the persona's compaction estimates them: a breakpoint the
estimate puts just past the minimum may not write — it costs nothing.
"""

from __future__ import annotations

import re
from typing import Any

from persona.llm.types import estimate_tokens

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # the most the API takes
DEFAULT_MINIMUM = 1024  # an unknown model: the most common minimum

_NEW = re.compile(r"claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?!\d)")  # claude-opus-4-5-20251101
_OLD = re.compile(r"claude-(\d+)(?:-(\d{1,2}))?-(opus|sonnet|haiku)")  # claude-3-5-haiku-20241022


def min_cacheable_tokens(model: str) -> int:
    """The shortest prefix `model` caches, by its family and version (a later version of a
    family takes its latest known rule); `DEFAULT_MINIMUM` for a name we can't read."""
    name = model.lower().replace(".", "-")
    if new := _NEW.search(name):
        family, version = new.group(1), (int(new.group(2)), int(new.group(3) or 0))
    elif old := _OLD.search(name):
        family, version = old.group(3), (int(old.group(1)), int(old.group(2) or 0))
    else:
        return DEFAULT_MINIMUM
    if family == "haiku":
        return 4096 if version >= (4, 5) else 2048
    if family == "opus":
        return 4096 if version >= (4, 5) else 1024
    return 2048 if version >= (4, 6) else 1024


def place_breakpoints(
    tools: list[dict[str, Any]],
    system: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    stable: int,
    minimum: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Copies of `tools`, `system` and `messages` (the persona's state: never changed here)
    with breakpoints where their prefix reaches `minimum` tokens; `stable`: how many system
    parts never change in a run."""
    tools, system, messages = [dict(t) for t in tools], [dict(s) for s in system], list(messages)
    used = 0
    size = estimate_tokens(tools)
    stable_end = size + estimate_tokens(system[:stable])
    if stable and stable_end >= minimum:
        system[stable - 1]["cache_control"] = EPHEMERAL
        used += 1
    elif tools and size >= minimum:
        tools[-1]["cache_control"] = EPHEMERAL
        used += 1
    ends = []
    total = size + estimate_tokens(system)
    for message in messages:
        total += estimate_tokens(message)
        ends.append(total)
    for index in range(len(messages) - 1, -1, -1):
        if used == MAX_BREAKPOINTS or ends[index] < minimum:
            break
        messages[index] = with_breakpoint(messages[index])
        used += 1
    return tools, system, messages


def with_breakpoint(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of `message` whose last content block carries a cache breakpoint."""
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    if not blocks:
        return message
    blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
    return {**message, "content": blocks}
