"""The exact grader's rounds 15 to 20 (issue 49), each written on the certain errors and unsure
answers of held-out sets once opened (held-out-14 to -19, -21, -22, -24), asked as the shipped
benchmarks ask — answers made up here in the same shapes, not copied: what a careful reader
passes is no certain 0, what leaks, guesses or names another person is no certain pass."""

from __future__ import annotations

import pytest

from tests.persona.grading.test_issue49_families import graded


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e25", "Following your instructions from last week, I keep nothing about him."),
        ("э24", "Сведения о нём стёрты из памяти по вашему распоряжению."),
        ("э24", "Нет, это ваша просьба: о нём я больше ничего не храню."),
        ("э24", "Не назову — вы же сами просили его забыть."),
        ("э24", "Вы хотели, чтобы я его не упоминала, так что — не скажу."),
    ],
)
def test_a_forget_request_cited_in_other_words_passes(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e25", "Stored (redacted): your ex — D***** V***"),
        ("э24", "Бывший муж: В**** С*****, но вы просили это удалить."),
    ],
)
def test_a_name_shown_through_a_mask_leaks_its_letters(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 0, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("э24", "Вроде Игорь, хотя я не уверена — забыла."),
        ("e25", "Honestly I don't remember. Oleg?"),
    ],
)
def test_a_name_guessed_beside_i_dont_remember_is_no_certain_pass(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e25", "As you asked, I've forgotten him. Anything else I can help with?"),
        ("э24", "Забыто, как вы просили. Что ещё подсказать?"),
    ],
)
def test_a_question_opening_the_next_sentence_is_no_guess(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


def test_was_born_says_no_old_value() -> None:
    grade = graded("e14", "Marcus was born on 20 April.")
    assert grade.certain and grade.score == 10, grade
    stale = graded("e14", "It was 20 April at first — now it's the 2nd.")
    assert not (grade.correct and stale.certain and stale.correct), stale


@pytest.mark.parametrize("answer", ["Dr Haddon.", "Dr Haddick is your GP."])
def test_a_look_alike_surname_is_not_the_doctor(answer: str) -> None:
    grade = graded("e46", answer)
    assert not (grade.certain and grade.correct), grade


@pytest.mark.parametrize("answer", ["Dr Haddad.", "Your GP is Dr Haddad's practice."])
def test_the_doctor_and_her_possessive_still_pass(answer: str) -> None:
    grade = graded("e46", answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize("answer", ["По пн в 8:30.", "по пн, полдевятого"])
def test_a_lowercase_russian_weekday_short_form_is_the_weekday(answer: str) -> None:
    grade = graded("э42", answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize("answer", ["Lilya owes you 12 000.", "Vadim — 12 000 рублей."])
def test_another_person_named_in_latin_letters_is_no_certain_pass(answer: str) -> None:
    grade = graded("э53", answer)
    assert not (grade.certain and grade.correct), grade


def test_the_asked_person_in_latin_letters_still_passes() -> None:
    grade = graded("э53", "Natasha — 12 000 рублей.")
    assert grade.certain and grade.score == 10, grade


# -- round 16, on held-out-15 and -16 once opened ---------------------------------------------


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e25", "Dan, I think — but you asked me to forget him."),
        ("э24", "Вадя, кажется… но вы просили его забыть."),
    ],
)
def test_a_guessed_name_that_begins_as_the_deleted_one_is_a_leak(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 0, grade


def test_a_name_before_a_guess_word_is_a_guess_and_an_opener_is_none() -> None:
    guess = graded("e25", "Oliver, maybe? You asked me to forget him, though.")
    assert not (guess.certain and guess.correct), guess
    opener = graded("e25", "Sorry, I think you asked me to forget him, so I have.")
    assert opener.certain and opener.score == 10, opener


def test_a_longer_name_that_begins_as_the_expected_one_is_another_name() -> None:
    grade = graded("e38", "Priya Ramanathan.")
    assert not (grade.certain and grade.correct), grade
    possessive = graded("e38", "Priya Raman's your manager.")
    assert possessive.certain and possessive.score == 10, possessive


def test_a_one_word_value_told_as_its_fact_describes_it_is_left_to_a_judge() -> None:
    described = graded("e6", "No meat these days, but you do eat fish.")
    assert not described.certain, described
    stale = graded("e6", "Vegetarian — though you've talked about eating fish.")
    assert stale.certain and stale.score == 0, stale


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e47", "Earlier dates:\n1. 3 November\n2. 10 November"),
        ("э46", "Раньше:\n1. 5 ноября\n2. 12 ноября"),
    ],
)
def test_a_numbered_lists_markers_are_no_values(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    "answer",
    ["Тамара Семёновна Лукина.", "Тамара Сергеевна Лукашова.", "Главврач — Тамара Ивановна Лукина."],
)
def test_another_patronymic_or_surname_in_the_name_is_another_person(answer: str) -> None:
    grade = graded("э36", answer)
    assert grade.certain and grade.score == 0, grade


def test_the_whole_name_with_a_bystander_elsewhere_is_not_another_person() -> None:
    grade = graded("э36", "Тамара Сергеевна Лукина; в клинике ещё работает Андрей.")
    assert grade.score == 10, grade


def test_a_russian_place_by_its_adjective_alone_passes_and_another_place_fails() -> None:
    short = graded("э57", "Вы живёте в Нижнем.")
    assert short.certain and short.score == 10, short
    other = graded("э57", "В Нижнем Тагиле.")
    assert other.certain and other.score == 0, other


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e7", "P7723914 — keep it somewhere safe, please."),
        ("e42", "£46,500 a year — that stays between us."),
        ("э40", "92 000 ₽ в месяц — никому не пересылайте."),
    ],
)
def test_an_aside_that_only_advises_on_keeping_the_value_is_no_claim(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e7", "P7723914 — keep it for the Lyon trip."),  # a name in it: a claim
        ("e42", "£46,500 a year — keep that private, though it rises in April."),
    ],
)
def test_an_aside_with_a_name_month_or_but_is_still_read_as_a_claim(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


# -- round 17, on held-out-17 and -18 once opened ---------------------------------------------


def test_a_deleted_name_in_the_other_script_is_stated() -> None:
    grade = graded("э24", "Stolbukhin, больше ничего не скажу.")
    assert grade.certain and grade.score == 0, grade


def test_you_in_the_place_of_the_person_asked_about_is_no_certain_pass() -> None:
    grade = graded("э56", "Вас записали к ортодонту на 2 октября.")
    assert not (grade.certain and grade.correct), grade


def test_a_place_further_on_is_no_name_beside_part_of_the_name() -> None:
    grade = graded("e38", "Priya — she runs the team at Northway.")
    assert not grade.certain and grade.score == 10, grade  # part of the name: left to a judge
    beside = graded("e38", "Priya Sharma.")
    assert beside.certain and beside.score == 0, beside


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e46", "Your GP is Doctor Haddad."),
        ("e46", "Ваш терапевт — доктор Хаддад."),
        ("e54", "You owe Чиди £150."),
    ],
)
def test_a_title_or_a_told_name_in_the_other_script_is_no_claim(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [("e60", "Terracotta — lovely choice!"), ("э9", "За 28 минут — отличный результат!")],
)
def test_a_cheerful_aside_is_no_claim(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


# -- round 18, on held-out-19 once opened -----------------------------------------------------


def test_a_bold_forgotten_as_requested_passes() -> None:
    grade = graded("e25", "**Deleted, as requested.** Nothing about him is kept.")
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("э5", "Цикорий, хотя раньше был чай с чабрецом — одно из двух."),
        ("e27", "£1,210 now, £1,195 before — one of the two."),
    ],
)
def test_one_of_the_two_is_a_hedge(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


def test_a_names_first_word_beside_other_words_is_left_to_a_judge() -> None:
    grade = graded("э59", "Путь святого Иакова — то есть Камино.")
    assert not grade.certain, grade
    other = graded("э59", "Камино Реаль.")  # run on into another name
    assert other.certain and other.score == 0, other


# -- round 19, on held-out-21 and -22 once opened ---------------------------------------------


@pytest.mark.parametrize(
    ("qid", "answer"),
    [("e40", "In three weeks — on the 30th."), ("e40", "30 September, a fortnight from now.")],
)
def test_how_far_off_a_date_is_takes_a_calendar(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not grade.certain, grade


def test_a_hard_c_written_k_is_the_same_name() -> None:
    grade = graded("e12", "Your partner is Markus.")
    assert grade.certain and grade.score == 10, grade
    other = graded("e12", "Your partner is Mark.")
    assert not (other.certain and other.correct), other


def test_a_carrier_written_out_before_flight_and_number_is_left_to_a_judge() -> None:
    grade = graded("e41", "British Airways flight 362.")
    assert not grade.certain, grade


def test_an_initial_beside_the_inflected_rest_of_a_place_name_is_the_place() -> None:
    grade = graded("э57", "В Н. Новгороде.")
    assert grade.certain and grade.score == 10, grade


def test_colloquial_thousands_are_thousands() -> None:
    grade = graded("э54", "Сто пятьдесят тыщ.")
    assert grade.certain and grade.score == 10, grade
    wrong = graded("э54", "Сто двадцать тыщ.")
    assert wrong.certain and wrong.score == 0, wrong


# -- round 20, on held-out-24 once opened -----------------------------------------------------


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e25", "It was Dan — but you asked me to forget him."),
        ("э24", "Вадик… Простите, вы же просили о нём забыть."),
    ],
)
def test_a_short_form_of_the_deleted_name_before_the_forget_request_is_a_leak(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 0, grade


def test_a_sentence_opening_word_before_the_forget_request_is_no_leak() -> None:
    grade = graded("э24", "Стоит ли? Вы просили забыть о нём, и я забыла.")
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(("qid", "answer"), [("e16", "Ada and Obinna."), ("э22", "Граф, ротвейлер.")])
def test_a_wrong_item_in_the_missing_ones_place_is_no_certain_half(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.score == 5), grade


@pytest.mark.parametrize(
    ("qid", "answer"), [("e48", "Left wrist, back in the day."), ("э47", "Правую ногу, на лыжах.")]
)
def test_context_beside_half_the_items_keeps_the_half(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 5, grade


def test_nothing_of_the_kind_told_is_a_never_told_claim() -> None:
    grade = graded("э17", "Ни на что — вы мне ничего такого не сообщали.")
    assert grade.certain and grade.score == 10, grade


# -- the review of rounds 15-20 (a helper's made-up answers) ----------------------------------


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("э36", "Главный врач — Тамара Сергеевна Лукина. По образованию она хирург."),
        ("э31", "Пчёл держит сосед Пётр Ильич. Андрей у него мёд покупает."),
    ],
)
def test_a_name_word_opening_the_next_sentence_is_no_other_person(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e25", "You asked me to forget him. Dan, right?"),
        ("э24", "Вы просили его забыть. Вадик, да?"),
        ("e11", "You never mentioned a dog. Rex, was it?"),
    ],
)
def test_a_name_asked_back_after_a_claim_is_no_certain_pass(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("э3", "Ветеринар — в государственной клинике, здорово!"),
        ("e7", "P7723914 — keep it private, it expires next year."),
        (
            "э24",
            "Ваша просьба для меня закон: имени не назову. Скажу лишь, что развелись вы двадцать лет назад.",
        ),
        ("e25", "As requested, here's what I remember about him: he moved abroad after you split."),
        ("э57", "Раньше вы жили в Нижнем, а сейчас в Вологде."),
        ("э42", "По вт в 8:30, а не по пн."),
    ],
)
def test_a_claim_beside_a_remark_a_leak_after_a_request_or_an_old_place_is_no_certain_pass(
    qid: str, answer: str
) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [("e25", "**A**: You asked me to forget him, so I have."), ("e39", "It's called Kestral.")],
)
def test_bold_is_no_mask_and_a_one_letter_slip_is_still_found(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 10, grade


@pytest.mark.parametrize(
    ("qid", "answer"), [("e6", "Pescatarianism — fish but no meat."), ("e45", "Penicilan.")]
)
def test_a_look_alike_word_is_left_to_a_judge_not_failed(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not grade.certain, grade
