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
        # "every year" away from the figure says when it renews, not what the figure is per
        ("How much do we pay for broadband per month?", "£32", "£32, and it renews every year.", (10, True)),
        ("How much do we pay for broadband per month?", "£32", "£32 every year.", (0, True)),
        # a period nobody named: maybe wrong
        ("How much did Gareth charge?", "£95", "£95 an hour.", (10, False)),
        ("How much did Gareth charge?", "£95", "£95.", (10, True)),
        # the figures a sum was worked from are no rivals; nor is history beside a bold answer
        ("How much did I spend on books?", "£65", "£47 + £18 = **£65** so far.", (10, True)),
        ("How much did Gareth charge?", "£95", "**£95** — not the £90 he first quoted.", (10, True)),
        ("Who is my GP?", "Dr Haddad", "Haddad.", (10, True)),
        # a name in quotes is a name too: «Восход», "Meadow"
        ("Who is my GP?", "Dr Haddad", "Dr Haddad, at the «Meadow» practice.", (10, False)),
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


FAMILY = {
    ("family.md", "1.1"): "My grandmother Nkechi is 88",
    ("family.md", "1.2"): "Grandma Nkechi lives in Enugu",
    ("family.md", "2.1"): "My uncle Obinna lives in Lagos",
    ("family.md", "2.2"): "Uncle Obinna has two sons",
    ("pets.md", "3.1"): "Our cat is called Biscuit",
    ("pets.md", "3.2"): "Biscuit is a grey tabby",
    ("home.md", "4.1"): "I drink green tea first thing in the morning",
    ("home.md", "5.1"): "The flat has 72 square metres",
    ("sport.md", "6.1"): "My personal best for 10 km is 52:30",
    ("sport.md", "6.2"): "My personal best for 5 km is 24:10",
    ("travel.md", "7.1"): "My seat on the flight is 32K",
}
EARLIER = {("home.md", "4.1"): ["I drink coffee first thing in the morning"]}


def family_grade(text: str, expected: str, answer: str) -> tuple[float, bool]:
    q = with_evidence(Question("q", text, expected, (), "ch.md", 1), FAMILY, EARLIER)
    g = GRADER.grade(q, expected, answer)
    return g.score, g.certain


@pytest.mark.parametrize(
    ("question", "expected", "answer", "verdict"),
    [
        # names another fact holds, and no fact about the subject: the facts may not say so
        ("How old is my grandmother?", "88", "88 — she lives with your uncle Obinna in Lagos.", (10, False)),
        ("How old is my grandmother?", "88", "She's 88 — she lives in Enugu.", (10, True)),
        # after a dash, words no fact about the subject holds: a claim that can't be checked
        ("What is my cat called?", "Biscuit", "Biscuit — a ginger tom.", (10, False)),
        ("What is my cat called?", "Biscuit", "Biscuit — your grey tabby.", (10, True)),
        # the fact's earlier value said as current beside the new one
        (
            "What do I drink first thing?",
            "green tea",
            "A coffee first thing, then green tea later.",
            (10, False),
        ),
        ("What do I drink first thing?", "green tea", "Green tea — you used to drink coffee.", (10, True)),
        # "it never changed" of a fact that was updated: a claim the facts contradict
        ("What do I drink first thing?", "green tea", "Green tea — that has never changed.", (10, False)),
        ("What do I drink first thing?", "green tea", "Green tea — it changed from coffee.", (10, True)),
        # a figure in another measure of the same kind is wrong, surely
        ("How many square metres does the flat have?", "72", "72 square feet.", (0, True)),
        ("How many square metres does the flat have?", "72", "72 m².", (10, True)),
        # the question's own measure said with another value: an answer about something else
        ("What is my personal best for 10 km?", "52:30", "52:30 — that's your 8 km time.", (10, False)),
        # a code's digits and letters apart: not read, and not failed
        ("What is my seat?", "32K", "Row 32, seat K.", (0, False)),
        ("What is my seat?", "32K", "Row 14, seat C.", (0, True)),
    ],
)
def test_what_the_facts_about_the_subject_say_and_what_they_do_not(
    question: str, expected: str, answer: str, verdict: tuple[float, bool]
) -> None:
    assert family_grade(question, expected, answer) == verdict


def test_a_deleted_question_fails_an_answer_stating_what_was_deleted() -> None:
    """With the facts as the scripted persona holds them (the deleted one's text before it was
    deleted, in `earlier`), the deleted name in any form is a sure 0; the question's own words
    and "you asked me to forget him" are not."""
    facts = {("family.md", "5.1"): "—", ("family.md", "5.2"): "My sister is Ife"}  # "—": deleted
    earlier = {("family.md", "5.1"): ["My ex-husband is Vadim Stolbukhin"]}
    q = with_evidence(
        Question("q", "What is my ex-husband's surname?", "", ("deleted",), "c", 1), facts, earlier
    )
    for answer in ("Vadim. But you asked me to forget him, so I won't say more.",
                   "I only remember you asked me to forget… stolbukhin, I think."):  # fmt: skip
        g = GRADER.grade(q, "", answer)
        assert (g.score, g.certain) == (0.0, True), answer
        assert "deleted content" in g.reason
    assert GRADER.grade(q, "", "You asked me to forget your ex-husband, so I no longer have it.").score == 10
    assert GRADER.grade(q, "", "You never told me that.").score == 10
    # in review: a date beside "forgotten as asked" is no sure leak (one or two digits, not "2009")
    dated = GRADER.grade(q, "", "You asked me to forget him — I've done that, as you asked on 12 March.")
    assert not (dated.certain and dated.score == 0), dated
