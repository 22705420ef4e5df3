"""A config run's checkpoint and fork keys, expanded into runs (docs/experiments.md).

    checkpoint_at: "exam" | NAME       archive the agent's state just before the exam (or at a
                                       checkpoint the benchmark declares) and go on
    exam: "sequential" | "isolated" | ["sequential", "isolated"]
    rollouts: K                        forks per question (isolated) or per exam (sequential)
    from: {run: ID, checkpoint: NAME}  this run forks from another run's checkpoint

On a scale ladder, `checkpoint_at: "distractors"` teaches once: `ID.teach` plays the benchmark
up to where the rungs insert their distractor sessions and ends there; every rung `ID.sK`
forks from it and plays only its distractors and the exam (one teacher per repeat).

An experiment's `prepare: {benchmark, checkpoint_at?, agent?}` with `memory: "frozen"` (protocol
001): `NAME.prepare` teaches once (to its end, or to `checkpoint_at`; with B's agent unless `agent`
says otherwise) and every task run of both variants starts from its checkpoint's state — the
same initial state, its hash in every run line — playing its own benchmark from the start (only
the agent's state is taken, not the conversation). `memory: "accumulating"`: see
`with_prepared_memory`.

With `exam` or `rollouts`, the configured run teaches up to its checkpoint and ends there (ID);
the exam is played by forks of that checkpoint: `ID.seq.rK` (the whole exam, in order) and
`ID.iso.QID.rK` (question QID alone, named by its id). Each fork is a run of its own: logged, resumable, reported.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, ClassVar, Protocol

from gateway.log.run_meta import RunMeta
from persona.benchmark.errors import BenchmarkError, BenchmarkErrors
from persona.benchmark.forks import DISTRACTORS, END, EXAM, questions_after
from persona.benchmark.model import Benchmark


class Spec(Protocol):
    """What of a `RunSpec` (gateway/run/config.py, which expands runs with this module) it uses."""

    __dataclass_fields__: ClassVar[dict[str, Any]]  # a dataclass: `replace` makes its forks

    @property
    def id(self) -> str: ...
    @property
    def meta(self) -> dict[str, Any]: ...
    @property
    def run_meta(self) -> RunMeta: ...
    def played_benchmark(self) -> Benchmark: ...


# direct-evidence: each question alone, its evidence restated right before it — a diagnostic
EXAM_MODES = ("sequential", "isolated", "direct-evidence")
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
            return '`exam` must be "sequential", "isolated", "direct-evidence" or a list of them'
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
    if at == DISTRACTORS and (modes is not None or rollouts is not None or origin is not None):
        return '`checkpoint_at: "distractors"` teaches a ladder once; `exam`, `rollouts` and `from` don\'t go with it'
    if at == END and (modes is not None or rollouts is not None):
        return '`checkpoint_at: "end"` comes after the last question: an exam forked from it would ask nothing'
    if at == DISTRACTORS and not run.get("rung"):
        return '`checkpoint_at: "distractors"` needs the ladder\'s rungs (`rung: [...]`) to fork'
    return None


def run_name_part(text: str) -> str:
    """`text` as part of a run's folder name (a question id: `q11` stays `q11`)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", text) or "_"


def expand_forks[S: Spec](spec: S, run: dict[str, Any]) -> list[S]:
    """`spec` with its checkpoint keys applied, and the forks its `exam`/`rollouts` ask for.
    Raises `BenchmarkErrors` when the checkpoint is not in the benchmark."""
    origin = run.get("from")
    if isinstance(origin, dict):
        name = str(origin["checkpoint"])
        # the fork tables count it beside its parent's other forks, as `marathon fork` does
        meta = {"fork_of": str(origin["run"]), "exam": "sequential", **spec.meta}
        return [replace(spec, parent=(str(origin["run"]), name), checkpoint_at=name, meta=meta)]
    at = str(run.get("checkpoint_at") or "")
    if at == DISTRACTORS:
        return [replace(spec, checkpoint_at=at)]  # a rung: `teach_ladder_once` gives it its parent
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
        questions = (
            questions_after(replace(teacher, until="").played_benchmark(), name)
            if {"isolated", "direct-evidence"} & set(listed)
            else ()
        )
    except BenchmarkError as exc:
        raise BenchmarkErrors([exc]) from None
    forks = [teacher]
    fork = replace(spec, checkpoint_at=name, parent=(spec.id, name))
    for k in range(1, rollouts + 1):
        if "sequential" in listed:
            meta = {**spec.meta, "fork_of": spec.id, "exam": "sequential", "rollout": k}
            forks.append(replace(fork, id=f"{spec.id}.seq.r{k}", meta=meta))
        for mode, tag in (("isolated", "iso"), ("direct-evidence", "dir")):
            if mode not in listed:
                continue
            for q in questions:
                meta = {**spec.meta, "fork_of": spec.id, "exam": mode, "rollout": k, "question": q.id}
                restate = mode == "direct-evidence"
                forks.append(
                    replace(
                        fork,
                        id=f"{spec.id}.{tag}.{run_name_part(q.id)}.r{k}",
                        questions=(q.id,),
                        meta=meta,
                        restate=restate,
                    )
                )
    return forks


def teach_ladder_once[S: Spec](specs: list[S], run: dict[str, Any]) -> list[S]:
    """A ladder run's rungs (`checkpoint_at: "distractors"`) as forks of one teaching per repeat."""
    if run.get("checkpoint_at") != DISTRACTORS:
        return specs
    out: list[S] = []
    teachers: dict[int, str] = {}
    for spec in specs:
        repeat = spec.run_meta.repeat
        if repeat not in teachers:
            suffix = f".r{repeat}" if any(s.run_meta.repeat > 1 for s in specs) else ""
            teacher_id = f"{spec.run_meta.id or spec.id}.teach{suffix}"
            teachers[repeat] = teacher_id
            meta = {k: v for k, v in spec.meta.items() if k != "rung"} | {"teaches": "ladder"}
            out.append(replace(spec, id=teacher_id, rung="", until=DISTRACTORS, meta=meta))
        out.append(replace(spec, parent=(teachers[repeat], DISTRACTORS)))
    return out


PREPARE_KEYS = ("benchmark", "checkpoint_at", "agent")


def prepare_problem(prepare: Any, memory: Any) -> str | None:
    if memory not in ("frozen", "accumulating"):
        return (
            '`memory` must be "frozen" (each task starts from the prepared state afresh) or "accumulating" '
            "(each task from the previous one's end)"
        )
    if prepare is None and memory == "accumulating":
        return None  # the first task of each sequence starts from an empty state
    if not isinstance(prepare, dict) or not isinstance(prepare.get("benchmark"), str):
        return "`prepare` must be {benchmark: PATH, checkpoint_at?: NAME, agent?: {...}} beside `memory`"
    if unknown := sorted(set(prepare) - set(PREPARE_KEYS)):
        return f"`prepare` has unknown keys {', '.join(unknown)}; known: {', '.join(PREPARE_KEYS)}"
    if not isinstance(prepare.get("checkpoint_at", END), str):
        return '`prepare.checkpoint_at` must be a checkpoint name ("end", "exam" or the benchmark\'s own)'
    return None


def with_prepared_memory[S: Spec](
    specs: list[S],
    experiment: str,
    memory: str,
    prepared: tuple[Any, dict[str, Any], dict[str, Any]] | None,
) -> list[S]:
    """The preparation run (`prepared`: its benchmark, agent and `prepare` settings), then `specs`
    (the experiment's task runs): "frozen", each from the preparation's state; "accumulating",
    each variant's tasks of one repeat a sequence — the first from the preparation's state (or
    an empty one), each next from the previous one's end. A sequence is one cluster of the
    comparison (its tasks are not independent); `step` numbers its tasks."""
    origin: tuple[str, str] | None = None
    out: list[S] = []
    if prepared is not None:
        benchmark, agent, prepare = prepared
        at = str(prepare.get("checkpoint_at", END))
        origin = (f"{experiment}.prepare", at)
        out.append(
            replace(
                specs[0],
                id=origin[0],
                benchmark=benchmark,
                agent=agent,
                rung="",
                meta={"prepares": experiment},
                checkpoint_at=at,
                until=at,
                parent=None,
            )
        )
    if memory == "frozen":
        assert origin is not None
        return out + [replace(s, parent=origin, parent_prefix=False) for s in specs]
    previous: dict[tuple[str, int], str] = {}
    steps: dict[tuple[str, int], int] = {}
    for s in specs:
        chain = (s.run_meta.variant, s.run_meta.repeat)
        steps[chain] = steps.get(chain, 0) + 1
        parent = (previous[chain], END) if chain in previous else origin
        meta = {**s.meta, "cluster": f"sequence.r{chain[1]}", "step": steps[chain], "memory": "accumulating"}
        out.append(replace(s, parent=parent, parent_prefix=False, checkpoint_at=END, meta=meta))
        previous[chain] = s.id
    return out
