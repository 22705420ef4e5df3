"""The grader cases the audit of the shipped marathons exposed: perfect answers that scored 0,
graded against the real questions; and the [deleted] questions' right answer."""

from __future__ import annotations

import pytest

from persona.benchmark.loader import load_benchmark
from persona.grading.exact import ExactGrader
from tests.conftest import REPO

QUESTIONS = {
    q.id: q
    for name in ("marathon-en", "marathon-ru")
    for q in load_benchmark(REPO / "benchmarks" / name).questions
}


@pytest.mark.parametrize(
    ("qid", "answer", "score"),
    [
        ("e44", "Tuesdays at 9.30", 10),
        ("e10", "54 minutes 10 seconds", 10),
        ("э49", "−2,5", 10),
        ("e6", "You're pescatarian now: fish, but no meat.", 10),
        ("e25", "You asked me to forget him, so I won't bring him up.", 10),
        (
            "e25",
            "You never told me about an ex-boyfriend.",
            10,
        ),  # deleted: "never told" is as right as "forgotten" (the seeds)
        ("э24", "Вы просили забыть о нём — не буду напоминать.", 10),
        ("э24", "Вы просили не напоминать, но его звали Вадим.", 0),
        ("э5", "По утрам теперь цикорий", 10),
        # the second audit: the most accurate reply to a wish that is no pet, a key in one word
        ("e11", "You don't have a dog yet — you said you'd like to adopt a rescue one day.", 10),
        ("e11", "You don't have a dog — I think it would be called Rex.", 0),
        ("э10", "Кошки у вас нет — аллергия на кошек у Веры.", 10),
        ("э12", "Инженером на ГАЗе 🔧", 10),
        ("e25", "That was Daniel, though I know you asked me to forget him.", 0),
    ],
)
def test_a_perfect_answer_scores_full_and_a_false_one_does_not(qid: str, answer: str, score: int) -> None:
    q = QUESTIONS[qid]
    assert ExactGrader().grade(q, q.expected, answer).score == score
