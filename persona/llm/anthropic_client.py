"""Anthropic Messages through the official async SDK, with prompt caching.

Cache breakpoints (`cache_control: ephemeral`) go on each system part (universal prompt,
scenario, profile — at most three) and on the last tool, so consecutive persona calls share a
cached prefix. Retries with backoff on 429, 529 and 5xx are the SDK's (`max_retries`).
Key and base URL come from the arguments, else `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL`.
"""

from __future__ import annotations

import os
from typing import Any

import anthropic

from persona.llm.types import LLMError, LLMRequest, LLMResponse, ToolUse, Usage

MAX_SYSTEM_BREAKPOINTS = 3  # the API allows four in all; the tools take the fourth


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
        system = []
        for index, part in enumerate(request.system):
            block: dict[str, Any] = {"type": "text", "text": part}
            if index < MAX_SYSTEM_BREAKPOINTS:
                block["cache_control"] = {"type": "ephemeral"}
            system.append(block)
        tools: list[dict[str, Any]] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
        if tools:
            tools[-1]["cache_control"] = {"type": "ephemeral"}
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "system": system,
            "messages": request.messages,
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

    async def close(self) -> None:
        await self._sdk.close()
