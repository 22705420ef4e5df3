"""config.jsonc: the run matrix and the paired experiment expand into runs, deterministically."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gateway.run.config import ConfigError, load_config
from tests.conftest import BenchFactory
from tests.marathon_cli import marathon

MATRIX = """{
  parallel: 3,
  runs: [
    { id: "lad", benchmark: "b", agent: { adapter: "reference" }, rung: ["s0", "s1"], repeats: 2 },
    { id: "one", benchmark: "b", agent: { profile: "reference" }, rung: "s1", pool: "../pools/big" },
  ],
  experiment: {
    name: "ab", seed: SEED, repeats: 3,
    variants: { A: { adapter: "reference" }, B: { adapter: "reference", memory: false } },
    tasks: ["b", { id: "b2", benchmark: "b", rung: "s1" }],
  },
}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.jsonc"
    path.write_text(text)
    return path


def test_runs_expand_by_rung_and_repeat(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MATRIX.replace("SEED", "7")))
    ids = [s.id for s in config.runs]
    assert ids[:5] == ["lad.s0.r1", "lad.s0.r2", "lad.s1.r1", "lad.s1.r2", "one"]
    assert config.parallel == 3
    assert [s.rung for s in config.runs[:5]] == ["s0", "s0", "s1", "s1", "s1"]
    assert config.runs[2].meta == {"id": "lad", "repeat": 1, "rung": "s1"}
    assert config.runs[0].benchmark == (tmp_path / "b").resolve()
    assert (
        config.runs[0].pool is None and config.runs[4].pool == (tmp_path.parent / "pools" / "big").resolve()
    )


def test_an_experiment_expands_into_pairs_in_a_seeded_recorded_order(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MATRIX.replace("SEED", "7")))
    exp = config.experiment
    assert exp is not None and exp.tasks == ("b", "b2") and len(exp.pairs) == 6
    runs = [s for s in config.runs if s.meta.get("experiment") == "ab"]
    assert len(runs) == 12
    for n, (pair, task, repeat, order) in enumerate(exp.pairs):
        first, second = runs[2 * n], runs[2 * n + 1]
        assert (first.meta["variant"], second.meta["variant"]) == order
        assert first.meta["pair"] == second.meta["pair"] == pair == f"ab.{task}.r{repeat}"
        assert first.id == f"{pair}.{order[0]}" and first.meta["position"] == 1
        assert second.agent == exp.variants[order[1]]
    assert {s.rung for s in runs if s.meta["task"] == "b2"} == {"s1"}
    orders = {p[3] for p in exp.pairs}
    assert orders == {("A", "B"), ("B", "A")}  # randomised, not always A first
    again = load_config(write(tmp_path, MATRIX.replace("SEED", "7"))).experiment
    assert again is not None and again.pairs == exp.pairs  # the seed decides
    other = load_config(write(tmp_path, MATRIX.replace("SEED", "8"))).experiment
    assert other is not None and [p[3] for p in other.pairs] != [p[3] for p in exp.pairs]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('{\n parallel: 0,\n runs: [{id: "a", benchmark: "b", agent: {adapter: "x"}}]}', 2, "`parallel`"),
        (
            '{runs: [{id: "a", benchmark: "b", agent: {adapter: "x"},\n rungs: ["s0"]}]}',
            2,
            "unknown key `rungs`",
        ),
        (
            '{\n paralel: 2, runs: [{id: "a", benchmark: "b", agent: {adapter: "x"}}]}',
            2,
            "unknown key `paralel`",
        ),
        ('{runs: [\n{id: "a", benchmark: "b", agent: {adapter: "x"}, repeats: 0}]}', 2, "`repeats`"),
        ('{runs: [\n{id: "a", benchmark: "b", agent: {adapter: "x"}, rung: []}]}', 2, "`rung` must be"),
        (
            '{runs: [\n{id: "a", benchmark: "b", agent: {adapter: "x"}, persona: "replay"}]}',
            2,
            "a `replay` persona needs `from`",
        ),
        ('{\nexperiment: {variants: {A: {adapter: "x"}}, tasks: ["b"]}}', 2, "must name two agents"),
        (
            '{experiment: {\nvariants: {off: {adapter: "x"}, on: {adapter: "y"}}, tasks: ["b"]}}',
            2,
            "`baseline` must name the variant without the added memory",
        ),
        (
            '{experiment: {variants: {A: {adapter: "x"}, B: {adapter: "y"}},\n tasks: [{benchmark: "b", split: "x"}]}}',
            2,
            "`split` is one of",
        ),
        (
            '{experiment: {variants: {A: {adapter: "x"}, B: {adapter: "y"}},\n tasks: []}}',
            2,
            "`tasks` must be a non-empty list",
        ),
        (
            '{runs: [{id: "ab.b.r1.A", benchmark: "b", agent: {adapter: "x"}}],\n'
            ' experiment: {name: "ab", variants: {A: {adapter: "x"}, B: {adapter: "y"}}, tasks: ["b"]}}',
            1,
            "used twice",
        ),
        ("{runs: [{id: 'r', x: " + "[" * 3000 + "]" * 3000 + "}]}", 1, "nested 3003 deep; at most 32"),
    ],
)
def test_matrix_errors_name_the_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert f"{path}:{line}:" in str(err.value) and message in str(err.value)


def test_a_replayed_recording_is_found_beside_the_config_as_a_benchmark_is(tmp_path: Path) -> None:
    text = '{runs: [{id: "a", benchmark: "b", agent: {adapter: "x"}, persona: {driver: "replay", from: "rec/r1"}}]}'
    (tmp_path / "conf").mkdir()
    config = load_config(write(tmp_path / "conf", text))
    assert config.runs[0].persona == {
        "driver": "replay",
        "from": str((tmp_path / "conf" / "rec" / "r1").resolve()),
    }


def test_the_shipped_experiment_example_loads() -> None:
    config = load_config(Path(__file__).resolve().parents[3] / "examples" / "experiment.jsonc")
    assert {s.rung for s in config.runs if s.meta.get("id") == "ladder"} == {"s0", "s1", "s2"}
    exp = config.experiment
    assert exp is not None and exp.names == {"A": "no-memory", "B": "memory"}  # A: without the added memory
    assert (
        exp.variants["A"].get("memory") is False
        and "memory" not in exp.variants["B"]
        and config.parallel == 4
    )
    runs = [s for s in config.runs if s.meta.get("experiment")]
    assert {s.meta["split"] for s in runs} == {"heldout", "tuning"}
    assert {s.meta["cluster"] for s in runs if s.meta["task"].startswith("demo-s")} == {"demo-en"}
    assert all(s.id.endswith((".no-memory", ".memory")) for s in runs)
    assert all(s.benchmark.is_dir() for s in config.runs)
    # tuned on a benchmark of its own: nothing held out is tuned on
    tuned = {s.benchmark for s in runs if s.meta["split"] == "tuning"}
    held_out = {s.benchmark for s in runs if s.meta["split"] == "heldout"}
    assert tuned and not tuned & held_out


def test_compaction_at_the_top_applies_to_every_persona_without_its_own(tmp_path: Path) -> None:
    """As MarathonMemBench's config.jsonc sets it."""
    text = """{
  "compaction": { "max_tokens": 30000, "trim_to_tokens": 10000 },
  runs: [
    { id: "a", benchmark: "b", agent: { adapter: "reference" }, persona: { driver: "anthropic:m" } },
    { id: "b", benchmark: "b", agent: { adapter: "reference" },
      persona: { driver: "anthropic:m", compaction: { max_tokens: 8000, trim_to_tokens: 2000 } } },
  ],
}"""
    a, b = load_config(write(tmp_path, text)).runs
    assert a.persona["compaction"] == {"max_tokens": 30000, "trim_to_tokens": 10000}
    assert b.persona["compaction"] == {"max_tokens": 8000, "trim_to_tokens": 2000}
    bad = text.replace('"trim_to_tokens": 10000', '"trim_to_tokens": 40000')
    with pytest.raises(ConfigError, match=r":2: `compaction\.trim_to_tokens` must be below"):
        load_config(write(tmp_path, bad))


def test_an_agent_process_s_folders_are_found_beside_the_config_as_a_benchmark_is(tmp_path: Path) -> None:
    """`marathon run conf/c.jsonc` from anywhere — or a cluster node's worker, whose working
    folder is its own — finds `snapshot: "hermes-home"` in conf/, not in its working folder."""
    folder = tmp_path / "conf"
    folder.mkdir()
    text = """{ runs: [{ id: "h", benchmark: "b", agent: { profile: "hermes-http",
      process: { snapshot: "hermes-home", cwd: "${STATE_DIR}", command: ["./bin/hermes", "gateway"] } } }] }"""
    process = load_config(write(folder, text)).runs[0].agent["process"]
    assert process["snapshot"] == str((folder / "hermes-home").resolve())
    assert process["cwd"] == "${STATE_DIR}"  # a placeholder is the lifecycle's to fill
    assert process["command"] == [str((folder / "bin" / "hermes").resolve()), "gateway"]


def test_the_ray_example_loads_with_its_executor_and_resources() -> None:
    config = load_config(Path(__file__).resolve().parents[3] / "examples" / "experiment-ray.jsonc")
    assert config.executor is not None and config.executor.address == "auto"
    assert {s.resources.custom.get("agent_slot") for s in config.runs if s.resources} == {1.0}
    assert all(s.resources is not None for s in config.runs)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('executor: { ray: { address: "ray://head:10001" } }', "Ray Client addresses"),
        ("executor: { ray: { retries: 3 } }", "unknown key(s) retries"),
        ('executor: "k8s"', '`executor` must be "local"'),
        (
            'runs: [{ id: "r", benchmark: "b", agent: { adapter: "reference" }, resources: { memory: "lots" } }]',
            "resources.memory",
        ),
    ],
)
def test_executor_and_resources_errors_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    body = (
        text
        if text.startswith("runs")
        else f'{text},\n  runs: [{{ id: "r", benchmark: "b", agent: {{ adapter: "reference" }} }}]'
    )
    path = write(tmp_path, "{\n  " + body + "\n}")
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        load_config(path)
    assert re.match(rf"{re.escape(str(path))}:2: ", str(caught.value))  # file and line


@pytest.mark.parametrize(
    ("agent", "said"),
    [
        (
            {"adapter": "http", "url": "http://127.0.0.1:9/chat", "timeout": "soon"},
            "`timeout` must be a number",
        ),
        (
            {"adapter": "http", "url": "http://127.0.0.1:9/chat", "retries": 1.5},
            "`retries` must be a whole number",
        ),
        (
            {
                "adapter": "http",
                "url": "http://127.0.0.1:9/chat",
                "llm": {"upstream": "standin", "port": "x"},
            },
            "`llm.port` must be a port number",
        ),
        (
            {"adapter": "http", "url": "http://127.0.0.1:9/chat", "port": 70000},
            "`port` must be a port number",
        ),
        (
            {
                "adapter": "http",
                "url": "http://bob:pw@127.0.0.1:9/chat",
                "headers": {"Authorization": "Bearer x"},
            },
            "only one",
        ),
        ({"adapter": "websocket", "url": "ws://127.0.0.1:9", "quiet": "later"}, "`quiet` must be a number"),
    ],
)
def test_bad_agent_settings_name_the_field_before_the_run(agent: dict[str, object], said: str) -> None:
    """`timeout: "soon"` said "could not convert string to float", and `llm.port: "x"` only
    after the run had started; a URL's user:password beside an Authorization header was a raw
    aiohttp ValueError."""
    from adapters.base import AdapterConfigError
    from gateway.run.agents import check_agent_settings

    with pytest.raises(AdapterConfigError, match=re.escape(said)):
        check_agent_settings(agent)


def test_a_ray_runtime_env_of_the_wrong_shape_names_its_field() -> None:
    from gateway.run.placement import parse_executor

    executor, problem = parse_executor({"ray": {"runtime_env": {"pip": 5}}})
    assert executor is None and "`executor.ray.runtime_env.pip` must be a list of requirements" in problem
    ok, none = parse_executor({"ray": {"runtime_env": {"pip": ["requests"], "env_vars": {"A": "1"}}}})
    assert ok is not None and none == ""


def test_an_error_names_the_line_of_the_key_it_is_about_not_its_first_mention(tmp_path: Path) -> None:
    """`limits` of the third run, a task's misspelt key: the line of that run's key, not the
    first `limits` (or the first `cluster`) anywhere in the file."""
    text = """{
  runs: [
    { id: "a", benchmark: "b", agent: { adapter: "reference" }, limits: { agent_turns: 30 } },
    { id: "b", benchmark: "b", agent: { adapter: "reference" }, limits: { agent_turns: 30 } },
    {
      id: "c", benchmark: "b", agent: { adapter: "reference" },
      limits: { agent_turns: "thirty" },
    },
  ],
}
"""
    with pytest.raises(ConfigError, match=r"config\.jsonc:7: run c: `limits` must be"):
        load_config(write(tmp_path, text))
    tasks = """{
  experiment: {
    variants: { A: { adapter: "reference" }, B: { adapter: "reference" } },
    tasks: [{ benchmark: "b", cluster: "x" }, { benchmark: "c",
      clustr: "y" }],
  },
}
"""
    with pytest.raises(ConfigError, match=r"config\.jsonc:5: experiment task: unknown key `clustr` \(did you mean `cluster`\?"):
        load_config(write(tmp_path, tasks))


@pytest.mark.parametrize(
    ("block", "line", "said"),
    [
        ('agent: { adapter: "reference" }, persona: {\n  drvier: "anthropic:m" }', 4,
         "persona (scripted): unknown key `drvier` (did you mean `driver`?"),
        ('agent: { adapter: "reference",\n  context_token: 400 }', 4,
         "unknown key `context_token` (did you mean `context_tokens`?"),
        ('agent: { adapter: "http", url: "http://127.0.0.1:9/chat",\n  reply_pth: "a" }', 4, "did you mean `reply_path`?"),
        ('agent: { adapter: "http", url: "http://127.0.0.1:9/chat",\n  timout: 30 }', 4, "did you mean `timeout`?"),
        ('agent: { adapter: "http", url: "http://127.0.0.1:9/chat",\n  llm: { upstrem: "http://x" } }', 4,
         "agent.llm: unknown key `upstrem` (did you mean `upstream`?"),
        ('agent: { adapter: "http", url: "u",\n  process: { command: ["a"], redy_timeout: 9 } }', 4,
         "agent.process: unknown key `redy_timeout` (did you mean `ready_timeout`?"),
        ('agent: { adapter: "reference" },\n  grading: { juge: "anthropic:m" }', 4,
         "grading: unknown key `juge` (did you mean `judge`?"),
        ('agent: { adapter: "reference" },\n  limits: { agent_turn: 9 }', 4,
         "limits: unknown key `agent_turn` (did you mean `agent_turns`?"),
        ('agent: { adapter: "reference" }, persona: { driver: "anthropic:m",\n  context_token: 8000 }', 4,
         "persona (anthropic:m): unknown key `context_token` (did you mean `context_tokens`?"),
    ],
)
def test_a_misspelt_key_in_any_block_is_refused_at_its_line_naming_the_nearest(
    tmp_path: Path, block: str, line: int, said: str
) -> None:
    """Issue 47 item 1: `persona: {drvier: …}` ran the scripted persona, `context_token` the
    default window, `reply_pth` and `timout` the defaults — only run-level keys were checked."""
    text = '{\n  runs: [{ id: "r", benchmark: "b",\n  ' + block + " }],\n}\n"
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert f"config.jsonc:{line}:" in str(caught.value) and said in str(caught.value), (str(caught.value), text)


def test_the_shipped_profiles_and_examples_use_only_known_keys() -> None:
    """Every key a shipped profile sets is one some adapter reads: the check refuses no profile."""
    from adapters.profiles import profile_names, resolve
    from gateway.run.setting_keys import agent_key_problems

    for name in profile_names():
        assert list(agent_key_problems(resolve({"profile": name}))) == [], name


def test_compaction_at_the_top_is_handed_only_to_personas_that_take_it(make_benchmark: BenchFactory) -> None:
    """Issue 62: docs/persona.md accepts `compaction` at the top for every run; a scripted run then
    stopped with "persona (scripted): unknown key 'compaction'" — a default handed down is not the
    user's typo. The scripted persona doesn't take it; the LLM persona does."""
    bench = make_benchmark()

    def config(*drivers: str) -> Path:
        runs = ", ".join(
            f'{{ id: "r{n}", benchmark: "{bench}", agent: {{ adapter: "reference" }}, persona: {{ driver: "{d}" }} }}'
            for n, d in enumerate(drivers)
        )
        path = bench.parent / f"{'-'.join(d.split(':')[0] for d in drivers)}.jsonc"
        path.write_text(f'{{ recordings: "rec", compaction: {{ max_tokens: 30000, trim_to_tokens: 10000 }}, runs: [{runs}] }}')
        return path

    scripted, llm = load_config(config("scripted", "anthropic:m")).runs
    assert "compaction" not in scripted.persona and llm.persona["compaction"]["max_tokens"] == 30000
    ran = marathon("run", str(config("scripted")), cwd=bench.parent)  # as docs/persona.md allows it
    assert ran.returncode == 0 and "unknown key" not in ran.stderr, ran.stderr
