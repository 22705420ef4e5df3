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

from gateway.log.run_meta import RunMeta
from gateway.report.decision import Decision, parse_decision
from gateway.run.config_blocks import ConfigError as ConfigError  # where callers catch it
from gateway.run.config_blocks import read_compaction, read_limits, read_resources
from gateway.run.fork_plan import (
    expand_forks,
    fork_keys_problem,
    prepare_problem,
    teach_ladder_once,
    with_prepared_memory,
)
from gateway.run.placement import RayExecutor, Resources, parse_executor
from gateway.run.setting_keys import (
    GRADING_KEYS,
    agent_key_problems,
    persona_key_problems,
    persona_takes,
    unknown_key,
)
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.forks import as_played
from persona.benchmark.ladder import benchmark_for
from persona.benchmark.model import Benchmark
from persona.grading.restate import restating_evidence
from persona.json5_bounds import MAX_JSON_DEPTH, json5_nesting
from persona.json5_positions import KeyPath, SourceMap

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


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

    @property
    def run_meta(self) -> RunMeta:
        """`meta` typed, as its log's header will read it."""
        return RunMeta.of(self.meta)

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
    src = SourceMap(raw)  # each key's line: an error names the line of the key it is about
    _known_keys(path, src, "the config", data, TOP_KEYS, ())
    base = path.parent
    runs = data.get("runs", [])
    experiment_data = data.get("experiment")
    if not isinstance(runs, list) or (not runs and experiment_data is None):
        raise ConfigError(
            path, src.line("runs"), "expected `runs`: a non-empty list of runs (or an `experiment`)"
        )
    specs: list[RunSpec] = []
    for n, run in enumerate(runs, 1):
        if not isinstance(run, dict):
            raise ConfigError(path, src.line("runs", n - 1), f"run #{n} must be an object")
        specs.extend(_expand_run(path, src, base, n, run))
    experiment = None
    if experiment_data is not None:
        experiment, runs_of_experiment = _experiment(path, src, base, experiment_data)
        specs.extend(runs_of_experiment)
    compaction = read_compaction(path, src.line("compaction"), data.get("compaction"))
    if compaction:  # as MarathonMemBench configures it: for every LLM persona without its own
        specs = [
            replace(s, persona={**s.persona, "compaction": compaction})
            if "compaction" not in s.persona and persona_takes(s.persona, "compaction")
            else s
            for s in specs
        ]
    seen: dict[str, RunSpec] = {}
    # a run id's entry: its last one in `runs` (the second of two is the one to rename)
    entry = {run.get("id"): n for n, run in enumerate(runs) if isinstance(run, dict)}
    for spec in specs:
        if spec.id in seen:
            config_id = spec.run_meta.id or spec.id
            where = src.line("runs", entry[config_id], "id") if config_id in entry else src.line("experiment")
            raise ConfigError(path, where, f"run id {spec.id!r} is used twice")
        seen[spec.id] = spec
    parallel = data.get("parallel", 1)
    if not isinstance(parallel, int) or isinstance(parallel, bool) or parallel < 1:
        raise ConfigError(path, src.line("parallel"), "`parallel` must be a whole number ≥ 1")
    recordings = data.get("recordings", "recordings")
    if not isinstance(recordings, str):
        raise ConfigError(path, src.line("recordings"), "`recordings` must be a folder path")
    executor, problem = parse_executor(data.get("executor"))
    if problem:
        raise ConfigError(path, src.line("executor"), problem)
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
TASK_KEYS = ("id", "benchmark", "rung", "cluster", "group", "split")
SPLITS = ("heldout", "tuning")


def _known_keys(
    path: Path, src: SourceMap, who: str, data: dict[str, Any], known: tuple[str, ...], where: KeyPath
) -> None:
    """A misspelt key (`rungs`, `repeat`) would silently change what runs: refuse it, at its
    own line (`where` is the path of the object holding it)."""
    for key in data:
        if key not in known:
            raise ConfigError(path, src.line(*where, str(key)), unknown_key(str(key), frozenset(known), who))


def _persona(
    path: Path, line: int, who: str, persona: Any, src: SourceMap | None = None, where: KeyPath = ()
) -> dict[str, Any]:
    """The persona settings; a replayed recording's `from` is relative to the config, as a
    benchmark is. An unknown key is refused at its line (`where`: the block's key path)."""
    if isinstance(persona, str):
        persona = {"driver": persona}
    if not isinstance(persona, dict):
        raise ConfigError(path, line, f"{who}: `persona` must be a driver name or an object")
    for keys, message in persona_key_problems(persona):
        raise ConfigError(path, src.line(*where, *keys) if src and where else line, f"{who}: {message}")
    if persona.get("driver") == "replay":
        source = persona.get("from")
        if not isinstance(source, str) or not source:
            raise ConfigError(
                path, line, f"{who}: a `replay` persona needs `from`: the recorded run's folder"
            )
        return {**persona, "from": str((path.parent / source).resolve())}
    return dict(persona)


def _agent(
    path: Path, line: int, who: str, agent: Any, src: SourceMap | None = None, where: KeyPath = ()
) -> dict[str, Any]:
    if not isinstance(agent, dict) or not (
        isinstance(agent.get("adapter"), str) or isinstance(agent.get("profile"), str)
    ):
        raise ConfigError(path, line, f"{who}: `agent` must be an object with an `adapter` or a `profile`")
    for keys, message in agent_key_problems(agent):
        raise ConfigError(path, src.line(*where, *keys) if src and where else line, f"{who}: {message}")
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


def _expand_run(path: Path, src: SourceMap, base: Path, n: int, run: dict[str, Any]) -> list[RunSpec]:
    run_id = run.get("id")
    here: KeyPath = ("runs", n - 1)
    line = src.line(*here, "id")
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
        raise ConfigError(
            path, line, f"run #{n}: `id` must be letters, digits, '.', '_' or '-' (it names a folder)"
        )
    _known_keys(path, src, f"run {run_id}", run, RUN_KEYS, here)
    bench = run.get("benchmark")
    if not isinstance(bench, str):
        raise ConfigError(path, line, f"run {run_id}: `benchmark` must be a folder path")
    agent = _agent(path, line, f"run {run_id}", run.get("agent"), src, (*here, "agent"))
    persona = _persona(
        path, line, f"run {run_id}", run.get("persona", {"driver": "scripted"}), src, (*here, "persona")
    )
    grading = run.get("grading")
    if grading is not None:  # `grading: {judge: …}`: who decides what the exact grader is not sure of
        if not isinstance(grading, dict) or not isinstance(grading.get("judge", ""), str):
            raise ConfigError(
                path, line, f"run {run_id}: `grading` must be {{judge: \"anthropic:MODEL\" | \"openai:URL#MODEL\"}}"
            )
        for key in grading:
            if key not in GRADING_KEYS:
                where = src.line(*here, "grading", str(key))
                raise ConfigError(path, where, f"run {run_id}: {unknown_key(str(key), GRADING_KEYS, 'grading')}")
        persona = {**persona, "grading": grading}
    rungs = _names(path, line, f"run {run_id}", "rung", run.get("rung"))
    repeats = _repeats(path, line, f"run {run_id}", run.get("repeats", 1))
    limits = read_limits(path, src.line(*here, "limits"), f"run {run_id}", run.get("limits"))
    resources = read_resources(path, src.line(*here, "resources"), f"run {run_id}", run.get("resources"))
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


def _experiment(path: Path, src: SourceMap, base: Path, data: Any) -> tuple[Experiment, list[RunSpec]]:
    line = src.line("experiment")
    if not isinstance(data, dict):
        raise ConfigError(path, line, "`experiment` must be an object {name, variants, tasks, repeats, seed}")
    _known_keys(path, src, "experiment", data, EXPERIMENT_KEYS, ("experiment",))
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
            src.line("experiment", "variants"),
            "experiment `variants` must name two agents, e.g. {without: agent, with: agent}",
        )
    baseline = data.get("baseline", "A" if set(variants) == {"A", "B"} else None)
    if baseline not in variants:
        raise ConfigError(
            path,
            src.line("experiment", "baseline") if "baseline" in data else src.line("experiment", "variants"),
            f"experiment `baseline` must name the variant without the added memory (A in the protocol): "
            f"one of {', '.join(map(str, variants))}",
        )
    other = next(str(v) for v in variants if v != baseline)
    names = {"A": str(baseline), "B": other}  # the protocol's roles: A without the added memory, B with it
    agents = {
        role: _agent(
            path, src.line("experiment", "variants", n), f"variant {n}", variants[n], src, ("experiment", "variants", n)
        )
        for role, n in names.items()
    }
    tasks = data.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ConfigError(path, src.line("experiment", "tasks"), "experiment `tasks` must be a non-empty list")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ConfigError(path, src.line("experiment", "seed"), "experiment `seed` must be an integer")
    repeats = _repeats(path, src.line("experiment", "repeats"), "experiment", data.get("repeats", 1))
    persona = _persona(
        path,
        src.line("experiment", "persona"),
        "experiment",
        data.get("persona", {"driver": "scripted"}),
        src,
        ("experiment", "persona"),
    )
    # the same for both variants
    limits = read_limits(path, src.line("experiment", "limits"), "experiment", data.get("limits"))
    resources = read_resources(path, src.line("experiment", "resources"), "experiment", data.get("resources"))
    decision = None
    if "decision" in data:
        decision, problem = parse_decision(data["decision"])
        if decision is None:
            raise ConfigError(path, src.line("experiment", "decision"), problem)
    rng = random.Random(seed)
    specs: list[RunSpec] = []
    pairs: list[tuple[str, str, int, tuple[str, str]]] = []
    task_names: list[str] = []
    for t, task in enumerate(tasks):
        at = src.line("experiment", "tasks", t)
        task = {"benchmark": task} if isinstance(task, str) else task
        if not isinstance(task, dict) or not isinstance(task.get("benchmark"), str):
            raise ConfigError(
                path,
                at,
                "each experiment task is a benchmark path or {benchmark, rung, id}",
            )
        _known_keys(path, src, "experiment task", task, TASK_KEYS, ("experiment", "tasks", t))
        rung = str(task.get("rung", ""))
        task_id = str(task.get("id") or Path(task["benchmark"]).name + (f"-{rung}" if rung else ""))
        if not _RUN_ID.match(task_id) or task_id in task_names:
            raise ConfigError(
                path, at, f"task id {task_id!r} is not a unique folder name"
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
                at,
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
                    # the rule fixed before the runs, recorded with each of them (not only in the plan)
                    **({"decision": decision.to_json()} if decision is not None else {}),
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
        where = src.line("experiment", "prepare" if "prepare" in data else "memory")
        if prepared_wrong := prepare_problem(prepare, data.get("memory")):
            raise ConfigError(path, where, f"experiment {name}: {prepared_wrong}")
        prepared = None
        if isinstance(prepare, dict):
            # by default the variant with the added memory prepares it (a baseline without would write nothing)
            agent = (
                _agent(path, where, "the preparation", prepare["agent"], src, ("experiment", "prepare", "agent"))
                if "agent" in prepare
                else agents["B"]
            )
            prepared = ((base / prepare["benchmark"]).resolve(), agent, prepare)
        specs = with_prepared_memory(specs, name, str(data["memory"]), prepared)
    return Experiment(name, seed, repeats, agents, tuple(task_names), tuple(pairs), names, decision), specs
