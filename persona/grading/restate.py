"""A direct-evidence fork's benchmark: right before each question after a checkpoint, the
persona restates the live facts that hold its answer.

A diagnostic (docs/experiments.md, "Checkpoints and forks"): beside the isolated exam from the
same checkpoint, it tells an agent that could not *find* what it was told from one that could
not *use* it. Its runs are reported apart and never mixed into the results. It lives with the
grader because "holds the answer" is the exact grader's own test (`contains_expected`).
"""

from __future__ import annotations

from dataclasses import replace

from persona.benchmark.forks import checkpoint_phase
from persona.benchmark.model import DELETED_MARKERS, Benchmark, FactUpdate, PhaseItem, Question, Utterance
from persona.grading.exact import contains_expected
from persona.phrases import phrases_for


def restating_evidence(bench: Benchmark, name: str) -> Benchmark:
    """Each question after checkpoint `name` preceded by a line restating the facts, as they
    are live at that point (updates applied, deletions gone), that hold its expected answer. An
    [abstain] or [deleted] question, or one whose answer no fact holds, gets none."""
    at = checkpoint_phase(bench, name)
    phrase = phrases_for(bench.language)["restate"]
    live = {(f.file, f.id): f.text for ff in bench.facts.values() for f in ff.facts.values()}
    phases = []
    for phase in bench.phases:
        items: list[PhaseItem] = []
        for item in phase.items:
            if isinstance(item, FactUpdate):
                live[(item.file, item.fact_id)] = item.text
            elif isinstance(item, Question) and phase.index >= at and not (item.abstain or item.deleted):
                held = [
                    t
                    for t in live.values()
                    if t.strip() not in DELETED_MARKERS and contains_expected(item.expected, t)
                ]
                if held:
                    items.append(Utterance(phrase.format(text=" ".join(held)), item.line))
            items.append(item)
        phases.append(replace(phase, items=tuple(items)))
    return replace(bench, phases=tuple(phases))
