"""The gate's properties over generated run lines: every line accounted for exactly once,
order never matters, a worse candidate never passes where a better one didn't, and a run
compared with itself never regresses."""

from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.log.vocabulary import TerminationReason
from gateway.report.gate import as_pairs, gate
from gateway.report.run_line import QuestionOutcome, RunLine
from gateway.report.verdict import Verdict

IDENTITIES = st.tuples(
    st.sampled_from(["t1", "t2"]),  # task
    st.sampled_from(["", "s1"]),  # rung
    st.sampled_from(["", "isolated"]),  # exam
    st.sampled_from([1, 2]),  # repeat
    st.sampled_from(["", "A", "B"]),  # arm
)
ANSWERS = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), st.booleans(), min_size=1, max_size=3)


def _lines(draw: st.DrawFn, prefix: str) -> list[RunLine]:
    out = []
    for n, ((task, rung, exam, repeat, arm), answers) in enumerate(
        draw(st.lists(st.tuples(IDENTITIES, ANSWERS), max_size=6))
    ):
        out.append(
            RunLine(
                status=TerminationReason.COMPLETED,
                run_id=f"{prefix}{n}",
                task=task,
                rung=rung,
                exam=exam,
                repeat=repeat,
                variant=arm,
                graded=len(answers),
                questions={q: QuestionOutcome(score=10.0 if ok else 0.0, correct=ok) for q, ok in answers.items()},
            )
        )
    return out


@st.composite
def sides(draw: st.DrawFn) -> tuple[list[RunLine], list[RunLine]]:
    return _lines(draw, "b"), _lines(draw, "c")


@settings(max_examples=150, deadline=None)
@given(sides(), st.randoms())
def test_every_line_is_compared_or_named_exactly_once_in_any_order(
    both: tuple[list[RunLine], list[RunLine]], rng: object
) -> None:
    baseline, candidate = both
    compared, named = as_pairs(baseline, candidate)
    seen = [line.run_id for line in compared] + [
        run for text in named for run in re.findall(r"\b[bc]\d+\b", text.split(" (", 1)[1])
    ]
    assert sorted(seen) == sorted(line.run_id for line in [*baseline, *candidate])
    shuffled_b, shuffled_c = list(baseline), list(candidate)
    rng.shuffle(shuffled_b)  # type: ignore[attr-defined]
    rng.shuffle(shuffled_c)  # type: ignore[attr-defined]
    assert gate(shuffled_b, shuffled_c).ruling == gate(baseline, candidate).ruling


@settings(max_examples=150, deadline=None)
@given(sides(), st.data())
def test_a_worse_candidate_never_passes_where_it_did_not(
    both: tuple[list[RunLine], list[RunLine]], data: st.DataObject
) -> None:
    baseline, candidate = both
    before = gate(baseline, candidate).verdict
    if not candidate:
        return
    n = data.draw(st.integers(0, len(candidate) - 1))
    line = candidate[n]
    qid = data.draw(st.sampled_from(sorted(line.questions)))
    wrong = replace(line, questions={**line.questions, qid: QuestionOutcome(score=0.0, correct=False)})
    after = gate(baseline, [*candidate[:n], wrong, *candidate[n + 1 :]]).verdict
    assert not (after is Verdict.ACCEPT and before is not Verdict.ACCEPT)


@settings(max_examples=100, deadline=None)
@given(sides())
def test_a_run_compared_with_itself_never_regresses(both: tuple[list[RunLine], list[RunLine]]) -> None:
    baseline, _ = both
    assert gate(baseline, baseline).verdict is not Verdict.REJECT
