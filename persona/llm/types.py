"""The `LLMClient` protocol and its format-neutral request and response.

Messages use Anthropic's block shape — `{"role", "content": [text | tool_use | tool_result]}` —
which every client translates to its wire format. System text comes as parts so that a client
with prompt caching can put a cache breakpoint after each stable part (universal prompt,
scenario, profile) and after the tools: consecutive calls then share a cached prefix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def add(self, other: Usage) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write


@dataclass
class LLMRequest:
    system: list[str]
    messages: list[dict[str, Any]]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 1024
    temperature: float | None = None  # None: the provider's default
    # how many leading system parts never change during a run (the rest — the live profile —
    # changes with a facts edit): where a provider's cache breakpoint on the system goes
    stable_system: int | None = None  # None: all of them


@dataclass
class LLMResponse:
    text: str
    tool_uses: list[ToolUse] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    model: str = ""

    def to_record(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "tool_uses": [{"id": t.id, "name": t.name, "arguments": t.arguments} for t in self.tool_uses],
            "usage": vars(self.usage),
            "stop_reason": self.stop_reason,
            "model": self.model,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> LLMResponse:
        return cls(
            text=str(record.get("text", "")),
            tool_uses=[
                ToolUse(str(t["id"]), str(t["name"]), dict(t.get("arguments") or {}))
                for t in record.get("tool_uses", [])
            ],
            usage=Usage(
                **{
                    k: int(v)
                    for k, v in dict(record.get("usage") or {}).items()
                    if k in ("input", "output", "cache_read", "cache_write")
                }
            ),
            stop_reason=str(record.get("stop_reason", "")),
            model=str(record.get("model", "")),
        )


class LLMError(RuntimeError):
    """The model could not be reached or answered unusably, after the client's retries."""


@runtime_checkable
class ProbingClient(Protocol):
    """A client that can reach its model without a paid call (a model listing): the context
    window the server reports, or None."""

    async def probe(self) -> int | None: ...


@runtime_checkable
class ReplayingClient(Protocol):
    """A client that answers a resume from the log first: `last_replayed` says whether the last
    answer was replayed (a replayed message is not new progress)."""

    last_replayed: bool


async def probe(client: object) -> int | None:
    """The window `client` reports, or None when it can't be probed."""
    return await client.probe() if isinstance(client, ProbingClient) else None


def replayed(client: object) -> bool:
    return isinstance(client, ReplayingClient) and client.last_replayed


class LLMClient(Protocol):
    """Messages + tools → response with usage. `name` says provider and model (for reports)."""

    name: str

    async def complete(self, request: LLMRequest) -> LLMResponse: ...

    async def close(self) -> None: ...


def estimate_tokens(value: Any) -> int:
    """About four characters per token, over the JSON of `value`. The persona's sizes are only
    compared with its own limits (compaction, cache minimums, the window's share), so an
    estimate is enough and needs no provider call; the provider's exact counts are in the
    usage of every logged response."""
    return len(json.dumps(value, ensure_ascii=False)) // 4
