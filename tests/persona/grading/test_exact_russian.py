"""The exact grader on Russian answers as agents write them: the number, date, time and
word forms of issue #16, the superseded value given as current, and a corpus of answers to
every marathon-ru question (tests/persona/grading/corpus/marathon_ru_answers.json5)."""

from __future__ import annotations

from pathlib import Path

import json5
import pytest

from persona.benchmark.loader import load_benchmark
from persona.benchmark.model import Question
from persona.grading.exact import ExactGrader
from tests.conftest import REPO

GRADER = ExactGrader()
CORPUS = Path(__file__).parent / "corpus" / "marathon_ru_answers.json5"


def score(expected: str, answer: str, question: str = "?", *tags: str) -> float:
    return GRADER.grade(Question("q", question, expected, tags, "ch.md", 1), expected, answer).score


@pytest.mark.parametrize(
    ("expected", "answers"),
    [
        (
            "19 200 долларов",
            ["19 200", "19\u00a0200 $", "19\u202f200 долларов", "19200", "$19,200", "19,2 тыс. долларов"],
        ),
        ("23 года", ["23", "23 года", "двадцать три года", "Ему двадцать три"]),
        ("5 октября", ["5 октября", "05.10", "5-го октября", "пятого октября", "5.10.2026"]),
        ("52:30", ["52:30", "52 минуты 30 секунд", "за 52 мин 30 сек"]),
        ("кот Босс", ["кот Босс", "у вас кот — Босс", "кота зовут Босс"]),
        ("минус 2,5", ["−2,5", "-2.5", "минус 2,5"]),
        ("15 000 рублей", ["15 тыс. рублей", "пятнадцать тысяч рублей", "15\u00a0000 ₽"]),
        ("41", ["сорок один", "Вам **41** 🎂"]),
        ("20:00", ["до 20:00", "до 20.00", "до 20 часов"]),
    ],
)
def test_russian_forms_of_the_same_value_score_full(expected: str, answers: list[str]) -> None:
    assert [score(expected, a) for a in answers] == [10.0] * len(answers)


@pytest.mark.parametrize(
    ("expected", "answer"),
    [
        ("19 200 долларов", "19 000 долларов"),
        ("5 октября", "05.11"),
        ("52:30", "52 минуты 3 секунды"),
        ("минус 2,5", "плюс 3,5"),
        ("054Г", "054А"),
    ],
)
def test_a_near_miss_scores_zero(expected: str, answer: str) -> None:
    assert score(expected, answer) == 0.0


def test_a_superseded_value_given_as_current_is_wrong_even_when_the_new_one_is_there() -> None:
    question = "Сколько я плачу за аренду теперь?"
    assert score("8320 рублей", "Сейчас 8150 рублей (до этого было 8320)", question, "update") == 0.0
    assert score("8320 рублей", "Сейчас 8320 рублей (раньше было 8150)", question, "update") == 10.0
    assert score("кофе", "Раньше пили кофе, а теперь — чай с чабрецом", question) == 0.0
    # a question about the old value itself is not a superseded answer
    assert score("8150 рублей", "Раньше было 8150, сейчас 8320", "Сколько было раньше?") == 10.0


def test_on_every_marathon_ru_question_correct_answers_pass_and_wrong_ones_do_not() -> None:
    """Answers an agent would give, labelled by a careful reader. Paraphrases only a judge can
    read (Михаил for Миша, «держать пчёл» for пасека) are among the misses; the floors keep the
    exact grader from getting worse."""
    bench = load_benchmark(REPO / "benchmarks" / "marathon-ru")
    questions = {q.id: q for q in bench.questions}
    corpus = json5.loads(CORPUS.read_text(encoding="utf-8"))
    assert {x["id"] for x in corpus} == set(questions)
    right = [(questions[x["id"]], a) for x in corpus for a in x["correct"]]
    wrong = [(questions[x["id"]], a) for x in corpus for a in x["wrong"]]
    full_on_right = [a for q, a in right if GRADER.grade(q, q.expected, a).score == 10]
    full_on_wrong = [(q.id, a) for q, a in wrong if GRADER.grade(q, q.expected, a).score == 10]
    assert len(full_on_right) / len(right) >= 0.9
    assert len(full_on_wrong) / len(wrong) <= 0.05, full_on_wrong


def test_a_past_tense_alone_does_not_make_an_answer_old() -> None:
    assert (
        score("1,915 euros", "Your rent was raised to 1,915 euros. Anything else?", "What is my rent now?")
        == 10
    )
    assert score("41", "Мне было сказано, что вам 41. Что-нибудь ещё?", "Сколько мне лет?") == 10


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Your daughter is seven. Two weeks ago she fell.", [7.0, 2.0]),  # never 9
        ("Ему сорок. Два года назад…", [40.0, 2.0]),
        ("два-три дня", [2.0, 3.0]),  # a range in words: two numbers, never 5
        ("one, two or three", [1.0, 2.0, 3.0]),
        ("сто двадцать три", [123.0]),
    ],
)
def test_number_words_join_only_in_a_numbers_order_and_across_spaces(text: str, numbers: list[float]) -> None:
    from persona.terms import extract_quantities

    assert [q.value for q in extract_quantities(text)] == numbers


@pytest.mark.parametrize(
    ("expected", "answer", "tags", "wanted"),
    [
        ("x", "You asked me to forget that. It was Marco.", ("deleted",), 0),  # told anyway
        ("x", "You asked me to forget that, but I'm happy to help with anything else.", ("deleted",), 10),
        ("", "I'm not sure, but I think your sister is allergic to peanuts.", ("abstain",), 0),  # a guess
        ("", "Не помню точно, но кажется, его зовут Игорь.", ("abstain",), 0),
        ("Washington", "He moved to Washington, he lives there now.", (), 10),  # "Was…" is no past word
        ("14:30", "Your appointment was moved to 14:30; please arrive 10 minutes early.", (), 10),  # passive
        ("10 мая", "Не помню дату, но торт весил 10.5 кг.", (), 0),  # a weight, not a date
        ("x", "Об этом человеке вы попросили не вспоминать — я уважаю вашу просьбу.", ("deleted",), 10),
        ("17 November", "On 17 Nov (it was moved from 10 Nov).", (), 10),  # a month's short form after a day
    ],
)
def test_cases_a_review_found(expected: str, answer: str, tags: tuple[str, ...], wanted: int) -> None:
    assert score(expected, answer, "?", *tags) == wanted


def test_libo_joins_a_list_of_names_as_ili_does() -> None:
    """«либо» is «или»: a name joined by either that is not among the expected is flagged (the
    joiner words are language data now; «либо» had been missing from this list alone)."""
    from persona.benchmark.model import Question
    from persona.grading.beside import names_not_listed

    q = Question("q", "Как зовут моих детей?", "Вера и Миша", (), "", 0)
    for joiner in ("или", "либо"):
        assert names_not_listed(q, ["Вера", "Миша"], f"Вера {joiner} Наташа") == ["наташа"]
        assert names_not_listed(q, ["Вера", "Миша"], f"Вера {joiner} Миша") == []
