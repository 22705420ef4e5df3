"""The `scale` settings of a benchmark (design §7): the ladder's rungs, the pool, the budgets.

A benchmark declares in `benchmark.json`

    scale: {
      ladder: {s0: 0, s1: 4, s2: 8},     // rung → number of distractor sessions
      insert_before: "chapter3.md",      // a chapter file or a phase title
      distractors: "../distractors",     // a screened pool (see persona/benchmark/pool.py)
      seed: 7,
      budgets: [1, 2, 4],                // memory calls per question allowed (Pass@B)
      target: 0.8,                       // the reliability target ρ of the collapse onset
    }

How a rung is built from them is `persona.benchmark.ladder`; this module only reads and
checks the settings, so the format's data (`model.py`) can hold them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from persona.outcome import rule_problem


@dataclass(frozen=True)
class ScaleSpec:
    ladder: dict[str, int]
    insert_before: str
    distractors: str
    seed: int
    budgets: tuple[int, ...]
    target: float
    correct: str = "first_try"  # what C(τ) = 1 means: first_try | any_full | score>=N

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
    correct = data.get("correct", "first_try")
    if (problem := rule_problem(correct)) is not None:
        problems.append(problem)
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
            str(correct),
        ),
        [],
    )
