"""The scale ladder (design §7): a benchmark as played on a rung, distractor phases inserted.

What a caller may rely on: rung k holds rung k-1's distractors at the same places (the pool
is shuffled once from `seed` and every rung takes a prefix of that order), every distractor is
its own new session, and the evidence phases are the benchmark's own, untouched — so the
evidence the persona states is identical on every rung (the report checks this from the logs).
The `scale` settings themselves are read in `persona.benchmark.scale`.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from persona.benchmark.directives import BenchAction
from persona.benchmark.errors import BenchmarkError, BenchmarkErrors, SourceLocation
from persona.benchmark.loader import load_benchmark
from persona.benchmark.model import Benchmark, Phase, Utterance, insert_index
from persona.benchmark.pool import Pool
from persona.benchmark.screening import load_pool
from persona.phrases import phrases_for

DISTRACTOR_CHAPTER = "distractors/"
FACTS_PER_DISTRACTOR_MESSAGE = 3


_pools: dict[Path, Pool] = {}


def _pool(folder: Path) -> Pool:
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


def benchmark_for(path: str | Path, rung: str = "", pool: str | Path | None = None) -> Benchmark:
    """Load a benchmark as a run plays it (on `rung`, when given). `pool`: a distractor pool
    the run's config names in place of the benchmark's own (`scale.distractors`) — the way to
    use a pool that is not beside the benchmark, which the benchmark itself may not name."""
    bench = load_benchmark(path)
    if pool is not None and bench.scale is not None:
        bench = replace(bench, scale=replace(bench.scale, distractors=str(Path(pool).resolve())))
    return apply_rung(bench, rung) if rung else bench


def without_distractors(bench: Benchmark) -> Benchmark:
    """The benchmark a rung was made from (its own phases, numbered from 0 again)."""
    own = [p for p in bench.phases if not p.distractor]
    return replace(
        bench, phases=tuple(replace(p, index=n) for n, p in enumerate(own)), rung="", distractors=()
    )
