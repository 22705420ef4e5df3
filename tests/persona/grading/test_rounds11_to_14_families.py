"""The exact grader's rounds 11 to 14 (issue 49), asked as the shipped benchmarks ask: what a
careful reader would pass is no certain 0, what reverses a relation or guesses is no certain
pass — each of these is read surely, or left to a judge, never guessed."""

from __future__ import annotations

import pytest

from tests.persona.grading.test_issue49_families import graded


@pytest.mark.parametrize(
    "answer",
    [
        "You told me last week to forget him, so I have.",
        "Deleted — you wanted me never to mention him again.",
        "I'm sorry, but you specifically asked me not to keep anything about him.",
    ],
)
def test_a_forget_request_said_in_other_words_passes(answer: str) -> None:
    grade = graded("e25", answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e25", "No idea, sorry — was it Marcus?"),
        ("э24", "Не помню — может быть, Олег?"),
    ],
)
def test_a_guess_after_i_dont_know_on_a_deleted_fact_is_no_certain_pass(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


def test_a_decline_that_tells_nothing_is_left_to_a_judge_and_a_bare_name_fails() -> None:
    declined = graded("e25", "Let's not go back over that chapter of your life.")
    assert not declined.certain, declined
    named = graded("e25", "Marcus.")  # a person of the story
    assert named.certain and named.score == 0, named
    for sorry in ("Sorry.", "Увы."):  # a decline, not a name
        declined = graded("e25" if sorry.isascii() else "э24", sorry)
        assert not declined.certain, declined


@pytest.mark.parametrize("answer", ["Вы просили забыть, но фамилия была на «К».", "I won't say — only that it's a 'D'."])
def test_a_quoted_letter_is_a_hint_at_a_deleted_name(answer: str) -> None:
    qid = "э24" if "«" in answer else "e25"
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 0, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e11", "There's no dog yet — a rescue is still only a plan."),
        ("э10", "Кошки у вас пока нет: есть пёс и попугай."),
    ],
)
def test_a_none_said_in_unread_words_on_abstain_is_no_certain_zero(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.score == 0), grade


def test_a_guess_after_no_record_on_abstain_is_no_certain_pass() -> None:
    grade = graded("e18", "Nothing on record, so I'm assuming shellfish.")
    assert not (grade.certain and grade.correct), grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e54", "Your sister owes you £150."),  # How much do I owe Chidi?
        ("e54", "Chidi lent you £150."),  # owing asked, lending answered: which way, takes reading
        ("e30", "£95 — for replacing the kitchen tap."),  # the shower asked
        ("э53", "Наташа одолжила вам 12 000 рублей."),  # Сколько мне должна Наташа?
        ("э56", "Олю — к ортодонту, 2 октября."),  # Мишу asked
        ("э34", "Потому что вы косите его флоксы."),  # «косит флоксы»: he does
    ],
)
def test_another_doer_or_a_debt_told_from_its_other_end_is_never_certain_right(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e7", "Р 772 3914"),  # a Cyrillic Р typed for P
        ("э37", "Поезд 054G."),  # romanised
    ],
)
def test_a_code_in_the_other_script_is_found_but_not_surely(qid: str, answer: str) -> None:
    # Cyrillic В, Р, Н, С read two ways (a look-alike, or romanised): likely the code, not sure
    grade = graded(qid, answer)
    assert grade.score == 10 and not grade.certain, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e41", "It's British Airways 362."),
        ("э12", "На Горьковском автозаводе."),
        ("э30", "В воскресенье — через два дня."),  # the date as a weekday: which date takes a calendar
    ],
)
def test_a_value_written_out_is_no_certain_fail(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not grade.certain, grade


@pytest.mark.parametrize(("qid", "answer"), [("э12", "В «Газпроме»."), ("e41", "It's 362."), ("e7", "P7723941")])
def test_another_name_or_a_code_without_its_letters_stays_a_certain_zero(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 0, grade


@pytest.mark.parametrize(
    ("qid", "answer", "certain_score"),
    [
        ("e25", 'You asked me to forget him, so I won\'t "remember" anything about him.', 10),  # quotes, no letter
        ("e25", "You asked me to forget him. I think that's wise.", 10),  # a guess word, no value guessed
        ("e18", "You told me about penicillin but did not mention any food allergies.", 10),
        ("e11", "No problem! Your dog is called Buddy.", 0),  # a negation, then an invented name
        ("э12", "На ГАЗовском конвейере.", 10),  # a word built on the abbreviation
        ("э53", "Наталья должна вам 12 000 рублей.", 10),  # the question's Наташа by her full name
        ("э56", "К ортодонту 2 октября, вместе с Андреем.", 10),  # a bystander, not the patient
    ],
)
def test_what_the_review_found_stays_certain(qid: str, answer: str, certain_score: float) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == certain_score, grade


# -- round 12: written on held-out-9, -10 and -11 (opened) -----------------------------------


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e34", "It's up in the attic."),  # loft: one WordNet synset
        ("e22", "You're the chief bridesmaid."),  # maid of honour
        ("э59", "Камино."),  # the first word of «Камино де Сантьяго»
        ("э50", "Sberbank."),  # «Сбер», in the other script and longer
        ("e44", "Tuesday."),  # "Tuesday at 9:30" without its time: a half, not a wrong value
        ("э47", "Правую ногу, в 12-м году."),  # 2012 by its last two figures
    ],
)
def test_a_value_said_with_other_words_or_in_part_is_no_certain_zero(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.score == 0) and not grade.certain, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e34", "In the garage."),  # no synonym of loft
        ("e44", "Tuesday at 10:00."),  # the day with another time
        ("e16", "Adaeze and Obinna."),  # "Ada" and "Obi" only begin these names
        ("э24", "Фамилия на «Стол…», дальше не помню."),  # the start of the deleted name
    ],
)
def test_other_words_a_longer_name_or_a_names_start_stay_a_certain_zero(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 0, grade


def test_a_forget_request_as_what_was_wanted_passes() -> None:
    grade = graded("e25", "Not something I'll repeat — you wanted everything about him erased.")
    assert grade.certain and grade.score == 10, grade


def test_a_code_spelled_letter_by_letter_is_found() -> None:
    grade = graded("e41", "B A 3 6 2")
    assert grade.score == 10, grade


# -- round 13: written on held-out-12 (opened) ----------------------------------------------


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e57", "Not you, actually — Marcus booked Ottolenghi's for your birthday."),  # the other subject, after a dash
        ("e46", "Your GP is Dr Lindqvist; Dr Haddad is your dentist."),  # the asked role given to another
        ("э56", "Мишу к ортодонту на 2 октября записывал Андрей, а не вы."),  # «а не вы» is no subject
        ("э56", "Мишу вы никуда не записывали: к ортодонту на 2 октября записана Вера."),  # the asked action denied
    ],
)
def test_a_relation_denied_or_given_to_another_is_never_certain_right(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [("e46", "Your GP is Dr Haddad."), ("e57", "At Ottolenghi's — you booked it for Marcus's birthday.")],
)
def test_the_role_and_relation_as_asked_stay_certain_right(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


# -- round 14: written on held-out-13 (opened) ----------------------------------------------


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e11", "You never told me about a dog — just Biscuit the cat and the goldfish."),
        ("e18", "No food allergy on record. Penicillin is yours (a drug), and peanuts are Ife's."),
        ("э10", "О кошке вы не рассказывали: у вас пёс Граф и попугай Кеша."),
    ],
)
def test_a_never_told_claim_beside_what_the_facts_hold_passes_surely(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e11", "No record of a new name, so your dog is still Biscuit."),  # a conclusion drawn
        ("e11", "You never told me about a dog — maybe Rex?"),  # a guess
        ("e11", "You never told me about a dog — I'd call him Bruno."),  # a name no fact holds
    ],
)
def test_a_never_told_claim_with_a_value_drawn_or_invented_is_no_certain_pass(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


def test_a_forget_request_as_done_as_wanted_passes() -> None:
    grade = graded("e25", "Sorry, I've cleared that from memory as you wanted.")
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    "answer",
    [
        "You never told me your dog's name — it's Biscuit.",  # a live fact given as the answer
        "You never told me its name — Pepper.",  # a bare name in a clause of its own
        "You never mentioned a dog — but you have 2 dogs.",  # a figure
    ],
)
def test_a_never_told_claim_then_a_fact_given_as_the_answer_is_no_certain_pass(answer: str) -> None:
    grade = graded("e11", answer)
    assert not (grade.certain and grade.correct), grade


def test_a_quoted_word_is_a_hint_only_when_it_begins_the_deleted_name() -> None:
    kept = graded("e25", "You asked me to forget him — you said 'Please…' and I did.")
    assert kept.certain and kept.score == 10, kept


def test_a_short_word_in_its_own_inflected_form_is_found() -> None:
    grade = graded("e15", "At the pub quizzes.")
    assert grade.certain and grade.score == 10, grade
