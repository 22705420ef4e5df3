"""What the persona's slips take out of a run's scores (docs/persona.md): a question on a fact
the persona never said, or on a new value it never told, is *unscored (persona)* — the agent's
wrong answer there is no forgetting; one whose answer the persona gave away is unscored too; a
grade the exact grader is certain is wrong becomes unresolved. Each function takes the affected
questions out of `evaluations` (or marks them unresolved) and returns question id → why."""

from __future__ import annotations

from dataclasses import replace

from gateway.log.events import Evaluation, PersonaSlip
from gateway.log.vocabulary import SlipKind
from persona.benchmark.model import Benchmark, Question
from persona.grading.exact import contains_expected


def unscored_by_slips(
    benchmark: Benchmark,
    planned: list[Question],
    slips: list[PersonaSlip],
    evaluations: dict[str, Evaluation],
) -> dict[str, str]:
    """The questions whose answer holds a detail the persona marked told but never said
    (`fact_not_said`: 34 told as 35, and "35" graded 0 is no forgetting), or a fact's new value
    it never said (`update_not_said`: the old value is no forgetting); they leave `evaluations`."""
    out: dict[str, str] = {}
    for slip in slips:
        if slip.kind is SlipKind.UPDATE_NOT_SAID:
            for q in planned:
                if q.id in evaluations and not q.abstain and any(contains_expected(m, q.expected) for m in slip.missing):
                    evaluations.pop(q.id)
                    out[q.id] = f"its answer is {slip.fact}'s new value, which the persona never said ({slip.detail})"
            continue
        ref = slip.fact if slip.kind is SlipKind.FACT_NOT_SAID else ""
        file, _, fid = ref.partition(":")
        fact = benchmark.facts[file].facts.get(fid) if file in benchmark.facts else None
        if fact is None:
            continue
        for q in planned:
            if (
                q.id in evaluations
                and not q.abstain
                and q.expected
                and contains_expected(q.expected, fact.text)  # and only what was never said spoils it:
                and (not slip.missing or any(contains_expected(m, q.expected) for m in slip.missing))
            ):
                evaluations.pop(q.id)
                out[q.id] = (
                    f"its answer is in {ref} ({fact.text!r}), which the persona marked told but never said"
                )
    return out


def spoiled_by_slips(slips: list[PersonaSlip], evaluations: dict[str, Evaluation]) -> dict[str, str]:
    """A question whose answer the persona gave away when asking it (`answer_leaked`) leaves the
    scores — a right answer there measures no memory; a grade the exact grader is certain is
    wrong (`grade_disputed`) becomes unresolved, its range what the question can score, as an
    unsure grader's is. Returns the unscored ones, question id → why."""
    out: dict[str, str] = {}
    for slip in slips:
        qid = slip.question_id
        if not qid or qid not in evaluations:
            continue
        if slip.kind is SlipKind.ANSWER_LEAKED:
            evaluations.pop(qid)
            out[qid] = "the persona gave its answer away when asking it (answer_leaked)"
        elif slip.kind is SlipKind.GRADE_DISPUTED:
            ev = evaluations[qid]
            evaluations[qid] = replace(
                ev, certain=False, low=None, high=None, reason=f"{ev.reason} — disputed: {slip.detail}"
            )
    return out
