"""Any OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp, Ollama, OpenAI itself)
through the official `openai` SDK, with tool calls.

Translates the neutral (Anthropic-shaped) messages: system parts become one system message,
`tool_use` blocks become `tool_calls`, `tool_result` blocks become `role: tool` messages.
Key from the argument or `OPENAI_API_KEY` (local servers accept any).
"""

from __future__ import annotations

import json
import os
from typing import Any

import openai

from persona.llm.types import LLMError, LLMRequest, LLMResponse, ToolUse, Usage


def to_openai_messages(system: list[str], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "\n\n".join(system)}] if system else []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str):
            out.append({"role": m["role"], "content": content})
            continue
        blocks = content if isinstance(content, list) else []
        texts = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        if m["role"] == "assistant":
            message: dict[str, Any] = {"role": "assistant", "content": texts or None}
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": json.dumps(b.get("input", {}))},
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            if calls:
                message["tool_calls"] = calls
            out.append(message)
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                result = b.get("content")
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": b["tool_use_id"],
                        "content": result if isinstance(result, str) else json.dumps(result),
                    }
                )
        if texts:
            out.append({"role": "user", "content": texts})
    return out


class OpenAICompatibleClient:
    def __init__(
        self, base_url: str, model: str, *, api_key: str | None = None, max_retries: int = 4
    ) -> None:
        self.model = model
        self.name = f"openai:{base_url}#{model}"
        self._sdk = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "not-needed",
            max_retries=max_retries,
        )

    def build(self, request: LLMRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": to_openai_messages(request.system, request.messages),
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in request.tools
            ]
        return body

    async def complete(self, request: LLMRequest) -> LLMResponse:
        try:
            completion = await self._sdk.chat.completions.create(**self.build(request))
        except openai.APIError as exc:
            raise LLMError(f"{self.name}: {exc}") from exc
        if not completion.choices:
            raise LLMError(f"{self.name}: the response has no choices")
        choice = completion.choices[0]
        uses = []
        for call in choice.message.tool_calls or []:
            function = getattr(call, "function", None)
            if function is None:
                continue
            try:
                arguments = json.loads(function.arguments or "{}")
            except ValueError:
                arguments = {"_unparsed": function.arguments}
            uses.append(
                ToolUse(
                    call.id,
                    function.name,
                    arguments if isinstance(arguments, dict) else {"_value": arguments},
                )
            )
        usage = completion.usage
        cached = 0
        if usage is not None and usage.prompt_tokens_details is not None:
            cached = usage.prompt_tokens_details.cached_tokens or 0
        return LLMResponse(
            text=choice.message.content or "",
            tool_uses=uses,
            usage=Usage(
                input=(usage.prompt_tokens - cached) if usage else 0,
                output=usage.completion_tokens if usage else 0,
                cache_read=cached,
            ),
            stop_reason=str(choice.finish_reason or ""),
            model=completion.model,
        )

    async def probe(self) -> int | None:
        """One free call before the first message: the server's model list. Raises `LLMError`
        when the server can't be reached, refuses the key, or lists models but not this one
        (a misspelt name would fail at the first message, after the agent started); the
        model's context window when the server says it (vLLM: `max_model_len`; llama.cpp and
        others say nothing)."""
        try:
            models = await self._sdk.models.list()
        except openai.APIError as exc:
            raise LLMError(f"{self.name}: {exc}") from exc
        listed = [model.id for model in models.data]
        if listed and self.model not in listed:
            shown = ", ".join(listed[:10]) + (f" and {len(listed) - 10} more" if len(listed) > 10 else "")
            raise LLMError(f"{self.name}: the server has no model {self.model!r}; it lists {shown}")
        for model in models.data:
            extra = model.model_extra or {}
            window = extra.get("max_model_len") or extra.get("context_length")
            if model.id == self.model and isinstance(window, int) and not isinstance(window, bool) and window > 0:
                return window
        return None

    async def close(self) -> None:
        await self._sdk.close()
