"""`config.jsonc`: which runs to make (JSON5, comments allowed).

    {
      recordings: "recordings",              // optional; relative to this file
      runs: [
        { id: "demo-1", benchmark: "benchmarks/demo-en",
          agent: { adapter: "reference" },   // or { adapter: "http", url: ..., ... }
          persona: { driver: "scripted" } },
      ],
    }

Errors name the file and line. Paths are relative to the config file's folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class ConfigError(ValueError):
    def __init__(self, path: Path, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass(frozen=True)
class RunSpec:
    id: str
    benchmark: Path
    agent: dict[str, Any]
    persona: dict[str, Any] = field(default_factory=lambda: {"driver": "scripted"})


@dataclass(frozen=True)
class Config:
    path: Path
    recordings: Path
    runs: tuple[RunSpec, ...]


def _line_of(raw: str, needle: str) -> int:
    index = raw.find(needle)
    return raw[:index].count("\n") + 1 if index >= 0 else 0


def load_config(path: Path | str) -> Config:
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(path, 0, f"can't read: {exc.strerror}") from None
    try:
        data = json5.loads(raw)
    except ValueError as exc:
        m = re.match(r"<string>:(\d+)\s*(.*)", str(exc))
        raise ConfigError(
            path, int(m.group(1)) if m else 0, f"invalid JSON5: {m.group(2) if m else exc}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(path, 1, "expected an object with a `runs` list")
    base = path.parent
    runs = data.get("runs")
    if not isinstance(runs, list) or not runs:
        raise ConfigError(path, _line_of(raw, "runs"), "expected `runs`: a non-empty list of runs")
    specs: list[RunSpec] = []
    seen: set[str] = set()
    for n, run in enumerate(runs, 1):
        if not isinstance(run, dict):
            raise ConfigError(path, _line_of(raw, "runs"), f"run #{n} must be an object")
        run_id = run.get("id")
        line = _line_of(raw, str(run_id)) if run_id else _line_of(raw, "runs")
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise ConfigError(
                path, line, f"run #{n}: `id` must be letters, digits, '.', '_' or '-' (it names a folder)"
            )
        if run_id in seen:
            raise ConfigError(path, line, f"run id {run_id!r} is used twice")
        seen.add(run_id)
        bench = run.get("benchmark")
        if not isinstance(bench, str):
            raise ConfigError(path, line, f"run {run_id}: `benchmark` must be a folder path")
        agent = run.get("agent")
        if not isinstance(agent, dict) or not isinstance(agent.get("adapter"), str):
            raise ConfigError(path, line, f"run {run_id}: `agent` must be an object with an `adapter` name")
        persona = run.get("persona", {"driver": "scripted"})
        if isinstance(persona, str):
            persona = {"driver": persona}
        if not isinstance(persona, dict):
            raise ConfigError(path, line, f"run {run_id}: `persona` must be a driver name or an object")
        specs.append(RunSpec(run_id, (base / bench).resolve(), agent, persona))
    recordings = data.get("recordings", "recordings")
    if not isinstance(recordings, str):
        raise ConfigError(path, _line_of(raw, "recordings"), "`recordings` must be a folder path")
    return Config(path, (base / recordings).resolve(), tuple(specs))
