"""The decision's properties over generated experiments: equal arms never give a winner (never
ACCEPT B, never "harm"; with a margin above 0 they keep A for want of a benefit worth B), and
making B worse on one question never turns KEEP A or NO DECISION into ACCEPT B."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.log.vocabulary import TerminationReason
from gateway.report.comparison import compare
from gateway.report.decision import Decision, decide
from gateway.report.run_line import QuestionOutcome, RunLine
from gateway.report.verdict import Verdict

TAGS = st.sampled_from(["", "update", "abstain"])


def _line(task: str, arm: str, answers: dict[str, tuple[bool, str]]) -> RunLine:
    return RunLine(
        status=TerminationReason.COMPLETED,
        run_id=f"{task}.{arm}",
        experiment="e",
        task=task,
        pair=f"e.{task}.r1",
        variant=arm,
        variant_name={"A": "without", "B": "with"}[arm],
        graded=len(answers),
        questions={
            q: QuestionOutcome(score=10.0 if ok else 0.0, correct=ok, tags=(tag,) if tag else ())
            for q, (ok, tag) in answers.items()
        },
    )


@st.composite
def experiments(draw: st.DrawFn) -> list[RunLine]:
    lines = []
    for n in range(draw(st.integers(1, 9))):
        questions = draw(st.dictionaries(st.sampled_from(["q1", "q2"]), st.tuples(st.booleans(), st.booleans(), TAGS),
                                         min_size=1))  # fmt: skip
        lines.append(_line(f"t{n}", "A", {q: (a, tag) for q, (a, _, tag) in questions.items()}))
        lines.append(_line(f"t{n}", "B", {q: (b, tag) for q, (_, b, tag) in questions.items()}))
    return lines


RULES = st.builds(Decision, st.sampled_from([0.0, 0.05, 0.2]), st.just(()))


@settings(max_examples=120, deadline=None)
@given(experiments(), RULES)
def test_equal_arms_never_give_a_winner(lines: list[RunLine], rule: Decision) -> None:
    same = [replace(line, questions=a.questions) for line in lines for a in lines
            if a.variant == "A" and a.task == line.task]  # fmt: skip
    ruling = decide(rule, compare(same), same)
    assert ruling.verdict is not Verdict.ACCEPT
    assert not any("harm" in c.text or "B is worse" in c.text for c in ruling.clauses)
    if rule.min_improvement == 0:
        assert ruling.verdict is Verdict.NO_DECISION


@settings(max_examples=120, deadline=None)
@given(experiments(), RULES, st.data())
def test_a_worse_b_never_turns_into_accept(lines: list[RunLine], rule: Decision, data: st.DataObject) -> None:
    before = decide(rule, compare(lines), lines).verdict
    b_lines = [n for n, line in enumerate(lines) if line.variant == "B"]
    n = data.draw(st.sampled_from(b_lines))
    qid = data.draw(st.sampled_from(sorted(lines[n].questions)))
    worse_q = replace(lines[n].questions[qid], score=0.0, correct=False)
    worse = [*lines[:n], replace(lines[n], questions={**lines[n].questions, qid: worse_q}), *lines[n + 1 :]]
    after = decide(rule, compare(worse), worse).verdict
    assert not (after is Verdict.ACCEPT and before is not Verdict.ACCEPT)
