"""Agent profiles: how to reach, start and watch known agents (data files, `*.jsonc`).

A run's `agent: {profile: NAME, ...}` starts from the profile and overrides it key by key
(nested objects merged). `marathon profiles` lists them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import json5

from adapters.profiles.verification import verifications

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


def with_overrides(settings: dict[str, Any], assignments: list[str]) -> dict[str, Any]:
    """`settings` with `KEY=VALUE` assignments applied (`--set url=http://127.0.0.1:9000/chat`,
    `--set llm.port=8799`, `--set 'compact_commands=["/compact"]'`): dotted keys reach into
    nested objects; values are JSON5 (a bare word is a string). Raises ValueError."""
    out = dict(settings)
    for assignment in assignments:
        key, sep, raw = assignment.partition("=")
        if not sep or not key.strip() or any(not part for part in key.strip().split(".")):
            raise ValueError(f"--set {assignment!r}: expected KEY=VALUE (KEY may be dotted: llm.port=8799)")
        try:
            value: Any = json5.loads(raw)
        except ValueError:
            value = raw
        *path, last = key.strip().split(".")
        override: dict[str, Any] = {last: value}
        for part in reversed(path):
            override = {part: override}
        out = merge(out, override)
    return out


def resolve(settings: dict[str, Any]) -> dict[str, Any]:
    """The agent settings with their profile (if any) applied underneath."""
    name = settings.get("profile")
    if not name:
        return settings
    profile = read_profile(str(name))
    profile.pop("description", None)
    return merge(profile, {k: v for k, v in settings.items() if k != "profile"}) | {"profile": name}


# placeholders the lifecycle fills itself; any other ${NAME} is the user's environment
_FILLED = {"STATE_DIR", "RUN_DIR", "LLM_URL", "PORT", "TELEGRAM_API_ROOT", "TELEGRAM_BOT_TOKEN", "AGENT_DIR", "AGENT_INSTALL"}


def describe_profile(name: str) -> list[str]:
    """What `marathon profiles` says of a profile: what it needs, whether it was verified
    against the real agent (which version), and what it can do."""
    profile = read_profile(name)
    text = json5.dumps(profile)
    envs = sorted({m for m in re.findall(r"\$\{([A-Z_][A-Z0-9_]*)\}", text)} - _FILLED)
    process = profile.get("process") if isinstance(profile.get("process"), dict) else {}
    command = process.get("command") if isinstance(process, dict) else None
    ports = sorted(
        {p for p in re.findall(r"127\.0\.0\.1:(\d+)", text)}
        | {str(profile.get("llm", {}).get("port", "")), str(profile.get("port", ""))} - {""}
    )
    needs = []
    if isinstance(command, list) and command:
        needs.append(f"binary {command[0]} (PATH, or MARATHON_{str(command[0]).upper()}_BIN)")
        if command[0] == "openclaw":
            needs.append("Node ≥ 24 (PATH, or MARATHON_NODE_DIR)")
    if envs:
        needs.append("env " + ", ".join(envs))
    if ports:
        needs.append("ports " + ", ".join(ports))
    verified = verifications().get(name)
    adapter = profile.get("adapter", "?")
    session = {
        "telegram": f"new session by {' then '.join(profile.get('new_session_commands', ['/new']))}",
        "openclaw-ws": "new session = a new session key",
        "websocket": "new session = a new session id",
        "http": "new session = a new session id",
        "reference": "new session = a new session id",
        "letta": "new session = reset-messages (conversation cleared, memory blocks kept)",
    }.get(str(adapter), "new session: ?")
    compact = profile.get("compact_commands") or (["/compact"] if adapter == "reference" else [])
    can = [session, f"compact by {', '.join(compact)}" if compact else "no compact()"]
    if profile.get("initiated") or profile.get("ignore") or adapter == "openclaw-ws":
        can.append("its own messages told apart (heartbeats, status notes)")
    return [
        f"{name} ({adapter}): {profile.get('description', '')}",
        f"  needs: {'; '.join(needs) or 'nothing beyond marathonbench'}",
        "  verified: " + (verified.line() if verified is not None else "not against the real agent"),
        f"  can: {'; '.join(can)}",
    ]
