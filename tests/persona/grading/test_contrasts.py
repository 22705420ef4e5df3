"""The exact grader against the facts' closed sets of words (`persona/grading/contrasts.py`):
a side, an age order, a family relation or a room said of the answer's subject where the facts
say another leaves the grade unsure; the same word the facts use, or none, changes nothing."""

from __future__ import annotations

import pytest

from persona.benchmark.model import Question
from persona.grading.exact import ExactGrader, with_evidence

GRADER = ExactGrader()

FACTS = {
    ("family.md", "2.5"): "My younger sister Ife studies law in Glasgow",
    ("family.md", "2.6"): "Ife is allergic to peanuts",
    ("family.md", "3.1"): "My grandmother is 88",
    ("family.md", "3.2"): "My uncle Obinna lives in Lagos",
    ("home.md", "5.1"): "I will repaint the bedroom terracotta",
    ("health.md", "7.1"): "I broke my left wrist climbing in 2020",
    ("dacha.md", "4.1"): "Сосед слева, Пётр Ильич, держит пчёл",
    ("family.md", "3.4"): "Дочь Вера учится в Казани на биолога",
    ("family.md", "3.6"): "У Веры аллергия на кошачью шерсть",
    ("work.md", "3.2"): "Самый необычный пациент — ёж по кличке Шустрик",
}


def grade(text: str, expected: str, answer: str) -> tuple[float, bool, str]:
    question = with_evidence(Question("q", text, expected, (), "ch.md", 1), FACTS)
    g = GRADER.grade(question, expected, answer)
    return g.score, g.certain, g.reason


@pytest.mark.parametrize(
    ("question", "expected", "answer"),
    [
        # what the facts put beside the name: "younger sister", «дочь»
        ("Who in my family is allergic to peanuts?", "Ife", "**Ife**, your older sister."),
        ("У кого аллергия на кошачью шерсть?", "у Веры", "У **Веры, вашей младшей сестры**."),
        ("Кто из соседей держит пчёл?", "Пётр Ильич", "**Пётр Ильич**, сосед справа."),
        # what the facts holding the value and the question say: the bedroom, a grandmother
        (
            "What colour will I repaint my bedroom?",
            "terracotta",
            "You're repainting the living room in terracotta.",
        ),
        ("How old is my grandmother?", "88", "88 — that is how old your uncle is."),
        # a species: the hedgehog's name given to a hamster
        ("Как зовут самого необычного пациента?", "Шустрик", "Хомяк Шустрик."),
    ],
)
def test_a_word_the_facts_say_otherwise_leaves_the_grade_unsure(
    question: str, expected: str, answer: str
) -> None:
    score, certain, reason = grade(question, expected, answer)
    assert (score, certain) == (10, False)
    assert "the facts say otherwise" in reason


@pytest.mark.parametrize(
    ("question", "expected", "answer", "score"),
    [
        ("Who in my family is allergic to peanuts?", "Ife", "Ife, your younger sister.", 10),
        ("Who in my family is allergic to peanuts?", "Ife", "Ife is.", 10),
        ("Кто из соседей держит пчёл?", "Пётр Ильич", "Пётр Ильич, сосед слева.", 10),
        ("У кого аллергия на кошачью шерсть?", "у Веры", "У Веры, вашей дочери.", 10),
        ("Как зовут самого необычного пациента?", "Шустрик", "Ёжик Шустрик 🦔", 10),
        # both words said: the facts' one is there, nothing contradicts
        (
            "What colour will I repaint my bedroom?",
            "terracotta",
            "Terracotta — the bedroom, not the living room.",
            10,
        ),
        # "right" as "correct" is no side
        ("What colour will I repaint my bedroom?", "terracotta", "Terracotta, right? That was the plan.", 10),
        # (the side as the expected value, said wrong — "The right wrist, in 2020." — is no certain
        # half since issue 49: a wrong item costs one; test_issue49_families.py)
    ],
)
def test_the_facts_own_word_or_none_changes_nothing(
    question: str, expected: str, answer: str, score: float
) -> None:
    assert grade(question, expected, answer)[:2] == (score, True)
