"""Persona settings that point at the fake model (`conftest.fake`)."""

from __future__ import annotations


def persona(kind: str, url: str, **extra: object) -> dict[str, object]:
    if kind == "anthropic":
        return {"driver": "anthropic:fake-persona", "base_url": url, **extra}
    return {"driver": f"openai:{url}/v1#fake-persona", **extra}
