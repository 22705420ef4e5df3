"""Agent traffic profiles: which tool calls are memory calls, which texts mark compaction.

Profiles are data (`profiles.json5`); a run's `llm` settings pick one by name and may add
patterns of their own. `TrafficProfile.merged()` of all known profiles is the default, so
`marathon proxy` without `--profile` still recognises every known agent.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import json5

from adapters.profiles import resolve

PATH_KEYS = ("path", "file_path", "file", "filename", "target_file")
_READ_WORDS = ("search", "get", "read", "view", "list", "find", "recall")


@dataclass(frozen=True)
class MemoryCallInfo:
    tool: str
    operation: str  # read | write
    target: str = ""
    call_id: str = ""  # the tool call's id in its wire format: its result names it


SIGNATURE_FIELDS = ("summary", "flush", "replay", "cleared")
PATTERN_FIELDS = (
    "memory_tools",
    "file_tools",
    "memory_paths",
    *SIGNATURE_FIELDS,
    "context_noise",
    "background",
    "secret_names",
)


@dataclass(frozen=True)
class TrafficProfile:
    name: str
    memory_tools: tuple[str, ...] = ()
    wrapper_tools: dict[str, str] = field(default_factory=dict)
    file_tools: tuple[str, ...] = ()
    memory_paths: tuple[str, ...] = ()
    summary: tuple[str, ...] = ()
    flush: tuple[str, ...] = ()
    replay: tuple[str, ...] = ()
    cleared: tuple[str, ...] = ()
    context_noise: tuple[str, ...] = ()
    background: tuple[str, ...] = ()  # regexes of calls the agent makes on its own (heartbeats, titles)
    secret_names: tuple[str, ...] = ()  # headers, body fields, query parameters holding a secret
    origin: dict[str, str] = field(default_factory=dict)  # signature text → the agent it belongs to

    def agent_of(self, marker: str) -> str:
        return self.origin.get(marker, self.name)

    @classmethod
    def from_dict(cls, name: str, data: dict[str, Any]) -> TrafficProfile:
        def strings(key: str) -> tuple[str, ...]:
            value = data.get(key, [])
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        wrappers = data.get("wrapper_tools", {})
        signatures = [m for key in SIGNATURE_FIELDS for m in strings(key)]
        patterns: dict[str, Any] = {f: strings(f) for f in PATTERN_FIELDS}
        return cls(
            name=name,
            wrapper_tools={str(k): str(v) for k, v in wrappers.items()} if isinstance(wrappers, dict) else {},
            origin=dict.fromkeys(signatures, name),
            **patterns,
        )

    @classmethod
    def merged(cls, name: str, profiles: list[TrafficProfile]) -> TrafficProfile:
        wrappers: dict[str, str] = {}
        origin: dict[str, str] = {}
        for p in profiles:
            wrappers.update(p.wrapper_tools)
            origin.update(p.origin)
        patterns: dict[str, Any] = {
            f: tuple(dict.fromkeys(v for p in profiles for v in getattr(p, f))) for f in PATTERN_FIELDS
        }
        return cls(name=name, wrapper_tools=wrappers, origin=origin, **patterns)

    def background_pattern(self, system: str, last_user: str) -> str | None:
        """A call the agent makes on its own — a heartbeat turn, a title for the chat — found by
        the profile's `background` patterns in its system prompt or last user message (such a call
        is recorded but never counted against the question being asked): the first pattern found,
        recorded beside the call as `decided_by`, or None."""
        return next((p for p in self.background if re.search(p, system) or re.search(p, last_user)), None)

    def users_words(self, text: str) -> str:
        """`text` without the context the agent wraps around the user's words."""
        for pattern in self.context_noise:
            text = re.sub(pattern, "", text)
        return " ".join(text.split())

    def memory_call(self, name: str, arguments: Any) -> MemoryCallInfo | None:
        """Is the tool call `name(arguments)` a memory call under this profile?"""
        args = arguments if isinstance(arguments, dict) else {}
        if name in self.wrapper_tools:
            inner = args.get(self.wrapper_tools[name])
            if isinstance(inner, str) and inner:
                inner_args = args.get("args", args.get("arguments", {}))
                found = self.memory_call(inner, inner_args)
                return (
                    MemoryCallInfo(f"{name}:{found.tool}", found.operation, found.target) if found else None
                )
            return None
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in self.memory_tools):
            return MemoryCallInfo(name, _operation(name, args), _target(args))
        if name in self.file_tools:
            path = _target(args)
            if path and self._memory_path(path):
                operation = "read" if name in ("read", "view", "ls") else "write"
                return MemoryCallInfo(name, operation, path)
        return None

    def _memory_path(self, path: str) -> bool:
        parts = path.replace("\\", "/").split("/")
        suffixes = ["/".join(parts[i:]) for i in range(len(parts))]
        return any(fnmatch.fnmatchcase(s, g) for g in self.memory_paths for s in suffixes)


def _target(args: dict[str, Any]) -> str:
    for key in PATH_KEYS:
        if isinstance(args.get(key), str):
            return str(args[key])
    return ""


def _operation(name: str, args: dict[str, Any]) -> str:
    verb = args.get("command") or args.get("action") or ""
    word = f"{name} {verb}".lower()
    if isinstance(verb, str) and verb:
        return "read" if any(w in verb.lower() for w in _READ_WORDS) else "write"
    return "read" if any(w in word for w in _READ_WORDS) else "write"


@cache
def known_profiles() -> dict[str, TrafficProfile]:
    data = json5.loads((Path(__file__).parent / "profiles.json5").read_text(encoding="utf-8"))
    return {name: TrafficProfile.from_dict(name, value) for name, value in data.items()}


def load_profile(name: str | None, extra: dict[str, Any] | None = None) -> TrafficProfile:
    """A known profile by name (all of them merged when `name` is None), plus `extra` patterns."""
    known = known_profiles()
    if name is None:
        base = TrafficProfile.merged("any known agent", list(known.values()))
    elif name in known:
        base = known[name]
    else:
        raise ValueError(f"unknown agent traffic profile {name!r}; known: {', '.join(sorted(known))}")
    if extra:
        base = TrafficProfile.merged(base.name, [base, TrafficProfile.from_dict("extra", extra)])
    return base


def agent_profile(settings: dict[str, Any]) -> TrafficProfile:
    """The recorder's profile for an agent's settings (as a run's header keeps them): the one
    its `llm.profile` names (the reference agent's own by default, else every known one), plus
    the patterns and secret names its `llm` settings add."""
    settings = resolve(settings)
    llm = settings.get("llm") if isinstance(settings.get("llm"), dict) else {}
    assert isinstance(llm, dict)
    default = "reference" if settings.get("adapter") == "reference" else None
    extra = {k: v for k, v in llm.items() if k not in ("upstream", "port", "profile")}
    return load_profile(llm.get("profile", default), extra)
