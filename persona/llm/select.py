"""`scripted | anthropic:MODEL | openai:URL#MODEL` → an LLM client (None for scripted)."""

from __future__ import annotations

from persona.llm.types import LLMClient


def parse_llm_spec(spec: str) -> tuple[str, str, str]:
    """(provider, model, base_url); raises ValueError with the accepted forms."""
    if spec.startswith("anthropic:") and len(spec) > len("anthropic:"):
        return "anthropic", spec.split(":", 1)[1], ""
    if spec.startswith("openai:") and "#" in spec:
        url, _, model = spec.split(":", 1)[1].rpartition("#")
        if url.startswith(("http://", "https://")) and model:
            return "openai", model, url
    raise ValueError(
        f"unknown model spec {spec!r}; expected anthropic:MODEL or openai:URL#MODEL (e.g. openai:http://127.0.0.1:8000/v1#qwen)"
    )


def make_client(spec: str, *, base_url: str | None = None, api_key: str | None = None) -> LLMClient:
    provider, model, url = parse_llm_spec(spec)
    if provider == "anthropic":
        from persona.llm.anthropic_client import AnthropicClient

        return AnthropicClient(model, base_url=base_url, api_key=api_key)
    from persona.llm.openai_client import OpenAICompatibleClient

    return OpenAICompatibleClient(url, model, api_key=api_key)
