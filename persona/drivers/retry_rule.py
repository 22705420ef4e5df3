"""The retry rule, graded: which try of a nudged question counts, and how sure that is.

MarathonMemBench's rule: an agent that says it was never told is asked once to search its
memory, and its next answer counts ×0.5. Whether the first reply *was* such a claim is a
reading — a judge's, or the offline detector's, which may be unsure when a reply holds a claim
and what may be the value side by side. An unsure reply is nudged too, so both tries are
graded: where they agree the grade is sure; where they differ, the grade is unresolved and its
range spans both (`low`…`high`), until a judge reads the claim (`marathon rescore`).

Used by the scripted persona and by `marathon replay`'s re-grading, so a run and its replay
apply one rule.
"""

from __future__ import annotations

from persona.drivers.actions import Evaluate
from persona.grading.grade import Grade
from persona.outcome import RETRY_WEIGHT, most, weighted

_MOST_AFTER_NUDGE = most(2)


def nudges(first: Grade, *, abstain: bool, claim: bool, sure: bool) -> bool:
    """Whether the rule nudges a first reply graded `first`: one not right, on a question that
    is no abstention, read as a never-told claim (`claim`) or read unsure (`sure` False)."""
    return not (first.correct or abstain or (sure and not claim))


def retried(
    question_id: str,
    first: Grade,
    second: Grade,
    answers: tuple[str, str],
    grader: str,
    *,
    claim: bool,
    sure: bool,
    why: str = "",
    lead: str = "after a search-memory nudge",
) -> Evaluate:
    """The grade of a question whose first reply was nudged (`answers`: the first reply and the
    nudged one). `claim`: the reading of the first reply (a never-told claim, or an answer);
    `sure` False: that reading is a guess (`why` says why), so the grade is sure only where both
    tries' grades agree. The grade's `attempts` says which try counts: 2, the nudged one ×0.5."""
    first_answer, second_answer = answers
    after = round(weighted(second.score, 2), 2)
    if sure and not claim:  # a replay's recorded nudge after an answer: the answer counts
        return Evaluate(
            question_id,
            first.score,
            f"the first reply answered (no never-told claim{why}), so it counts: {first.reason}",
            first_answer,
            1,
            first.score,
            grader,
            first.certain,
            decided_by=first.decided_by,
            rewrites=first.rewrites,
        )
    if sure:
        return Evaluate(
            question_id,
            after,
            f"{lead}: {second.reason} (×{RETRY_WEIGHT}); first try: {first.reason}{why}",
            second_answer,
            2,
            first.score,
            grader,
            second.certain,
            decided_by=second.decided_by,
            rewrites=second.rewrites,
        )
    first_span = first.bounds()
    after_span = (after, after) if second.certain else (0.0, _MOST_AFTER_NUDGE)
    low, high = min(first_span[0], after_span[0]), max(first_span[1], after_span[1])
    settled = low == high
    return Evaluate(
        question_id,
        after if claim else first.score,
        f"not sure the first reply claims it was never told ({why}), so it was nudged too: first try "
        f"{first.score:g} ({first.reason}); {lead} {after:g} ({second.reason}, ×{RETRY_WEIGHT}) — "
        + ("the same either way" if settled else f"which counts is unresolved: {low:g}…{high:g}"),
        second_answer if claim else first_answer,
        2 if claim else 1,  # the best guess's try
        first.score,
        grader,
        settled,
        None if settled else low,
        None if settled else high,
        decided_by=(second if claim else first).decided_by,  # the best guess's try
        rewrites=(second if claim else first).rewrites,
    )
