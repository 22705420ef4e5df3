"""Agent profiles: how to reach, start and watch known agents (data files, `*.jsonc`).

A run's `agent: {profile: NAME, ...}` starts from the profile and overrides it key by key
(nested objects merged). `marathon profiles` lists them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import json5

HERE = Path(__file__).parent


def profile_names() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.jsonc"))


def read_profile(name: str) -> dict[str, Any]:
    path = HERE / f"{name}.jsonc"
    if not path.is_file():
        raise ValueError(f"unknown agent profile {name!r}; known: {', '.join(profile_names())}")
    data: dict[str, Any] = json5.loads(path.read_text(encoding="utf-8"))
    return data


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        out[key] = (
            merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
        )
    return out


def resolve(settings: dict[str, Any]) -> dict[str, Any]:
    """The agent settings with their profile (if any) applied underneath."""
    name = settings.get("profile")
    if not name:
        return settings
    profile = read_profile(str(name))
    profile.pop("description", None)
    return merge(profile, {k: v for k, v in settings.items() if k != "profile"}) | {"profile": name}
