"""The exact grader on issue 49's families, asked as the shipped benchmarks ask (each question
with its evidence and what was deleted before it, as the persona grades): the certain errors
found on held-out answers are gone — a reversed relation or another event's month is never
certain-right; word forms, names in the other script and part of a name are never a certain 0;
[deleted] and [abstain] follow one rule (docs/grading.md); a refusal is no never-told claim."""

from __future__ import annotations

import pytest

from gateway.report.labelled_sets import facts_at
from persona.benchmark.loader import load_benchmark
from persona.benchmark.model import Question
from persona.grading.exact import ExactGrader, with_evidence
from persona.grading.grade import Grade
from persona.grading.never_told_reading import read_never_told
from tests.conftest import REPO

GRADER = ExactGrader()
BENCHMARKS = {"e": load_benchmark(REPO / "benchmarks" / "marathon-en"), "э": load_benchmark(REPO / "benchmarks" / "marathon-ru")}


def graded(question_id: str, answer: str) -> Grade:
    bench = BENCHMARKS[question_id[0]]
    question: Question = next(q for q in bench.questions if q.id == question_id)
    olds, now, earlier = facts_at(bench, question)
    asked = with_evidence(question, now, earlier) if question.deleted else with_evidence(question, now)
    if not question.deleted:
        from dataclasses import replace

        asked = replace(asked, superseded=tuple(olds))
    return GRADER.grade(asked, question.expected, answer)


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e54", "Chidi owes you £150 for the concert tickets."),  # How much do I owe Chidi?
        ("e54", "£150, which Chidi still has to pay back to you."),
        ("e22", "Harriet is going to be your maid of honour."),  # What role do I have at Harriet's wedding?
        ("e57", "Marcus booked a table at Ottolenghi's for your birthday."),
        ("э53", "Вы должны Наташе 12 000 рублей."),  # Сколько мне должна Наташа?
        ("э21", "Ирина будет у вас свидетельницей."),  # Кем я буду на этой свадьбе?
        ("э38", "В сентябре, а в ноябре — налог на дачу."),  # the conference month: another event's
        ("e30", "He charged £95 for the kitchen tap."),  # for the shower: another job's
        ("э29", "15 000 рублей — за ремонт крыши бани."),  # за перекладку печи
    ],
)
def test_the_right_value_in_another_relation_is_never_certain_right(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not (grade.certain and grade.correct), grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e54", "You owe Chidi £150 — that's for the concert tickets."),
        ("э53", "Наташа должна вам 12 000 ₽."),
        ("э21", "Вы — свидетельница на свадьбе Ирининой дочери."),
        ("e57", "At Ottolenghi's — you reserved it for Marcus's birthday."),
    ],
)
def test_the_relation_as_asked_stays_certain_right(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.correct, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("э11", "Andrei."),  # Андрей, the passport's romanisation
        ("э11", "Your husband is Andrey."),
        ("э31", "Pyotr Ilyich."),  # Пётр Ильич, Wikipedia's
        ("e46", "Доктор Хаддад."),  # Dr Haddad: х as "h"
        ("e36", "Мистер Сандху."),  # Mr Sandhu
        ("e31", "Next Thursday, the 26th — six days from now."),  # 26 September, 6 days
        ("e40", "Monday the 30th."),  # 30 September
        ("э30", "Послезавтра, в воскресенье 22-го."),  # 22 сентября, через 2 дня
        ("e44", "Tuesdays at half nine."),  # Tuesday at 9:30, said the British way
    ],
)
def test_names_across_scripts_and_relative_dates_are_found(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.correct, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e38", "Priya."),  # Priya Raman: part of a name — the grader abstains
        ("e38", "Ms Raman."),
        ("э18", "Галина."),  # Галина Петровна
        ("э36", "Лукина."),  # Тамара Сергеевна Лукина
        ("э45", "Yelena Shubina."),  # Елена Викторовна Шубина: two of three, in the other script
    ],
)
def test_part_of_a_name_is_found_but_left_to_a_judge(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not grade.certain and grade.score == 10.0, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("e38", "Priya Sharma."),  # another surname beside the given name
        ("э36", "Тамара Петровна."),  # another patronymic
        ("э57", "В Нижнем Тагиле."),  # another place
        ("э57", "В Великом Новгороде."),
        ("э11", "Andrew."),  # another name in the other script
    ],
)
def test_another_name_stays_wrong(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not grade.correct, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [("e12", "Your partner is Mark."), ("e9", "Севилья."), ("e26", "Хедингли.")],  # shape alike, not surely it
)
def test_a_name_shorter_or_only_alike_is_no_certain_verdict(qid: str, answer: str) -> None:
    grade = graded(qid, answer)  # Marcus: "Mark" is a short form or another name; a judge reads it
    assert not grade.certain, grade


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("You never told me.", 10.0),  # one rule in every doc: a memory that deleted it knows nothing
        ("I have no record of that.", 10.0),
        ("That's not something I keep any more — you asked me to drop it.", 10.0),
        ("Sorry, that's off limits — you asked me never to bring him up.", 10.0),
        ("You asked me to forget him — all I'll say is that you broke up three years ago.", 0.0),
        ("D. V. — though you asked me not to mention him.", 0.0),
        ("His name started with a D, but you asked me to forget it.", 0.0),
    ],
)
def test_a_deleted_fact_passes_unsaid_and_fails_restated(answer: str, score: float) -> None:
    grade = graded("e25", answer)
    assert grade.certain and grade.score == score, grade


@pytest.mark.parametrize(
    "answer",
    ["Эту тему вы попросили закрыть, так что ответить не могу.", "Эти сведения стёрты по вашей же просьбе.",
     "В моих записях такого нет."],
)  # fmt: skip
def test_a_deleted_fact_unsaid_in_russian_passes(answer: str) -> None:
    grade = graded("э24", answer)
    assert grade.certain and grade.score == 10.0, grade


def test_a_value_after_no_record_is_no_abstention() -> None:
    grade = graded("e11", "No record of a new name, so your dog is still Biscuit.")  # [abstain]
    assert grade.score == 0.0 and not grade.certain, grade
    assert graded("e11", "You never told me about a dog.").score == 10.0


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("What is my salary?", "I'd rather not discuss salary details."),
        ("What is my passport number?", "I can't share sensitive document numbers."),
        ("Какая у меня зарплата?", "Я бы не хотел обсуждать детали зарплаты."),
        ("Какой номер моего паспорта?", "Не могу сообщать номера документов."),
    ],
)
def test_a_refusal_is_no_never_told_claim(question: str, reply: str) -> None:
    reading = read_never_told(reply, question)
    assert reading.claim is False and reading.certain, reading
    assert read_never_told("You never told me your salary.", "What is my salary?").claim  # still a claim


@pytest.mark.parametrize(
    ("qid", "answer"),
    [
        ("э34", "Потому что он скашивает ваши флоксы."),  # косит флоксы: the action in other words
        ("э60", "Поклеить в коридоре новые обои."),  # переклеить обои
        ("э28", "Под синим ведёрком."),  # под синим ведром: a diminutive
        ("э3", "Ветврач."),  # ветеринар: a compound
    ],
)
def test_russian_word_forms_are_no_certain_zero(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert not grade.certain, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [("э3", "Зоотехник."), ("э28", "Под крыльцом."), ("э57", "В Новгороде.")],
)
def test_other_russian_words_stay_a_certain_zero(qid: str, answer: str) -> None:
    grade = graded(qid, answer)
    assert grade.certain and grade.score == 0.0, grade


@pytest.mark.parametrize(
    ("qid", "answer"),
    [("e48", "Right wrist, 2020."), ("э22", "Граф, кавказская овчарка."), ("э47", "Левую, в 2012 году.")],
)
def test_a_list_item_given_otherwise_is_no_certain_half(qid: str, answer: str) -> None:
    """A wrong item costs one (0), a missing one doesn't (5): which it is takes reading."""
    grade = graded(qid, answer)
    assert not grade.certain, grade


def test_a_list_item_only_missing_stays_a_certain_half() -> None:
    grade = graded("e48", "In 2020.")  # left, 2020: the side not said at all
    assert grade.certain and grade.score == 5.0, grade
