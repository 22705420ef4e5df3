"""Anthropic Messages through the official async SDK, with prompt caching.

Four cache breakpoints (`cache_control: ephemeral`, the most the API takes), each where its
prefix reaches the model's minimum cacheable length (`persona.llm.cache_breakpoints`): the last
system part that never changes (`LLMRequest.stable_system`: the universal prompt and the
scenario, not the live profile) — or the last tool, when the system adds nothing stable — and
the last messages. The conversation is the bulk of every persona request; with breakpoints
only on the system and tools it was never cached (billed 0.89× of uncached on marathon-en;
with the last messages, each request reads what the one before wrote — the 20-block lookback
finds it). A facts edit changes the profile part, which invalidates only what follows it.
Retries with backoff on 429, 529 and 5xx are the SDK's (`max_retries`). Key and base URL come
from the arguments, else `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL`.
"""

from __future__ import annotations

import os
from typing import Any

import anthropic

from persona.llm.cache_breakpoints import min_cacheable_tokens, place_breakpoints
from persona.llm.types import LLMError, LLMRequest, LLMResponse, ToolUse, Usage


class AnthropicClient:
    def __init__(
        self, model: str, *, api_key: str | None = None, base_url: str | None = None, max_retries: int = 4
    ) -> None:
        self.model = model
        self.name = f"anthropic:{model}"
        self._sdk = anthropic.AsyncAnthropic(
            api_key=api_key or os.environ.get("ANTHROPIC_API_KEY") or None,
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
            max_retries=max_retries,
        )

    def build(self, request: LLMRequest) -> dict[str, Any]:
        """The request body: what the wire gets (also what tests inspect)."""
        system: list[dict[str, Any]] = [{"type": "text", "text": part} for part in request.system]
        stable = len(system) if request.stable_system is None else min(request.stable_system, len(system))
        tools: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
        tools, system, messages = place_breakpoints(
            tools, system, list(request.messages), stable, min_cacheable_tokens(self.model)
        )
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "system": system,
            "messages": messages,
        }
        if tools:
            body["tools"] = tools
        if request.temperature is not None:  # not a named parameter of current SDKs
            body["extra_body"] = {"temperature": request.temperature}
        return body

    async def complete(self, request: LLMRequest) -> LLMResponse:
        try:
            message = await self._sdk.messages.create(**self.build(request))
        except anthropic.APIError as exc:
            raise LLMError(f"{self.name}: {exc}") from exc
        usage = message.usage
        return LLMResponse(
            text="".join(b.text for b in message.content if b.type == "text"),
            tool_uses=[
                ToolUse(b.id, b.name, dict(b.input) if isinstance(b.input, dict) else {})
                for b in message.content
                if b.type == "tool_use"
            ],
            usage=Usage(
                input=usage.input_tokens,
                output=usage.output_tokens,
                cache_read=usage.cache_read_input_tokens or 0,
                cache_write=usage.cache_creation_input_tokens or 0,
            ),
            stop_reason=str(message.stop_reason or ""),
            model=message.model,
        )

    async def probe(self) -> int | None:
        """One free call before the first message: the model's description. Raises `LLMError`
        when the API can't be reached, refuses the key or has no such model. Anthropic's models
        API says no window: None."""
        try:
            await self._sdk.models.retrieve(self.model)
        except anthropic.APIError as exc:
            raise LLMError(f"{self.name}: {exc}") from exc
        return None

    async def close(self) -> None:
        await self._sdk.close()

