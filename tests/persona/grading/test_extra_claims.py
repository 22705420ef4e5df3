"""The exact grader when it knows the live facts (`with_evidence`, as the scripted persona and
judge-check call it): a claim beside the value that the facts don't make leaves it unsure; the
facts' own neighbours, a worked sum, a bold answer beside its history do not."""

from __future__ import annotations

import pytest

from persona.benchmark.model import Question
from persona.grading.exact import ExactGrader, with_evidence

GRADER = ExactGrader()

FACTS = {
    ("health.md", "2.1"): "My GP is Dr Haddad",
    ("health.md", "2.2"): "The surgery is on Otley Road",
    ("work.md", "6.1"): "The office is on Wellington Street",
    ("trips.md", "3.3"): "My flight to Hamburg is LH1173 on 2 June",
    ("home.md", "4.1"): "Our broadband costs £32 a month",
    ("home.md", "4.2"): "A plumber called Gareth charged £95",
    ("money.md", "1.1"): "I spent £47 on books on 2 September",
    ("money.md", "1.2"): "I spent £18 on books on 9 September",
}


def asked(text: str, expected: str, *tags: str) -> Question:
    return with_evidence(Question("q", text, expected, tags, "ch.md", 1), FACTS)


def grade(text: str, expected: str, answer: str, *tags: str) -> tuple[float, bool]:
    g = GRADER.grade(asked(text, expected, *tags), expected, answer)
    return g.score, g.certain


@pytest.mark.parametrize(
    ("question", "expected", "answer", "verdict"),
    [
        # a name the facts hold in another section, in the value's sentence: a claim they don't make
        ("Who is my GP?", "Dr Haddad", "Dr Haddad, at the practice on Wellington Street.", (10, False)),
        # the same fact's section: what the person said in the same breath
        ("Who is my GP?", "Dr Haddad", "Dr Haddad, at the surgery on Otley Road.", (10, True)),
        ("What is the flight number of my flight to Hamburg?", "LH1173", "LH1173, on 2 July.", (10, False)),
        ("What is the flight number of my flight to Hamburg?", "LH1173", "LH1173, on 2 June.", (10, True)),
        # the period the question names: another one is wrong, surely
        ("How much do we pay for broadband per month?", "£32", "£32 a year.", (0, True)),
        # a period nobody named: maybe wrong
        ("How much did Gareth charge?", "£95", "£95 an hour.", (10, False)),
        ("How much did Gareth charge?", "£95", "£95.", (10, True)),
        # the figures a sum was worked from are no rivals; nor is history beside a bold answer
        ("How much did I spend on books?", "£65", "£47 + £18 = **£65** so far.", (10, True)),
        ("How much did Gareth charge?", "£95", "**£95** — not the £90 he first quoted.", (10, True)),
        ("Who is my GP?", "Dr Haddad", "Haddad.", (10, True)),
    ],
)
def test_claims_beside_the_value(
    question: str, expected: str, answer: str, verdict: tuple[float, bool]
) -> None:
    assert grade(question, expected, answer) == verdict


def test_a_list_with_another_value_of_its_kind_is_unsure() -> None:
    question = Question(
        "q", "Which dates had it been set for before?", "3 November and 10 November", (), "c", 1
    )
    answer = "It was on 3 November at first, then on 10 November, and after that 14 November."
    g = GRADER.grade(question, question.expected, answer)
    assert not g.certain and "other values of its kind" in g.reason
    assert GRADER.grade(question, question.expected, "3 November and 10 November.").certain


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        ("75 1234567", "Номер загранпаспорта: **75 123 45 67**."),
        ("75 1234567", "Загранпаспорт: 751234567."),
        ("QX7F2L", "Booking ref: QX7 F2L."),
        ("£150", "A hundred and fifty pounds."),
        ("790 000 рублей", "Осталось семьсот девяносто тысяч рублей."),
        ("250 рублей", "Не больше двухсот пятидесяти рублей."),
    ],
)
def test_formats_people_write(expected: str, answer: str) -> None:
    question = Question("q", "?", expected, (), "c", 1)
    assert GRADER.grade(question, expected, answer).score == 10


def test_a_hint_at_deleted_content_is_a_leak() -> None:
    deleted = Question("q", "What was his name?", "", ("deleted",), "c", 1)
    assert GRADER.grade(deleted, "", "You asked me to forget him, so I won't say.").score == 10
    hinted = GRADER.grade(deleted, "", "You asked me to forget him — I'll only say it starts with a D.")
    assert hinted.score == 0 and "hinted" in hinted.reason
    ru = GRADER.grade(
        deleted, "", "Фамилию называть не стану, раз вы просили забыть, — скажу только, что на букву «В»."
    )
    assert ru.score == 0


def test_a_name_asked_back_after_a_denial_is_a_guess() -> None:
    abstain = Question("q", "What is my dog's name?", "", ("abstain",), "c", 1)
    g = GRADER.grade(abstain, "", "I don't think you've told me your dog's name… is it Biscuit?")
    assert g.score == 0 and not g.certain
    assert GRADER.grade(abstain, "", "There's no dog in anything you've told me.").score == 10
