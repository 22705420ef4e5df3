"""Where runs execute (`executor`) and what each run asks of a node (`resources`).

    executor: "local",                               // the default: runs in this process
    executor: { ray: { address: "auto",              // a running cluster this machine is part of
                       runtime_env: { ... },         // Ray's runtime_env, passed as given
                       max_retries: 3 } },           // a run whose node died starts again elsewhere
    resources: { num_cpus: 1, memory: "1 GiB", custom: { agent_slot: 1 } }

`resources` may stand in a run, an experiment, or an agent's settings (a profile says what its
agent needs); the first of those that has it applies. What a caller may rely on: the parsers
return a problem sentence instead of raising, so the config loader can name file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from adapters.profiles import resolve

EXECUTOR_KEYS = ("address", "runtime_env", "max_retries")
RESOURCE_KEYS = ("num_cpus", "memory", "custom")
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class RayExecutor:
    """Run each run as one Ray task on a cluster; this process stays the driver and keeps the
    recordings. `address` is what `ray.init` takes: "auto" (the cluster this machine belongs
    to), "HOST:PORT" of its head, or "local" (a Ray started for this command alone)."""

    address: str = "auto"
    runtime_env: dict[str, Any] = field(default_factory=dict)
    max_retries: int = 3


def parse_executor(value: Any) -> tuple[RayExecutor | None, str]:
    """(`None` for local, or the Ray settings; a problem sentence, "" when fine)."""
    if value is None or value == "local":
        return None, ""
    if value == "ray":
        return RayExecutor(), ""
    if not isinstance(value, dict) or set(value) != {"ray"}:
        return None, '`executor` must be "local", "ray" or {ray: {address, runtime_env, max_retries}}'
    ray = value["ray"] if value["ray"] is not None else {}
    if not isinstance(ray, dict):
        return None, "`executor.ray` must be an object: {address, runtime_env, max_retries}"
    unknown = sorted(set(ray) - set(EXECUTOR_KEYS))
    if unknown:
        return (
            None,
            f"`executor.ray` has unknown key(s) {', '.join(unknown)}; known: {', '.join(EXECUTOR_KEYS)}",
        )
    address = ray.get("address", "auto")
    problem = address_problem(address)
    if problem:
        return None, problem
    runtime_env = ray.get("runtime_env", {})
    if not isinstance(runtime_env, dict):
        return None, "`executor.ray.runtime_env` must be an object (Ray's runtime_env)"
    if problem := runtime_env_problem(runtime_env):
        return None, problem
    retries = ray.get("max_retries", 3)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        return None, "`executor.ray.max_retries` must be a whole number ≥ 0"
    return RayExecutor(address, runtime_env, retries), ""


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# the runtime_env fields Ray checks only on the cluster, with a traceback: their shapes, said here
_RUNTIME_ENV_SHAPES: dict[str, tuple[str, Any]] = {
    "pip": ("a list of requirements (or a requirements file's path)", lambda v: isinstance(v, str) or _strings(v)),
    "env_vars": ("an object of names to string values", lambda v: isinstance(v, dict) and all(
        isinstance(k, str) and isinstance(x, str) for k, x in v.items())),
    "working_dir": ("a path or URI", lambda v: isinstance(v, str)),
    "py_modules": ("a list of paths or URIs", _strings),
    "excludes": ("a list of patterns", _strings),
}  # fmt: skip


def runtime_env_problem(runtime_env: dict[str, Any]) -> str:
    """Why a field of Ray's runtime_env can't work ("" when all can): `{pip: 5}` is said here,
    naming the field, instead of a traceback from Ray on the cluster."""
    for name, (shape, fits) in _RUNTIME_ENV_SHAPES.items():
        if name in runtime_env and not fits(runtime_env[name]):
            return f"`executor.ray.runtime_env.{name}` must be {shape}, not {runtime_env[name]!r}"
    return ""


def address_problem(address: Any) -> str:
    """Why `address` can't be used ("" when it can). Ray Client (`ray://`) is refused: there the
    driver is not a node of the cluster, and the run logs are written on the driver's disk by a
    process pinned to the driver's node."""
    if not isinstance(address, str) or not address:
        return '`executor.ray.address` must be "auto", "local" or HOST:PORT of the head node'
    if address.startswith("ray://"):
        return (
            f"Ray Client addresses ({address}) are not supported: run marathon on a node of the "
            'cluster (e.g. the head) with address "auto" — the recordings are written on the '
            "driver's disk by an actor on the driver's node, which a Ray Client driver doesn't have"
        )
    return ""


@dataclass(frozen=True)
class Resources:
    """What one run's Ray task reserves on its node: CPUs (fractions allowed), memory (bytes)
    and custom resources such as `agent_slot` (a node declares how many agents it can hold)."""

    num_cpus: float = 1.0
    memory: int | None = None
    custom: dict[str, float] = field(default_factory=dict)

    def ray_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"num_cpus": self.num_cpus}
        if self.memory is not None:
            options["memory"] = self.memory
        if self.custom:
            options["resources"] = dict(self.custom)
        return options

    def to_json(self) -> dict[str, Any]:
        return {"num_cpus": self.num_cpus, "memory": self.memory, "custom": dict(self.custom)}


def parse_resources(value: Any) -> tuple[Resources | None, str]:
    """(`None` when not given, or the resources; a problem sentence, "" when fine)."""
    if value is None:
        return None, ""
    if not isinstance(value, dict):
        return None, "`resources` must be {num_cpus, memory, custom: {NAME: amount}}"
    unknown = sorted(set(value) - set(RESOURCE_KEYS))
    if unknown:
        return None, f"`resources` has unknown key(s) {', '.join(unknown)}; known: {', '.join(RESOURCE_KEYS)}"
    cpus = value.get("num_cpus", 1)
    if not _amount(cpus):
        return None, "`resources.num_cpus` must be a number ≥ 0"
    memory = value.get("memory")
    size = None if memory is None else memory_bytes(memory)
    if memory is not None and size is None:
        return None, '`resources.memory` must be bytes (a number) or a size such as "1 GiB" or "512 MB"'
    custom = value.get("custom", {})
    if not isinstance(custom, dict) or not all(isinstance(k, str) and _amount(v) for k, v in custom.items()):
        return None, "`resources.custom` must map resource names to amounts ≥ 0, e.g. {agent_slot: 1}"
    return Resources(float(cpus), size, {k: float(v) for k, v in custom.items()}), ""


def memory_bytes(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value) if value > 0 else None
    if not isinstance(value, str) or not (m := _SIZE.match(value)):
        return None
    size = int(float(m.group(1)) * _UNITS[(m.group(2) or "").lower()])
    return size if size > 0 else None


def _amount(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0


def resources_for(run_resources: Resources | None, agent_settings: dict[str, Any]) -> Resources:
    """What a run's task reserves: the run's (or experiment's) `resources`, else its agent's
    (a profile may say what its agent needs), else one CPU. Raises ValueError for an agent's
    `resources` that don't parse."""
    if run_resources is not None:
        return run_resources
    agent, problem = parse_resources(resolve(agent_settings).get("resources"))
    if problem:
        raise ValueError(f"the agent's settings: {problem}")
    return agent or Resources()
