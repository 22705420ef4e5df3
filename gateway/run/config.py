"""`config.jsonc`: which runs to make (JSON5, comments allowed).

    {
      recordings: "recordings",              // optional; relative to this file
      parallel: 4,                           // runs at once (default 1)
      executor: "local",                     // or { ray: { address: "auto" } }: docs/scale-out.md
      runs: [
        { id: "demo", benchmark: "benchmarks/demo-en",
          agent: { adapter: "reference" },   // or { profile: "hermes-http", ... }
          persona: { driver: "scripted" },
          rung: ["s0", "s1", "s2"],          // optional: scale-ladder rungs (one run each)
          repeats: 3 },                      // optional: independent repeats (default 1)
      ],
      compaction: { max_tokens: 30000, trim_to_tokens: 10000 },  // optional: the LLM persona's
                                             // context limits for every run (as MarathonMemBench)
      experiment: {                          // optional: a paired A/B comparison
        name: "memory-addon", seed: 42, repeats: 3,
        variants: { A: { profile: "reference" }, B: { adapter: "reference", memory: false } },
        tasks: [ { benchmark: "benchmarks/demo-en", rung: "s1" } ],
        persona: "scripted",
      },
    }

A run with several rungs or repeats expands to one run per combination, named
`ID.RUNG.rK` (only the parts that vary). An experiment expands to one run per task × repeat
× variant, named `NAME.TASK.rK.A|B`; the order of A and B in each pair is drawn from `seed`
and written down (`Config.pairs`). Errors name the file and line; paths are relative to the
config file's folder.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import json5

from gateway.report.decision import Decision, parse_decision
from gateway.run.fork_plan import (
    expand_forks,
    fork_keys_problem,
    prepare_problem,
    teach_ladder_once,
    with_prepared_memory,
)
from gateway.run.placement import RayExecutor, Resources, parse_executor, parse_resources
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.forks import as_played
from persona.benchmark.ladder import benchmark_for
from persona.benchmark.model import Benchmark
from persona.grading.restate import restating_evidence
from persona.json5_bounds import MAX_JSON_DEPTH, json5_nesting

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
    rung: str = ""  # a scale-ladder rung of the benchmark (persona/benchmark/ladder.py)
    # where an expanded run came from: base id, repeat; for an experiment also task, pair,
    # variant and position in its pair (what the experiment's log lines are made of)
    meta: dict[str, Any] = field(default_factory=dict)
    pool: Path | None = None  # a distractor pool in place of the benchmark's own (`pool` in a run)
    limits: dict[str, float] = field(default_factory=dict)  # wall_seconds, agent_turns, spend_usd
    resources: Resources | None = None  # what its Ray task reserves (None: the agent's, or Ray's default)
    # checkpoints and forks (docs/experiments.md): where a checkpoint goes, the one this run ends
    # at, the questions it asks after it (None: all), the (run id, checkpoint) it forks from
    checkpoint_at: str = ""
    until: str = ""
    questions: tuple[str, ...] | None = None
    parent: tuple[str, str] | None = None
    # False: only the parent's agent state is taken, not its conversation — a task of an
    # experiment's prepared memory plays its own benchmark from the start (`prepare:`)
    parent_prefix: bool = True
    restate: bool = False  # a direct-evidence fork: the evidence restated before each question

    def played_benchmark(self) -> Benchmark:
        """The benchmark as this run plays it: its rung, then its checkpoint transforms."""
        bench = benchmark_for(self.benchmark, self.rung, self.pool)
        questions = list(self.questions) if self.questions is not None else None
        played = as_played(bench, self.checkpoint_at, self.until, questions)
        return restating_evidence(played, self.checkpoint_at) if self.restate else played


@dataclass(frozen=True)
class Experiment:
    name: str
    seed: int
    repeats: int
    variants: dict[str, dict[str, Any]]
    tasks: tuple[str, ...]
    pairs: tuple[tuple[str, str, int, tuple[str, str]], ...]  # (pair id, task, repeat, variant order)
    names: dict[str, str] = field(default_factory=lambda: {"A": "A", "B": "B"})  # role → the config's name
    decision: Decision | None = None  # fixed before the runs (NAME.plan.json)


@dataclass(frozen=True)
class Config:
    path: Path
    recordings: Path
    runs: tuple[RunSpec, ...]
    parallel: int = 1
    experiment: Experiment | None = None
    executor: RayExecutor | None = None  # None: runs execute in this process


def _line_of(raw: str, needle: str) -> int:
    index = raw.find(needle)
    return raw[:index].count("\n") + 1 if index >= 0 else 0


def load_config(path: Path | str) -> Config:
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(path, 0, f"can't read: {exc.strerror}") from None
    if (nested := json5_nesting(raw)) > MAX_JSON_DEPTH:
        raise ConfigError(path, 1, f"objects and lists nested {nested} deep; at most {MAX_JSON_DEPTH}")
    try:
        data = json5.loads(raw)
    except ValueError as exc:
        m = re.match(r"<string>:(\d+)\s*(.*)", str(exc))
        raise ConfigError(
            path, int(m.group(1)) if m else 0, f"invalid JSON5: {m.group(2) if m else exc}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(path, 1, "expected an object with a `runs` list")
    _known_keys(path, raw, "the config", data, TOP_KEYS)
    base = path.parent
    runs = data.get("runs", [])
    experiment_data = data.get("experiment")
    if not isinstance(runs, list) or (not runs and experiment_data is None):
        raise ConfigError(
            path, _line_of(raw, "runs"), "expected `runs`: a non-empty list of runs (or an `experiment`)"
        )
    specs: list[RunSpec] = []
    for n, run in enumerate(runs, 1):
        if not isinstance(run, dict):
            raise ConfigError(path, _line_of(raw, "runs"), f"run #{n} must be an object")
        specs.extend(_expand_run(path, raw, base, n, run))
    experiment = None
    if experiment_data is not None:
        experiment, runs_of_experiment = _experiment(path, raw, base, experiment_data)
        specs.extend(runs_of_experiment)
    compaction = _compaction(path, raw, data.get("compaction"))
    if compaction:  # as MarathonMemBench configures it: for every persona without its own
        specs = [
            s if "compaction" in s.persona else replace(s, persona={**s.persona, "compaction": compaction})
            for s in specs
        ]
    seen: dict[str, RunSpec] = {}
    for spec in specs:
        if spec.id in seen:
            raise ConfigError(
                path, _line_of(raw, spec.meta.get("id", spec.id)), f"run id {spec.id!r} is used twice"
            )
        seen[spec.id] = spec
    parallel = data.get("parallel", 1)
    if not isinstance(parallel, int) or isinstance(parallel, bool) or parallel < 1:
        raise ConfigError(path, _line_of(raw, "parallel"), "`parallel` must be a whole number ≥ 1")
    recordings = data.get("recordings", "recordings")
    if not isinstance(recordings, str):
        raise ConfigError(path, _line_of(raw, "recordings"), "`recordings` must be a folder path")
    executor, problem = parse_executor(data.get("executor"))
    if problem:
        raise ConfigError(path, _line_of(raw, "executor"), problem)
    return Config(path, (base / recordings).resolve(), tuple(specs), parallel, experiment, executor)


TOP_KEYS = ("recordings", "parallel", "runs", "experiment", "compaction", "executor")
RUN_KEYS = ("id", "benchmark", "agent", "persona", "grading", "rung", "repeats", "pool", "limits", "resources",
            "checkpoint_at", "exam", "rollouts", "from")  # fmt: skip
EXPERIMENT_KEYS = (
    "name",
    "seed",
    "repeats",
    "variants",
    "baseline",
    "tasks",
    "persona",
    "limits",
    "decision",
    "resources",
    "prepare",
    "memory",
)
LIMIT_KEYS = ("wall_seconds", "agent_turns", "spend_usd")
TASK_KEYS = ("id", "benchmark", "rung", "cluster", "group", "split")
SPLITS = ("heldout", "tuning")


def _resources(path: Path, raw: str, who: str, value: Any) -> Resources | None:
    resources, problem = parse_resources(value)
    if problem:
        raise ConfigError(path, _line_of(raw, "resources"), f"{who}: {problem}")
    return resources


def _limits(path: Path, raw: str, who: str, value: Any) -> dict[str, float]:
    """A run's limits — the same for every run they apply to (both variants of an experiment):
    `wall_seconds` of running time, `agent_turns` (messages sent), `spend_usd` (agent and
    persona models). A run that reaches one ends `limit_reached`, a failure that is kept."""
    if value is None:
        return {}
    if (
        not isinstance(value, dict)
        or set(value) - set(LIMIT_KEYS)
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in value.values())
    ):
        raise ConfigError(
            path,
            _line_of(raw, "limits"),
            f"{who}: `limits` must be {{{', '.join(LIMIT_KEYS)}}}, each a number > 0",
        )
    return {str(k): float(v) for k, v in value.items()}


def _compaction(path: Path, raw: str, value: Any) -> dict[str, int]:
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
            _line_of(raw, "compaction"),
            "`compaction` must be {max_tokens: N, trim_to_tokens: M}, whole numbers > 0",
        )
    if value.get("trim_to_tokens", 10000) >= value.get("max_tokens", 30000):
        raise ConfigError(
            path, _line_of(raw, "compaction"), "`compaction.trim_to_tokens` must be below `max_tokens`"
        )
    return dict(value)


def _known_keys(path: Path, raw: str, who: str, data: dict[str, Any], known: tuple[str, ...]) -> None:
    """A misspelt key (`rungs`, `repeat`) would silently change what runs: refuse it."""
    for key in data:
        if key not in known:
            raise ConfigError(
                path,
                _line_of(raw, str(key)),
                f"{who}: unknown key `{key}` (expected one of {', '.join(known)})",
            )


def _persona(path: Path, line: int, who: str, persona: Any) -> dict[str, Any]:
    """The persona settings; a replayed recording's `from` is relative to the config, as a benchmark is."""
    if isinstance(persona, str):
        persona = {"driver": persona}
    if not isinstance(persona, dict):
        raise ConfigError(path, line, f"{who}: `persona` must be a driver name or an object")
    if persona.get("driver") == "replay":
        source = persona.get("from")
        if not isinstance(source, str) or not source:
            raise ConfigError(
                path, line, f"{who}: a `replay` persona needs `from`: the recorded run's folder"
            )
        return {**persona, "from": str((path.parent / source).resolve())}
    return dict(persona)


def _agent(path: Path, line: int, who: str, agent: Any) -> dict[str, Any]:
    if not isinstance(agent, dict) or not (
        isinstance(agent.get("adapter"), str) or isinstance(agent.get("profile"), str)
    ):
        raise ConfigError(path, line, f"{who}: `agent` must be an object with an `adapter` or a `profile`")
    return _paths_from(path.parent, agent)


def _paths_from(base: Path, agent: dict[str, Any]) -> dict[str, Any]:
    """The agent process's folders (`snapshot`, `cwd`, `state_dir`) and a program given as a
    relative path (`./bin/agent`), relative to the config's folder as every path in it — not
    to wherever `marathon` (or a cluster node's worker) happens to run."""
    process = agent.get("process")
    if not isinstance(process, dict):
        return agent
    fixed = dict(process)
    for key in ("snapshot", "cwd", "state_dir"):
        value = fixed.get(key)
        if isinstance(value, str) and value and not value.startswith(("/", "${", "~")):
            fixed[key] = str((base / value).resolve())
    command = fixed.get("command")
    if isinstance(command, list) and command and isinstance(command[0], str) and command[0].startswith("./"):
        fixed["command"] = [str((base / command[0]).resolve()), *command[1:]]
    return {**agent, "process": fixed}


def _names(path: Path, line: int, who: str, key: str, value: Any) -> list[str]:
    """A string or a list of strings (rungs)."""
    if value is None:
        return [""]
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v for v in values):
        raise ConfigError(path, line, f"{who}: `{key}` must be a name or a non-empty list of names")
    return list(values)


def _repeats(path: Path, line: int, who: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(path, line, f"{who}: `repeats` must be a whole number ≥ 1")
    return value


def _expand_run(path: Path, raw: str, base: Path, n: int, run: dict[str, Any]) -> list[RunSpec]:
    run_id = run.get("id")
    line = _line_of(raw, str(run_id)) if run_id else _line_of(raw, "runs")
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise ConfigError(
            path, line, f"run #{n}: `id` must be letters, digits, '.', '_' or '-' (it names a folder)"
        )
    _known_keys(path, raw, f"run {run_id}", run, RUN_KEYS)
    bench = run.get("benchmark")
    if not isinstance(bench, str):
        raise ConfigError(path, line, f"run {run_id}: `benchmark` must be a folder path")
    agent = _agent(path, line, f"run {run_id}", run.get("agent"))
    persona = _persona(path, line, f"run {run_id}", run.get("persona", {"driver": "scripted"}))
    grading = run.get("grading")
    if grading is not None:  # `grading: {judge: …}`: who decides what the exact grader is not sure of
        if not isinstance(grading, dict) or not isinstance(grading.get("judge", ""), str):
            raise ConfigError(
                path, line, f"run {run_id}: `grading` must be {{judge: \"anthropic:MODEL\" | \"openai:URL#MODEL\"}}"
            )
        persona = {**persona, "grading": grading}
    rungs = _names(path, line, f"run {run_id}", "rung", run.get("rung"))
    repeats = _repeats(path, line, f"run {run_id}", run.get("repeats", 1))
    limits = _limits(path, raw, f"run {run_id}", run.get("limits"))
    resources = _resources(path, raw, f"run {run_id}", run.get("resources"))
    pool = run.get("pool")
    if pool is not None and not isinstance(pool, str):
        raise ConfigError(path, line, f"run {run_id}: `pool` must be the path of a distractor pool folder")
    if problem := fork_keys_problem(run):
        raise ConfigError(path, line, f"run {run_id}: {problem}")
    specs = []
    for rung in rungs:
        for k in range(1, repeats + 1):
            name = run_id + (f".{rung}" if len(rungs) > 1 else "") + (f".r{k}" if repeats > 1 else "")
            meta = {"id": run_id, "repeat": k, **({"rung": rung} if rung else {})}
            specs.append(
                RunSpec(
                    name,
                    (base / bench).resolve(),
                    agent,
                    persona,
                    rung,
                    meta,
                    (base / pool).resolve() if pool else None,
                    limits,
                    resources,
                )
            )
    try:
        return teach_ladder_once([forked for spec in specs for forked in expand_forks(spec, run)], run)
    except BenchmarkErrors as exc:
        raise ConfigError(path, line, f"run {run_id}: {exc}") from None


def _experiment(path: Path, raw: str, base: Path, data: Any) -> tuple[Experiment, list[RunSpec]]:
    line = _line_of(raw, "experiment")
    if not isinstance(data, dict):
        raise ConfigError(path, line, "`experiment` must be an object {name, variants, tasks, repeats, seed}")
    _known_keys(path, raw, "experiment", data, EXPERIMENT_KEYS)
    name = data.get("name", "experiment")
    if not isinstance(name, str) or not _RUN_ID.match(name):
        raise ConfigError(path, line, "experiment `name` must be letters, digits, '.', '_' or '-'")
    variants = data.get("variants")
    if (
        not isinstance(variants, dict)
        or len(variants) != 2
        or not all(_RUN_ID.match(str(v)) for v in variants)
    ):
        raise ConfigError(
            path,
            _line_of(raw, "variants"),
            "experiment `variants` must name two agents, e.g. {without: agent, with: agent}",
        )
    baseline = data.get("baseline", "A" if set(variants) == {"A", "B"} else None)
    if baseline not in variants:
        raise ConfigError(
            path,
            _line_of(raw, "baseline") or _line_of(raw, "variants"),
            f"experiment `baseline` must name the variant without the added memory (A in the protocol): "
            f"one of {', '.join(map(str, variants))}",
        )
    other = next(str(v) for v in variants if v != baseline)
    names = {"A": str(baseline), "B": other}  # the protocol's roles: A without the added memory, B with it
    agents = {
        role: _agent(path, _line_of(raw, "variants"), f"variant {n}", variants[n])
        for role, n in names.items()
    }
    tasks = data.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ConfigError(path, _line_of(raw, "tasks"), "experiment `tasks` must be a non-empty list")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ConfigError(path, _line_of(raw, "seed"), "experiment `seed` must be an integer")
    repeats = _repeats(path, line, "experiment", data.get("repeats", 1))
    persona = _persona(path, line, "experiment", data.get("persona", {"driver": "scripted"}))
    limits = _limits(path, raw, "experiment", data.get("limits"))  # the same for both variants
    resources = _resources(path, raw, "experiment", data.get("resources"))
    decision = None
    if "decision" in data:
        decision, problem = parse_decision(data["decision"])
        if decision is None:
            raise ConfigError(path, _line_of(raw, "decision"), problem)
    rng = random.Random(seed)
    specs: list[RunSpec] = []
    pairs: list[tuple[str, str, int, tuple[str, str]]] = []
    task_names: list[str] = []
    for task in tasks:
        task = {"benchmark": task} if isinstance(task, str) else task
        if not isinstance(task, dict) or not isinstance(task.get("benchmark"), str):
            raise ConfigError(
                path,
                _line_of(raw, "tasks"),
                "each experiment task is a benchmark path or {benchmark, rung, id}",
            )
        _known_keys(path, raw, "experiment task", task, TASK_KEYS)
        rung = str(task.get("rung", ""))
        task_id = str(task.get("id") or Path(task["benchmark"]).name + (f"-{rung}" if rung else ""))
        if not _RUN_ID.match(task_id) or task_id in task_names:
            raise ConfigError(
                path, _line_of(raw, "tasks"), f"task id {task_id!r} is not a unique folder name"
            )
        task_names.append(task_id)
        cluster = task.get(
            "cluster", Path(task["benchmark"]).name
        )  # repeats and rungs of one benchmark are one cluster
        group = task.get("group", "all")
        split = task.get("split", "heldout")
        if not all(isinstance(v, str) and v for v in (cluster, group)) or split not in SPLITS:
            raise ConfigError(
                path,
                _line_of(raw, "tasks"),
                f"task {task_id}: `cluster` and `group` are names; `split` is one of {', '.join(SPLITS)}",
            )
        for k in range(1, repeats + 1):
            order: tuple[str, str] = ("A", "B") if rng.random() < 0.5 else ("B", "A")
            pair = f"{name}.{task_id}.r{k}"
            pairs.append((pair, task_id, k, order))
            for position, variant in enumerate(order, 1):
                meta = {
                    "experiment": name,
                    "task": task_id,
                    "cluster": cluster,
                    "group": group,
                    "split": split,
                    "pair": pair,
                    "repeat": k,
                    "variant": variant,
                    "variant_name": names[variant],
                    "position": position,
                    **({"rung": rung} if rung else {}),
                }
                specs.append(
                    RunSpec(
                        f"{pair}.{names[variant]}",
                        (base / task["benchmark"]).resolve(),
                        agents[variant],
                        persona,
                        rung,
                        meta,
                        limits=limits,
                        resources=resources,
                    )
                )
    if "prepare" in data or "memory" in data:
        prepare = data.get("prepare")
        where = _line_of(raw, "prepare") or _line_of(raw, "memory")
        if prepared_wrong := prepare_problem(prepare, data.get("memory")):
            raise ConfigError(path, where, f"experiment {name}: {prepared_wrong}")
        prepared = None
        if isinstance(prepare, dict):
            # by default the variant with the added memory prepares it (a baseline without would write nothing)
            agent = _agent(path, where, "the preparation", prepare["agent"]) if "agent" in prepare else agents["B"]
            prepared = ((base / prepare["benchmark"]).resolve(), agent, prepare)
        specs = with_prepared_memory(specs, name, str(data["memory"]), prepared)
    return Experiment(name, seed, repeats, agents, tuple(task_names), tuple(pairs), names, decision), specs
