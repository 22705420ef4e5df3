"""Numbers, dates and times as people write them, as the exact grader reads them: each form of
the grading issue's list, in both languages, graded against a question (not just converted)."""

from __future__ import annotations

import pytest

from persona.benchmark.model import Question
from persona.grading.exact import ExactGrader
from persona.numerals import digits_for_words


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        ("17 November", "On the seventeenth of November."),
        ("17 November", "November the seventeenth 🦷"),
        ("26 September", "**26/09** 📅"),  # dd/mm that can only be one date
        ("9:30", "At half past nine."),
        ("9:45", "A quarter to ten."),
        ("2012", "In two thousand and twelve."),
        ("BA362", "Your flight is **BA 362** ✈️"),
        ("8:30", "В половине девятого."),
        ("20:00", "Работает до восьми вечера."),
        ("2012", "Правую — в две тысячи двенадцатом."),
        ("2,5 кг", "Два с половиной кг."),
        ("2 октября", "К ортодонту, на второе октября."),
        ("КЗН-7781", "Бронь: КЗН 7781"),
        ("£46,500", "Forty-six and a half thousand pounds per year."),
        ("46 500 рублей", "Сорок шесть с половиной тысяч рублей."),
        ("4800 рублей", "Платите по четырём тысячам восьмистам рублей в год."),
        ("15 000 рублей", "15 т. р. за перекладку печи."),
        ("£3,000", "Three grand."),
    ],
)
def test_a_form_people_write_is_the_expected_value(expected: str, answer: str) -> None:
    q = Question("q", "When?", expected, (), "ch.md", 1)
    grade = ExactGrader().grade(q, expected, answer)
    assert grade.score == 10 and grade.certain, grade


@pytest.mark.parametrize(
    "words",
    ["my first name", "a second attempt", "с десятого раза", "половина суммы", "the third time"],
)
def test_ordinals_and_halves_that_are_no_date_or_time_stay_words(words: str) -> None:
    assert digits_for_words(words) == words


def test_an_ambiguous_numeric_date_is_not_read_as_either() -> None:
    q = Question("q", "When?", "5 October", (), "ch.md", 1)
    grade = ExactGrader().grade(q, q.expected, "05/10")
    assert grade.score == 0 and not grade.certain  # May or October: not guessed, and not failed either
