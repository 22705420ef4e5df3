"""The expected words as answers spell them otherwise (`persona/grading/variants.py`): an
acronym written out and back, the other script, a one-letter slip in a long word — each a full
score; and what must stay a miss: a short word one letter off, a different name."""

from __future__ import annotations

import pytest

from persona.benchmark.model import Question
from persona.grading.exact import ExactGrader
from persona.grading.variants import in_expected_forms, in_expected_spelling

GRADER = ExactGrader()


def graded(expected: str, answer: str, question: str = "?") -> tuple[float, bool]:
    g = GRADER.grade(Question("q", question, expected, (), "ch.md", 1), expected, answer)
    return g.score, g.certain


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        ("ГАЗ", "Андрей работает на Горьковском автомобильном заводе."),
        ("Горьковский автомобильный завод", "На ГАЗ, инженером."),
        ("Болонья", "Bologna 🇮🇹"),
        ("Zen", "У вас интернет от Зен."),
        ("pescatarian", "Pescetarian (vegetarian plus fish)."),
        ("accommodation", "The acommodation is booked."),
        ("Елена Викторовна Шубина", "- Шубина Е. В. 🩺"),  # initials beside the surname
        ("Камино де Сантьяго", "Camino de Santiago — часть маршрута."),  # "c" read as «к»
        ("по понедельникам в 8:30", "Пн, 8:30."),  # a weekday's short form
        ("по понедельникам в 8:30", "По понедельникам в полдевятого утра."),
        ("19 ноября", "19.11, во вторник."),  # a date before a comma
        ("2:30", "В половине третьего."),
        ("Миша и Вера", "**Михаил** (15 лет) и **Вера** (19 лет)"),  # a given name's full form
        ("Michael", "Mike, your neighbour's son."),
        ("у Миши", "У Михаила."),  # inflected
        ("75 1234567", "Загранпаспорт: серия 75, номер 1234567"),  # a number's groups apart
        ("Samuel", "Sam, from the climbing club."),  # a short form shared by two names
        ("Женя", "Евгению, вашему брату."),  # a full form, inflected
        ("Андрей", "Андрею."),
        ("Дмитрий", "У Дмитрия."),
    ],
)
def test_another_spelling_of_the_expected_words_scores_full(expected: str, answer: str) -> None:
    assert graded(expected, answer) == (10.0, True)


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        ("cat", "A car."),  # a short word one letter off is another word
        ("Болонья", "Boston."),  # another city in the other script
        ("ГАЗ", "На Горьковском заводе."),  # two words for a three-letter acronym
        ("Thursday", "Tuesday."),
        ("Dr Haddad", "Dr H."),  # an initial beside a title only: no surname to anchor it
        # found in review: small words, short acronyms, names one letter apart, another surname
        ("BA", "Lufthansa, booked by Alice."),
        ("NHS", "A private clinic — not her surgery."),
        ("Oliver King", "OK, I don't have that."),
        ("Ireland", "Iceland."),
        ("Maria", "Марина."),
        ("Milan", "Милана."),
        ("Saturday", "Friday — we sat in the front row."),
        ("Wednesday", "They wed in June."),
        ("Elena Shubina", "Shubina retired; your new doctor is E. Petrova."),
        ("5 мая", "Точную дату не помню. Оценка была 5.5, это точно."),  # a decimal before a comma
        ("3 November", "She came third on 12 November."),  # an ordinal that is no day
        ("Саша", "Маша."),  # another name's short form
        ("Michael", "Mitchell."),
        ("Пётр Ильич", "Петров."),
        ("75 1234567", "Серия 75, а номер 1234568."),
        # found in review: a short form's other full name, a word that only starts like a name
        ("Samuel", "Samantha, from the climbing club."),
        ("Tom", "To the station."),
        ("Sunday", "At 12 Sun Street."),  # a day's number before a weekday's short form: an address
        ("2 January", "2 Jan Novak signed it."),  # a name after it: not a month
        ("75 1234567", "Серия 75, а не 1234567."),  # a group ruled out is no part of the number
        ("75 1234567", "Series 75 or 1234567, I'm not sure which."),
        ("Liz", "Li, your colleague."),
    ],
)
def test_what_only_looks_alike_stays_a_miss(expected: str, answer: str) -> None:
    assert graded(expected, answer)[0] == 0.0


def test_only_the_words_standing_for_expected_ones_are_rewritten() -> None:
    said = "Bologna, then Boston — Горьковский автомобильный завод paid."
    assert (
        in_expected_spelling("Болонья", said)
        == "Болонья, then Boston — Горьковский автомобильный завод paid."
    )


def test_a_numbers_groups_are_joined_only_when_they_make_one_long_number() -> None:
    assert in_expected_forms("75 1234567", "серия 75, номер 1234567") == "серия 75 1234567"
    assert in_expected_forms("2 15", "2 adults, 15 kids") == "2 adults, 15 kids"  # two numbers
    assert in_expected_forms("75 1234567", "75\nearlier: 1234567") == "75\nearlier: 1234567"


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        ("5 ноября и 12 ноября", "Раньше: пятое и двенадцатое ноября."),
        ("5 ноября и 12 ноября", "На пятое и на двенадцатое ноября."),
        ("12 октября или 19 октября", "Либо двенадцатого, либо девятнадцатого октября."),
        ("5 November and 12 November", "The fifth and the twelfth of November."),
    ],
)
def test_days_said_before_one_month_are_dates(expected: str, answer: str) -> None:
    assert graded(expected, answer)[0] == 10.0


def test_a_name_listed_beside_an_expected_one_is_unsure() -> None:
    # «Вера и Наташа» for «Миша и Вера»: a wrong item, not half a right list
    assert graded("Миша и Вера", "Вера и Наташа.", "Как зовут наших детей?") == (5.0, False)
    # a name said elsewhere in the answer is no item of its list
    assert graded(
        "Ada and Obi", "Chidi and Sophie's twins are Ada and Obi.", "What are the twins called?"
    ) == (10.0, True)
