"""`scripted | anthropic:MODEL | openai:URL#MODEL` → an LLM client (None for scripted)."""

from __future__ import annotations

import os

from persona.llm.types import LLMClient

# where each provider's SDK looks for its key when none is given (Anthropic's also takes a
# bearer token); an OpenAI-compatible server on localhost usually needs none
DEFAULT_KEY_VARIABLES = {"anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), "openai": ()}


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


def missing_key(spec: str, api_key_env: str | None = None, *, who: str = "the persona") -> str | None:
    """What is missing for `spec` to reach its model, in one sentence — or None. Asked before a
    run starts, so a missing key is said then, not as an SDK traceback an hour in (or at once,
    under a banner that says no key is needed). `api_key_env` is the variable the settings name;
    when given it must be set, whatever the provider."""
    provider, _, _ = parse_llm_spec(spec)
    if api_key_env:
        if os.environ.get(api_key_env):
            return None
        return f"{who} {spec} needs its API key in ${api_key_env} (named by api_key_env), which is not set"
    wanted = DEFAULT_KEY_VARIABLES[provider]
    if not wanted or any(os.environ.get(name) for name in wanted):
        return None
    offline = "the exact grader" if who == "the judge" else "the scripted persona"
    return (
        f"{who} {spec} calls {provider}'s API and needs a key: set {wanted[0]} "
        f"(or name another variable with api_key_env) — or use {offline}, which needs none"
    )
