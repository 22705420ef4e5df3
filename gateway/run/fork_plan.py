"""A config run's checkpoint and fork keys, expanded into runs (docs/experiments.md).

    checkpoint_at: "exam" | NAME       archive the agent's state just before the exam (or at a
                                       checkpoint the benchmark declares) and go on
    exam: "sequential" | "isolated" | ["sequential", "isolated"]
    rollouts: K                        forks per question (isolated) or per exam (sequential)
    from: {run: ID, checkpoint: NAME}  this run forks from another run's checkpoint

With `exam` or `rollouts`, the configured run teaches up to its checkpoint and ends there (ID);
the exam is played by forks of that checkpoint: `ID.seq.rK` (the whole exam, in order) and
`ID.iso.qNN.rK` (question NN alone). Each fork is a run of its own: logged, resumable, reported.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, Protocol

from persona.benchmark.errors import BenchmarkError, BenchmarkErrors
from persona.benchmark.forks import EXAM, questions_after
from persona.benchmark.model import Benchmark


class Spec(Protocol):
    """What of a `RunSpec` (gateway/run/config.py, which expands runs with this module) it uses."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # a dataclass: `replace` makes its forks

    @property
    def id(self) -> str: ...
    @property
    def meta(self) -> dict[str, Any]: ...
    def played_benchmark(self) -> Benchmark: ...

EXAM_MODES = ("sequential", "isolated")
MAX_ROLLOUTS = 100


def fork_keys_problem(run: dict[str, Any]) -> str | None:
    """What is wrong with a run's checkpoint and fork keys (None: nothing)."""
    at = run.get("checkpoint_at")
    if at is not None and (not isinstance(at, str) or not at):
        return '`checkpoint_at` must be "exam" or the name of a checkpoint the benchmark declares'
    modes = run.get("exam")
    if modes is not None:
        listed = [modes] if isinstance(modes, str) else modes
        if not isinstance(listed, list) or not listed or any(m not in EXAM_MODES for m in listed):
            return '`exam` must be "sequential", "isolated" or a list of both'
    rollouts = run.get("rollouts")
    if rollouts is not None and (
        isinstance(rollouts, bool) or not isinstance(rollouts, int) or not 1 <= rollouts <= MAX_ROLLOUTS
    ):
        return f"`rollouts` must be a whole number from 1 to {MAX_ROLLOUTS}"
    origin = run.get("from")
    if origin is not None and (
        not isinstance(origin, dict)
        or not isinstance(origin.get("run"), str)
        or not isinstance(origin.get("checkpoint"), str)
        or set(origin) - {"run", "checkpoint"}
    ):
        return "`from` must be {run: ID, checkpoint: NAME}"
    if origin is not None and (modes is not None or rollouts is not None):
        return "`from` forks one run; `exam` and `rollouts` go on the run that teaches"
    return None


def expand_forks[S: Spec](spec: S, run: dict[str, Any]) -> list[S]:
    """`spec` with its checkpoint keys applied, and the forks its `exam`/`rollouts` ask for.
    Raises `BenchmarkErrors` when the checkpoint is not in the benchmark."""
    origin = run.get("from")
    if isinstance(origin, dict):
        name = str(origin["checkpoint"])
        return [replace(spec, parent=(str(origin["run"]), name), checkpoint_at=name)]
    at = str(run.get("checkpoint_at") or "")
    modes = run.get("exam")
    rollouts = int(run.get("rollouts", 1))
    listed = [modes] if isinstance(modes, str) else list(modes or [])
    if not listed and rollouts == 1:
        return [replace(spec, checkpoint_at=at)]  # one run, through its checkpoint
    if not listed:
        listed = ["sequential"]
    name = at or EXAM
    teacher = replace(spec, checkpoint_at=name, until=name, meta={**spec.meta, "exam_forks": listed})
    try:
        questions = questions_after(replace(teacher, until="").played_benchmark(), name) if "isolated" in listed else ()
    except BenchmarkError as exc:
        raise BenchmarkErrors([exc]) from None
    forks = [teacher]
    fork = replace(spec, checkpoint_at=name, parent=(spec.id, name))
    for k in range(1, rollouts + 1):
        if "sequential" in listed:
            meta = {**spec.meta, "fork_of": spec.id, "exam": "sequential", "rollout": k}
            forks.append(replace(fork, id=f"{spec.id}.seq.r{k}", meta=meta))
        for n, q in enumerate(questions, 1):
            meta = {**spec.meta, "fork_of": spec.id, "exam": "isolated", "rollout": k, "question": q.id}
            forks.append(replace(fork, id=f"{spec.id}.iso.q{n:02d}.r{k}", questions=(q.id,), meta=meta))
    return forks
