"""How the blocks of a config that are the same wherever they stand are read: a run's or an
experiment's `limits` and `resources`, the config's `compaction`. Each names the line it was
given (the block's own, from `SourceMap`) in its `ConfigError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gateway.run.placement import Resources, parse_resources
from gateway.run.setting_keys import unknown_key

LIMIT_KEYS = ("wall_seconds", "agent_turns", "spend_usd")


class ConfigError(ValueError):
    """A config that can't run, with the file and line it is about."""

    def __init__(self, path: Path, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


def read_resources(path: Path, line: int, who: str, value: Any) -> Resources | None:
    resources, problem = parse_resources(value)
    if problem:
        raise ConfigError(path, line, f"{who}: {problem}")
    return resources


def read_limits(path: Path, line: int, who: str, value: Any) -> dict[str, float]:
    """A run's limits — the same for every run they apply to (both variants of an experiment):
    `wall_seconds` of running time, `agent_turns` (messages sent), `spend_usd` (agent and
    persona models). A run that reaches one ends `limit_reached`, a failure that is kept."""
    if value is None:
        return {}
    if isinstance(value, dict) and (unknown := sorted(set(map(str, value)) - set(LIMIT_KEYS))):
        raise ConfigError(path, line, f"{who}: {unknown_key(unknown[0], frozenset(LIMIT_KEYS), 'limits')}")
    if (
        not isinstance(value, dict)
        or set(value) - set(LIMIT_KEYS)
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in value.values())
    ):
        raise ConfigError(
            path,
            line,
            f"{who}: `limits` must be {{{', '.join(LIMIT_KEYS)}}}, each a number > 0",
        )
    return {str(k): float(v) for k, v in value.items()}


def read_compaction(path: Path, line: int, value: Any) -> dict[str, int]:
    """The LLM persona's context limits for every run (`{max_tokens, trim_to_tokens}`)."""
    if value is None:
        return {}
    keys = ("max_tokens", "trim_to_tokens")
    if (
        not isinstance(value, dict)
        or set(value) - set(keys)
        or not all(
            isinstance(value.get(k, 1), int) and not isinstance(value.get(k), bool) and value.get(k, 1) > 0
            for k in keys
        )
    ):
        raise ConfigError(
            path,
            line,
            "`compaction` must be {max_tokens: N, trim_to_tokens: M}, whole numbers > 0",
        )
    if value.get("trim_to_tokens", 10000) >= value.get("max_tokens", 30000):
        raise ConfigError(
            path, line, "`compaction.trim_to_tokens` must be below `max_tokens`"
        )
    return dict(value)
