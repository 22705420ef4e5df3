"""A benchmark as a checkpointed run or one of its forks plays it (docs/experiments.md,
"Checkpoints and forks").

Three transforms, each keeping the phases' indexes and titles so that a fork's persona, replaying
its parent's log up to the checkpoint, acts exactly as the parent did:
- `with_checkpoint_at(bench, "exam")`: a checkpoint right before the first question (a phase
  that tells facts or lines before it is split in two there; else the checkpoint comes after the
  phase's own new session or compaction) (`checkpoint_at: "exam"`);
  `with_checkpoint_at(bench, "distractors")`: a phase of its own holding only a checkpoint, just
  before a scale ladder inserts its distractor sessions — the same on every rung (rung s0 too),
  so each rung forks from one teaching;
- `until_checkpoint(bench, name)`: only what comes before the checkpoint (a teaching run whose
  exam is played by forks);
- `only_questions(bench, ids, name)`: after the checkpoint, only the questions `ids` (an
  isolated exam's fork); lines, updates and sessions after it are kept, as they shape the state
  each question is asked from.
"""

from __future__ import annotations

from dataclasses import replace

from persona.benchmark.directives import CHECKPOINT_PREFIX, BenchAction
from persona.benchmark.errors import BenchmarkError, SourceLocation
from persona.benchmark.model import Benchmark, Phase, Question, insert_index

EXAM = "exam"  # `checkpoint_at: "exam"`: just before the exam
END = "end"  # `checkpoint_at: "end"`: after everything (an experiment's prepared memory)
DISTRACTORS = "distractors"  # `checkpoint_at: "distractors"`: where a scale ladder inserts its sessions


def checkpoint_phase(bench: Benchmark, name: str) -> int:
    """The index of the phase that opens with checkpoint `name`; `BenchmarkError` when none does."""
    for phase in bench.phases:
        if CHECKPOINT_PREFIX + name in phase.actions:
            return phase.index
    names = [
        a.removeprefix(CHECKPOINT_PREFIX)
        for p in bench.phases
        for a in p.actions
        if a.startswith(CHECKPOINT_PREFIX)
    ]
    known = f"; it has {', '.join(repr(n) for n in names)}" if names else "; it has none"
    raise BenchmarkError(
        SourceLocation(bench.root, 0), f"no checkpoint named {name!r} in {bench.name}{known}"
    )


def with_checkpoint_at(bench: Benchmark, name: str) -> Benchmark:
    """`name` is "exam" (before the first question's phase talks), or a checkpoint the benchmark
    itself declares (`await bench.checkpoint("NAME")`), which needs no change."""
    if name == DISTRACTORS:
        return _checkpoint_before_distractors(bench)
    if name == END:
        if bench.phases and CHECKPOINT_PREFIX + END in bench.phases[-1].actions:
            return bench
        last = bench.phases[-1]
        mark = Phase(
            len(bench.phases),
            last.chapter,
            "Checkpoint at the end",
            0,
            (BenchAction(CHECKPOINT_PREFIX + END, 0),),
            (),
            "",
        )
        return replace(bench, phases=(*bench.phases, mark))
    if name != EXAM:
        checkpoint_phase(bench, name)  # refused when the benchmark has no such checkpoint
        return bench
    first = next((p for p in bench.phases if p.questions), None)
    if first is None:
        raise BenchmarkError(
            SourceLocation(bench.root, 0), f'`checkpoint_at: "exam"`: {bench.name} asks no question'
        )
    if any(CHECKPOINT_PREFIX + EXAM in p.actions for p in bench.phases):
        return bench
    at = next(n for n, item in enumerate(first.items) if isinstance(item, Question))
    directive = BenchAction(CHECKPOINT_PREFIX + EXAM, first.items[at].line)
    if at == 0 and not first.require_all_facts:  # the phase opens with its first question
        marked = replace(first, directives=(*first.directives, directive))
        return replace(bench, phases=tuple(marked if p.index == first.index else p for p in bench.phases))
    # the phase tells something first (its facts, lines): split it, so the checkpoint comes right
    # before the first question and a fork never tells that again
    told = replace(first, items=first.items[:at])
    asked = Phase(
        index=first.index + 1,
        chapter=first.chapter,
        title=f"{first.title} — the questions",
        line=first.items[at].line,
        directives=(directive,),
        items=first.items[at:],
        description="",
    )
    later = tuple(replace(p, index=p.index + 1) for p in bench.phases[first.index + 1 :])
    return replace(bench, phases=(*bench.phases[: first.index], told, asked, *later))


def _checkpoint_before_distractors(bench: Benchmark) -> Benchmark:
    if bench.scale is None:
        raise BenchmarkError(
            SourceLocation(bench.root / "benchmark.json", 1),
            f'`checkpoint_at: "distractors"`: {bench.name} has no `scale` (no ladder inserts distractors)',
        )
    if any(CHECKPOINT_PREFIX + DISTRACTORS in p.actions for p in bench.phases):
        return bench
    at = next((p.index for p in bench.phases if p.distractor), None)
    if at is None:
        at = insert_index(bench.phases, bench.scale.insert_before)
    assert at is not None  # the loader checked `insert_before`
    before = bench.phases[at - 1] if at > 0 else bench.phases[0]
    mark = Phase(
        index=at,
        chapter=before.chapter,
        title="Checkpoint before the distractor sessions",
        line=0,
        directives=(BenchAction(CHECKPOINT_PREFIX + DISTRACTORS, 0),),
        items=(),
        description="",
    )
    shifted = tuple(replace(p, index=p.index + 1) for p in bench.phases[at:])
    return replace(bench, phases=(*bench.phases[:at], mark, *shifted))


def until_checkpoint(bench: Benchmark, name: str) -> Benchmark:
    """The phases before checkpoint `name`, and its own phase up to the checkpoint (entered, its
    session directives and the checkpoint played; none of its items)."""
    at = checkpoint_phase(bench, name)
    phases = [p for p in bench.phases if p.index < at]
    own = bench.phases[at]
    directives = []
    for d in own.directives:
        directives.append(d)
        if isinstance(d, BenchAction) and d.action == CHECKPOINT_PREFIX + name:
            break
    phases.append(replace(own, directives=tuple(directives), items=(), prose=()))
    return replace(bench, phases=tuple(phases))


def questions_after(bench: Benchmark, name: str) -> tuple[Question, ...]:
    at = checkpoint_phase(bench, name)
    return tuple(q for p in bench.phases if p.index >= at for q in p.questions)


def only_questions(bench: Benchmark, ids: tuple[str, ...], name: str) -> Benchmark:
    at = checkpoint_phase(bench, name)
    unknown = set(ids) - {q.id for q in questions_after(bench, name)}
    if unknown:
        raise BenchmarkError(
            SourceLocation(bench.root, 0),
            f"no question {', '.join(sorted(unknown))} after checkpoint {name!r} in {bench.name}",
        )
    keep = set(ids)
    phases = tuple(
        p
        if p.index < at
        else replace(p, items=tuple(i for i in p.items if not isinstance(i, Question) or i.id in keep))
        for p in bench.phases
    )
    return replace(bench, phases=phases)


def as_played(
    bench: Benchmark, checkpoint_at: str = "", until: str = "", questions: list[str] | None = None
) -> Benchmark:
    """The benchmark with the transforms a run's header records (`benchmark.checkpoint_at`,
    `until`, `questions`), applied in that order — the same for the run, its resume and its report."""
    if checkpoint_at:
        bench = with_checkpoint_at(bench, checkpoint_at)
    name = until or checkpoint_at
    if questions is not None and name:
        bench = only_questions(bench, tuple(questions), name)
    if until:
        bench = until_checkpoint(bench, until)
    return bench
