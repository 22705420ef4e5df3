"""The never-told reading says when it is unsure: a claim with nothing beside it that could be
the value is a sure claim, a reply with no claim a sure answer, and a claim beside a figure, a
name, a month, a quote or words of its own is the detector's guess — the retry rule nudges it
and keeps both tries' grades."""

from __future__ import annotations

import pytest

from persona.benchmark.model import Question
from persona.grading.exact import ExactGrader
from persona.grading.never_told_reading import read_never_told


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("What is my cat called?", "You never told me her name."),
        ("What's my bike lock code?", "I've got nothing saved for that, sorry — want me to store it?"),
        ("When is Sam's birthday?", "Hmm, I can't find Sam's birthday anywhere in my notes."),
        ("What's my physio's number?", "**Not found.** You haven't shared it with me yet."),
        ("Как зовут мою кошку?", "Вы мне не говорили, как её зовут."),
        ("Сколько стоит абонемент?", "Цену абонемента вы не называли, увы."),  # its object before the claim
        # a value of another kind than asked: a name answers no "how many", a time no "who"
        (
            "How many nights are we staying?",
            "I don't have the number of nights saved. You only said you fly with Ryanair.",
        ),
        ("Who is my dentist?", "You never told me who your dentist is. Your check-up is at 3 pm, though."),
    ],
)
def test_a_bare_claim_is_read_surely(question: str, reply: str) -> None:
    reading = read_never_told(reply, question)
    assert reading.claim is True and reading.certain, reading.reason


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("What is my cat called?", "Miso."),
        ("When is the dentist?", "Tuesday the 9th at 10:30 with Dr Shah."),
        ("Где живёт сестра?", "В Казани, на Баумана."),
    ],
)
def test_a_reply_without_a_claim_is_a_sure_answer(question: str, reply: str) -> None:
    reading = read_never_told(reply, question)
    assert reading.claim is False and reading.certain


@pytest.mark.parametrize(
    ("question", "reply", "why"),
    [
        # claims beside what else the agent knows: the detector can't tell that from an answer
        (
            "When is my sister's birthday?",
            "I don't have your sister's birthday saved. I only have your mum's, which is 3 May.",
            "a figure",
        ),
        ("Who is my dentist?", "You never told me who your dentist is. Your GP is Dr Alvarez, though.", "a name"),
        ("What's my flight number?", "I have no flight number saved. You only said you fly out in June.", "a month"),
        ("What did we call the old house?", 'Nothing saved about that, sorry. Did you mean "the blue house"?', "a quote"),
        # a guess said or asked after the claim, a value after "apart from" (found in review)
        ("Where does my sister live?", "You never told me. Kazan, I'd guess.", "a name"),
        ("What is my blood type?", "I don't have it noted anywhere — A positive?", "a guess"),
        ("What am I allergic to?", "No record of any allergies, apart from peanuts.", "an exception"),
        # an answer beside a claim about another detail, read as an answer — a guess all the same
        ("Which hotel in Lisbon?", "Casa do Rio. You didn't tell me the room number, though.", "reads as the answer"),
        ("Сколько я плачу за парковку?", "Не знаю точно. Знаю только, что место № 112.", "a figure"),
    ],
)
def test_a_claim_beside_what_may_be_the_value_is_unsure(question: str, reply: str, why: str) -> None:
    reading = read_never_told(reply, question)
    assert not reading.certain and why in reading.reason


def test_an_unsure_reading_keeps_the_detectors_best_guess() -> None:
    claim = read_never_told(
        "I don't have your sister's birthday saved. I only have your mum's, which is 3 May.",
        "When is my sister's birthday?",
    )
    answer = read_never_told("Casa do Rio. You didn't tell me the room number, though.", "Which hotel in Lisbon?")
    assert (claim.claim, answer.claim) == (True, False)


def test_a_claim_beside_part_of_the_answer_is_no_sure_claim() -> None:
    """The exact grader found one of two expected items: whatever the words, the retry rule's
    reading is unsure (the reply answered in part)."""
    question = Question("q", "What am I allergic to?", "peanuts and shellfish", (), "ch.md", 1)
    answer = "I have no record of your allergies, only peanuts."  # the reading alone: a sure claim
    assert read_never_told(answer, question.text).certain
    grade = ExactGrader().grade(question, question.expected, answer)
    assert grade.score == 5 and grade.never_told and not grade.never_told_certain


@pytest.mark.parametrize(
    "reply",
    [
        "I don't remember.",
        "Sorry, I can't recall your manager's name. Could you remind me?",
        "I don't have that information.",
        "Honestly, it slipped my mind — sorry!",
        "Не помню.",
        "Честно, не вспомню, как зовут вашего начальника.",
        "У меня нет этой информации.",
        "Вылетело из головы, простите.",
        "Не помню точно. Мисо?",  # a guess after forgetting: an answer (was an unsure claim)
    ],
)
def test_forgetting_admits_being_told_and_is_surely_no_claim(reply: str) -> None:
    """Issue 61: read as never-told claims, these got the nudge, and a forgotten fact became a
    half-credit retry; they admit being told and forgetting."""
    reading = read_never_told(reply, "What is my manager's name?")
    assert reading.claim is False and reading.certain, reading.reason


@pytest.mark.parametrize(
    "reply",
    [
        "I don't remember you telling me your manager's name.",
        "I don't recall you naming your yoga teacher.",
        "I can't recall a plumber at all.",
        "Не помню, чтобы вы его называли.",
        "Хм, нет, такого не помню.",
        "Ничего про дрель не припоминаю.",
    ],
)
def test_forgetting_said_of_the_telling_is_still_a_claim(reply: str) -> None:
    reading = read_never_told(reply, "What is my manager's name?")
    assert reading.claim is True, reading.reason
