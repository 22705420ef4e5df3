"""The scale ladder: declared in benchmark.json, checked at load, applied per rung."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.ladder import apply_rung, benchmark_for, without_distractors
from persona.benchmark.loader import load_benchmark
from persona.benchmark.model import Utterance
from persona.drivers.actions import AgentReply, Ask, EnterPhase, Finish, PersonaAction, Say
from persona.drivers.ladder import LadderDriver
from persona.drivers.scripted import ScriptedDriver
from tests.conftest import DEMO, REPO, BenchFactory

POOL = REPO / "benchmarks" / "distractors"


@pytest.fixture(autouse=True)
def _pool_beside_the_benchmark(pool_beside: str) -> None:
    """Every test here names the shipped pool, copied beside its benchmark (`../distractors`)."""


def scale(**over: object) -> str:
    fields = {
        "ladder": "{s0: 0, s1: 2, s2: 5}",
        "insert_before": '"ch2.md"',
        "distractors": '"../distractors"',
        "seed": "3",
    }
    fields.update({k: str(v) for k, v in over.items()})
    body = ", ".join(f"{k}: {v}" for k, v in fields.items())
    return f'{{\n  name: "tiny",\n  chapters: ["ch1.md", "ch2.md"],\n  scale: {{ {body} }},\n}}\n'


def test_each_rung_holds_the_previous_rungs_distractors_at_the_same_places(
    make_benchmark: BenchFactory,
) -> None:
    bench = load_benchmark(make_benchmark(benchmark__json=scale()))
    rungs = {r: apply_rung(bench, r) for r in ("s0", "s1", "s2")}
    assert [len(b.distractors) for b in rungs.values()] == [0, 2, 5]
    assert rungs["s2"].distractors[:2] == rungs["s1"].distractors
    for b in rungs.values():
        kinds = [p.distractor or p.title for p in b.phases]
        n = len(b.distractors)
        assert kinds[:2] == ["Intro", "Pets"] and kinds[-1] == "Exam"
        assert kinds[2 : 2 + n] == list(b.distractors)  # all before the exam, in the seeded order
        assert [p.index for p in b.phases] == list(range(len(b.phases)))
        assert all(p.actions == ("new_session",) for p in b.phases if p.distractor)
        # the evidence phases are the benchmark's own
        assert [(p.title, p.items) for p in b.phases if not p.distractor] == [
            (p.title, p.items) for p in bench.phases
        ]
        assert b.content_hash == bench.content_hash
    assert without_distractors(rungs["s2"]).phases == bench.phases


def test_another_seed_draws_another_order(make_benchmark: BenchFactory) -> None:
    a = apply_rung(load_benchmark(make_benchmark(benchmark__json=scale(seed=3))), "s2").distractors
    b = apply_rung(load_benchmark(make_benchmark(benchmark__json=scale(seed=4))), "s2").distractors
    assert a != b and len(a) == len(b) == 5


@pytest.mark.parametrize(
    ("over", "message"),
    [
        ({"ladder": "{s0: 3, s1: 1}"}, "must not decrease"),
        ({"ladder": "[1, 2]"}, "must map rung names"),
        ({"insert_before": '"nowhere.md"'}, "no chapter file or phase title 'nowhere.md'"),
        ({"insert_before": '"Pets"'}, "must start with `await bench.newSession()`"),
        ({"distractors": '"../nope"'}, "is not a distractor pool"),
        ({"distractors": f'"{POOL}"'}, "leads outside the benchmark's folder"),
        ({"distractors": '"../../../etc"'}, "leads outside the benchmark's folder"),
        ({"budgets": "[-1]"}, "`scale.budgets`"),
        ({"target": "1.5"}, "reliability target"),
    ],
)
def test_a_bad_scale_fails_at_load_with_file_and_line(
    make_benchmark: BenchFactory, over: dict[str, str], message: str
) -> None:
    with pytest.raises(BenchmarkErrors) as err:
        load_benchmark(make_benchmark(benchmark__json=scale(**over)))
    text = str(err.value)
    assert message in text and "benchmark.json:" in text


def test_a_pool_in_another_language_than_the_benchmark_fails_at_load(make_benchmark: BenchFactory) -> None:
    russian = scale().replace('name: "tiny",', 'name: "tiny", language: "ru",')
    with pytest.raises(BenchmarkErrors) as err:
        load_benchmark(make_benchmark(benchmark__json=russian))
    assert "is in 'en', this benchmark in 'ru'" in str(err.value)
    assert "benchmark.json:4:" in str(err.value)  # the `scale` line, where `distractors` is


def test_the_russian_marathon_hears_its_distractors_in_russian() -> None:
    bench = load_benchmark(REPO / "benchmarks" / "marathon-ru")
    top = apply_rung(bench, bench.scale.rungs[-1] if bench.scale else "")
    told = [u.text for p in top.phases if p.distractor for u in p.items if isinstance(u, Utterance)]
    assert len(told) >= 40
    assert all(re.search("[а-я]", t) and not re.search("[a-z]", t, re.IGNORECASE) for t in told), told[:3]


def test_an_unknown_rung_or_a_too_small_pool_is_an_error(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    bench = load_benchmark(make_benchmark(benchmark__json=scale()))
    with pytest.raises(BenchmarkErrors, match="unknown rung 's9'; the ladder has s0, s1, s2"):
        apply_rung(bench, "s9")
    small = tmp_path / "small-pool"
    small.mkdir()
    (small / "pool.json5").write_text("{screen_against: []}")
    for name in sorted(p.name for p in POOL.glob("0[1-3]-*.md")):
        shutil.copy(POOL / name, small / name)
    bench = load_benchmark(make_benchmark(benchmark__json=scale(distractors='"../small-pool"')))
    with pytest.raises(BenchmarkErrors, match=r"rung s2 needs 5 distractor sessions; .* holds 3"):
        apply_rung(bench, "s2")


def test_a_run_config_may_name_a_pool_the_benchmark_itself_may_not(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "far" / "away" / "pool"
    elsewhere.mkdir(parents=True)
    (elsewhere / "pool.json5").write_text("{screen_against: []}")
    names = sorted(p.name for p in POOL.glob("0[4-9]-*.md"))
    for name in names:
        shutil.copy(POOL / name, elsewhere / name)
    folder = make_benchmark(benchmark__json=scale())
    played = benchmark_for(folder, "s1", pool=elsewhere)
    assert len(played.distractors) == 2 and set(played.distractors) <= set(names)
    assert benchmark_for(folder, "s1").distractors != played.distractors  # the benchmark's own pool


class _EvidenceOnly:
    """A persona driver that knows nothing of distractors (as the LLM persona), replaying a
    scripted run of the base benchmark."""

    name = "evidence-only"
    deterministic = True

    def __init__(self, bench_path: Path) -> None:
        self.inner = ScriptedDriver(load_benchmark(bench_path))

    async def next_action(self, reply: AgentReply | None) -> PersonaAction:
        return await self.inner.next_action(reply)


async def _play(driver: object) -> list[PersonaAction]:
    actions: list[PersonaAction] = []
    reply: AgentReply | None = None
    while True:
        action = await driver.next_action(reply)  # type: ignore[attr-defined]
        actions.append(action)
        if isinstance(action, Finish):
            return actions
        reply = AgentReply("ok") if isinstance(action, Say | Ask) else None


async def test_the_ladder_driver_plays_the_distractors_scripted_and_maps_phase_numbers() -> None:
    scaled = apply_rung(load_benchmark(DEMO), "s2")
    wrapped = await _play(LadderDriver(_EvidenceOnly(DEMO), scaled))
    scripted = await _play(ScriptedDriver(scaled))
    # around a driver that only plays the evidence, the rung comes out exactly as scripted
    assert wrapped == scripted
    phases = [a for a in wrapped if isinstance(a, EnterPhase)]
    assert [p.index for p in phases] == list(range(len(scaled.phases)))
    said = [a for a in wrapped if isinstance(a, Say) and a.purpose == "distractor"]
    assert said and all(s.text.startswith("Something unrelated") for s in said)
