"""An earlier question must not give away a later answer (docs/benchmarks.md): `check` warns
with both lines; the shipped benchmarks have none."""

from __future__ import annotations

import pytest

from persona.benchmark.loader import load_benchmark
from tests.conftest import REPO, TINY, BenchFactory


@pytest.mark.parametrize(
    ("earlier", "later", "given"),
    [
        (
            "Please write to Mr Pickering about the tap. Correct answer: draft",
            "What is our landlord's name? Correct answer: Pickering",
            "pickering",
        ),
        (
            "Сколько я потратила на корм для Графа? Правильный ответ: 4000 рублей",
            "Как зовут собаку и какой она породы? Правильный ответ: Граф, немецкая овчарка",
            "граф",
        ),
    ],
)
def test_a_later_answer_in_an_earlier_question_is_warned_about_with_both_lines(
    make_benchmark: BenchFactory, earlier: str, later: str, given: str
) -> None:
    chapter = f"# Two\n\n## Exam\n```js\nawait bench.newSession();\n```\n❓ a1 {earlier}\n❓ a2 {later}\n"
    warnings = load_benchmark(make_benchmark(ch2__md=chapter)).warnings
    (warning,) = [w for w in warnings if "gives away" in w]
    assert "ch2.md:7: question a1 gives away the answer of a2" in warning and "ch2.md:8)" in warning
    assert warning.endswith(given)


def test_short_or_generic_words_are_no_giveaway(make_benchmark: BenchFactory) -> None:
    chapter = TINY["ch2.md"] + "❓ q4 How many days of leave have I left? Correct answer: 18 days\n"
    chapter += "❓ q5 Which wrist did I break? Correct answer: left\n❓ q6 What does he teach? Correct answer: chemistry\n"
    chapter = chapter.replace("What is my cat called?", "When is my next dental check-up?")
    assert not [w for w in load_benchmark(make_benchmark(ch2__md=chapter)).warnings if "gives away" in w]


@pytest.mark.parametrize("name", ["demo-en", "marathon-en", "marathon-ru"])
def test_no_shipped_benchmark_gives_an_answer_away(name: str) -> None:
    assert not [w for w in load_benchmark(REPO / "benchmarks" / name).warnings if "gives away" in w]
