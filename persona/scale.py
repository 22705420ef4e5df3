"""The scale ladder (design §7): the same evidence, more and more irrelevant sessions.

A benchmark declares in `benchmark.json`

    scale: {
      ladder: {s0: 0, s1: 4, s2: 8},     // rung → number of distractor sessions
      insert_before: "chapter3.md",      // a chapter file or a phase title
      distractors: "../distractors",     // a screened pool (see persona/distractors.py)
      seed: 7,
      budgets: [1, 2, 4],                // memory calls per question allowed (Pass@B)
      target: 0.8,                       // the reliability target ρ of the collapse onset
    }

What a caller may rely on: rung k holds rung k-1's distractors at the same places (the pool
is shuffled once from `seed` and every rung takes a prefix of that order), every distractor is
its own new session, and the evidence phases are the benchmark's own, untouched — so the
evidence the persona states is identical on every rung (the report checks this from the logs).
"""

from __future__ import annotations

import random
from collections.abc import Generator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from persona.actions import AgentReply, EnterPhase, PersonaAction
from persona.directives import BenchAction
from persona.errors import BenchmarkError, BenchmarkErrors, SourceLocation

if TYPE_CHECKING:
    from persona.benchmark import Benchmark, Phase
    from persona.distractors import Pool
    from persona.driver import PersonaDriver

DISTRACTOR_CHAPTER = "distractors/"
FACTS_PER_DISTRACTOR_MESSAGE = 3


@dataclass(frozen=True)
class ScaleSpec:
    ladder: dict[str, int]
    insert_before: str
    distractors: str
    seed: int
    budgets: tuple[int, ...]
    target: float

    @property
    def rungs(self) -> tuple[str, ...]:
        return tuple(self.ladder)


def parse_scale(data: Any) -> tuple[ScaleSpec | None, list[str]]:
    """Read the `scale` object; returns the spec or the list of what is wrong with it."""
    if not isinstance(data, dict):
        return None, ["`scale` must be an object {ladder, insert_before, distractors, seed}"]
    problems: list[str] = []
    ladder = data.get("ladder")
    if (
        not isinstance(ladder, dict)
        or not ladder
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in ladder.values())
    ):
        problems.append("`scale.ladder` must map rung names to distractor counts ≥ 0, e.g. {s0: 0, s1: 4}")
        ladder = {}
    counts = list(ladder.values())
    if counts != sorted(counts):
        problems.append("`scale.ladder` counts must not decrease from one rung to the next")
    insert_before = data.get("insert_before")
    if not isinstance(insert_before, str) or not insert_before:
        problems.append("`scale.insert_before` must name a chapter file or a phase title")
    distractors = data.get("distractors")
    if not isinstance(distractors, str) or not distractors:
        problems.append("`scale.distractors` must be the path of a distractor pool folder")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        problems.append("`scale.seed` must be an integer")
    budgets = data.get("budgets", [1, 2, 4])
    if (
        not isinstance(budgets, list)
        or not budgets
        or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 0 for b in budgets)
    ):
        problems.append("`scale.budgets` must be a non-empty list of memory-call budgets ≥ 0")
        budgets = []
    target = data.get("target", 0.8)
    if not isinstance(target, (int, float)) or isinstance(target, bool) or not 0 < target <= 1:
        problems.append("`scale.target` must be a reliability target ρ in (0, 1]")
        target = 0.8
    if problems:
        return None, problems
    return (
        ScaleSpec(
            {str(k): int(v) for k, v in ladder.items()},
            str(insert_before),
            str(distractors),
            int(seed),
            tuple(sorted(set(int(b) for b in budgets))),
            float(target),
        ),
        [],
    )


def insert_index(phases: tuple[Phase, ...], insert_before: str) -> int | None:
    """The index of the first phase of chapter `insert_before`, or of the phase titled so."""
    for phase in phases:
        if phase.chapter == insert_before or phase.title == insert_before:
            return phase.index
    return None


_pools: dict[Path, Pool] = {}


def _pool(folder: Path) -> Pool:
    from persona.distractors import load_pool

    key = folder.resolve()
    if key not in _pools:
        _pools[key] = load_pool(key)
    return _pools[key]


def distractor_order(pool: Pool, seed: int) -> list[str]:
    """The pool's sessions in the seeded order every rung takes a prefix of."""
    names = sorted(pool.sessions)
    random.Random(seed).shuffle(names)
    return names


def apply_rung(bench: Benchmark, rung: str) -> Benchmark:
    """The benchmark as played on `rung`: distractor phases inserted before `insert_before`.

    Raises `BenchmarkErrors` (file and line) for an unknown rung, a pool that fails its
    screening or is too small for the rung. The result keeps the benchmark's content hash:
    the evidence is the same; `rung` and `distractors` say what was added.
    """
    from persona.benchmark import Utterance
    from persona.scripted import phrases_for

    def refuse(message: str) -> BenchmarkErrors:
        return BenchmarkErrors([BenchmarkError(SourceLocation(bench.root / "benchmark.json", 1), message)])

    spec = bench.scale
    if spec is None:
        raise refuse(f"rung {rung!r} asked for, but there is no `scale`")
    if rung not in spec.ladder:
        raise refuse(f"unknown rung {rung!r}; the ladder has {', '.join(spec.rungs)}")
    pool = _pool(bench.root / spec.distractors)
    order = distractor_order(pool, spec.seed)
    count = spec.ladder[rung]
    if count > len(order):
        raise refuse(f"rung {rung} needs {count} distractor sessions; {pool.root} holds {len(order)}")
    at = insert_index(bench.phases, spec.insert_before)
    assert at is not None  # the loader checked it
    intro = phrases_for(bench.language)["distractor_intro"]
    inserted: list[Phase] = []
    for n, name in enumerate(order[:count]):
        facts = [text for _, text in pool.sessions[name]]
        topic = pool.titles.get(name, Path(name).stem)
        items = tuple(
            Utterance(
                intro.format(topic=topic)
                + "\n"
                + "\n".join(f"- {t}" for t in facts[i : i + FACTS_PER_DISTRACTOR_MESSAGE]),
                0,
            )
            for i in range(0, len(facts), FACTS_PER_DISTRACTOR_MESSAGE)
        )
        inserted.append(
            replace(
                bench.phases[at],
                index=at + n,
                chapter=DISTRACTOR_CHAPTER + name,
                title=topic,
                line=0,
                directives=(BenchAction("new_session", 0),),
                items=items,
                description="",
                distractor=name,
            )
        )
    phases = (
        *bench.phases[:at],
        *inserted,
        *(replace(p, index=p.index + count) for p in bench.phases[at:]),
    )
    return replace(bench, phases=phases, rung=rung, distractors=tuple(order[:count]))


def benchmark_for(path: str | Path, rung: str = "") -> Benchmark:
    """Load a benchmark as a run plays it (on `rung`, when given)."""
    from persona.benchmark import load_benchmark

    bench = load_benchmark(path)
    return apply_rung(bench, rung) if rung else bench


def without_distractors(bench: Benchmark) -> Benchmark:
    """The benchmark a rung was made from (its own phases, numbered from 0 again)."""
    own = [p for p in bench.phases if not p.distractor]
    return replace(
        bench, phases=tuple(replace(p, index=n) for n, p in enumerate(own)), rung="", distractors=()
    )


class LadderDriver:
    """Wraps a persona driver that plays only the evidence (the LLM persona): the rung's
    distractor sessions are played by the scripted driver, word for word the same on every
    rung and in every persona; the inner driver's phase numbers are mapped onto the rung's.

    Deterministic exactly when the inner driver is, so resume-by-replay still holds.
    """

    def __init__(self, inner: PersonaDriver, scaled: Benchmark) -> None:
        from persona.scripted import ScriptedDriver

        self.inner = inner
        self.name = inner.name
        self.deterministic = inner.deterministic
        self._scripted = ScriptedDriver(scaled)
        self._distractors = [p for p in scaled.phases if p.distractor]
        self._at = self._distractors[0].index if self._distractors else len(scaled.phases)
        self._pending: Generator[PersonaAction, AgentReply | None, None] | None = None
        self._held: PersonaAction | None = None
        self._played = not self._distractors

    @property
    def client(self) -> Any:
        """The inner driver's model client (the runner closes it)."""
        return getattr(self.inner, "client", None)

    async def next_action(self, reply: AgentReply | None) -> PersonaAction:
        if self._pending is not None:
            try:
                return self._pending.send(reply)
            except StopIteration:
                self._pending = None
                held, self._held = self._held, None
                assert held is not None
                return held
        action = await self.inner.next_action(reply)
        if isinstance(action, EnterPhase) and action.index >= self._at:
            action = replace(action, index=action.index + len(self._distractors))
            if not self._played:
                self._played = True
                self._held = action
                self._pending = self._script()
                return next(self._pending)
        return action

    def _script(self) -> Generator[PersonaAction, AgentReply | None, None]:
        for phase in self._distractors:
            yield from self._scripted.play_phase(phase)
