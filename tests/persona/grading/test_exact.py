from __future__ import annotations

import random

import pytest

from persona.benchmark.model import Question
from persona.grading.exact import ExactGrader, contains_expected, value_in
from persona.terms import extract_quantities, split_items

GRADER = ExactGrader()


def q(*tags: str) -> Question:
    return Question("q", "?", "", tags, "ch.md", 1)


@pytest.mark.parametrize(
    ("expected", "answer", "score"),
    [
        ("1,915 euros", "Your rent is now €1915 a month.", 10),
        ("1,915 euros", "Your rent is €1,840.", 0),
        ("1 840 €", "It was 1840 EUR", 10),
        ("3,5 euros", "Parking costs 3.5 EUR per hour", 10),
        ("3,5 euros", "Parking costs 35 EUR per hour", 0),
        ("279 км", "Вы пробежали 279 km", 10),
        ("279 км", "Вы пробежали 279 миль", 0),  # same number, other unit
        ("1.234.567,5", "exactly 1234567.5", 10),
        ("52:30", "Your best is 52:30 for 10 km", 10),
        ("2", "you have two daughters", 10),
        ("2", "you have 12 daughters", 0),
        ("LH1173", "Flight LH1173 on 2 June", 10),
        ("LH1173", "Flight LH1174", 0),
    ],
)
def test_numbers_units_separators(expected: str, answer: str, score: float) -> None:
    assert GRADER.grade(q(), expected, answer).score == score


def test_list_is_graded_in_proportion() -> None:
    grade = GRADER.grade(q(), "Lia, Mara and Ella", "Tom's daughters are Lia and Ella.")
    assert grade.score == pytest.approx(6.7)
    assert "missing 'Mara'" in grade.reason


def test_russian_list_with_inflections() -> None:
    assert GRADER.grade(q(), "Лена, Аня и Босс", "С вами живут Лена и кот Босс, гостит Аня").score == 10


def test_text_needs_its_key_terms() -> None:
    assert GRADER.grade(q(), "Jonas, nurse", "Your partner Jonas works as a nurse").score == 10
    assert GRADER.grade(q(), "sage green", "You are painting it blue").score == 0
    assert GRADER.grade(q(), "Santa Maria hospital", "He works at a hospital").score == 0


def test_abstention_is_correct_only_when_the_agent_says_it_was_never_told() -> None:
    assert GRADER.grade(q("abstain"), "", "You never told me about a dog.").score == 10
    assert GRADER.grade(q("abstain"), "", "Your dog is called Pixel.").score == 0


def test_never_told_answer_is_flagged_for_the_retry_rule() -> None:
    grade = GRADER.grade(q(), "Pixel", "I don't have any information about your cat.")
    assert grade.score == 0 and grade.never_told


def test_every_grade_has_a_reason() -> None:
    for expected, answer in [("5", ""), ("5", "5"), ("a, b", "a")]:
        assert GRADER.grade(q(), expected, answer).reason


def test_odd_text_never_raises() -> None:
    rng = random.Random(7)
    alphabet = "0123456789,. :;€$%-—abcдж\u00a0\u202f'\"[]()❓\n\t\x00"
    for _ in range(2000):
        expected = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        answer = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        grade = GRADER.grade(q(), expected, answer)
        assert 0 <= grade.score <= 10 and grade.reason


def test_quantities_read_units_on_either_side() -> None:
    values = [(x.value, x.unit) for x in extract_quantities("€1,840 then 72 m² and 10 км за 52:30")]
    assert values == [(1840.0, "eur"), (72.0, "m2"), (10.0, "km"), ("52:30", None)]


def test_split_items_keeps_thousands_together() -> None:
    assert split_items("1,915 euros") == ["1,915 euros"]
    assert split_items("Lia and Mara") == ["Lia", "Mara"]


@pytest.mark.parametrize(
    ("expected", "answer", "score"),
    [
        ("32K", "Your seat is 32K.", 10),
        ("32K", "Your seat is 32A.", 0),
        ("K-20417", "employee number K20417", 10),
        ("Q7XZ2P", "booking Q7XZ2B", 0),
        ("10km", "you ran 10 km", 10),
    ],
)
def test_identifiers_must_match_exactly(expected: str, answer: str, score: float) -> None:
    assert GRADER.grade(q(), expected, answer).score == score


def test_a_reply_with_no_value_at_all_is_surely_wrong_and_an_unreadable_one_is_unresolved() -> None:
    """ "Noted." to "How old am I?" is wrong, certainly — an agent that answers nothing must not
    leave its whole exam unresolved; "9 and a bit" for a time holds something it could not read."""
    q = Question("q", "How old am I?", "34", (), "ch.md", 1)
    noted = ExactGrader().grade(q, q.expected, "Noted.")
    assert noted.score == 0 and noted.certain
    time = Question("t", "When is the class?", "9:30", (), "ch.md", 1)
    unread = ExactGrader().grade(time, time.expected, "At 9 and a bit.")
    assert unread.score == 0 and not unread.certain


@pytest.mark.parametrize(
    ("answer", "certain"),
    [
        ("Originally **£1,195**, and after the first change **£1,150**.", False),  # which was when?
        ("Before the changes it was £1,150; after the first one, £1,195.", True),
    ],
)
def test_history_values_in_another_order_than_asked_are_unsure(answer: str, certain: bool) -> None:
    question = Question(
        "e28", "What was the rent before the two changes, and after the first one?", "£1,150, £1,195",
        ("update", "history"), "ch8.md", 1,
    )  # fmt: skip
    grade = ExactGrader().grade(question, question.expected, answer)
    assert (grade.score, grade.certain) == (10.0, certain)


def test_a_value_in_a_text_is_found_not_found_or_unsure_as_the_grader_reads_it() -> None:
    """The primitive under the evidence checks: three-valued, an unsure match kept apart from a
    finding (its best guess is `likely`, which `contains_expected` returns)."""
    found = value_in("Your dentist is on 12 May at 9:30.", "12 May, 9:30")
    assert (found.found, found.likely) == (True, True)
    assert value_in("The cat is called Pixel.", "Dot").found is False
    hedged = value_in("I think it was 34 or 35.", "34")
    assert hedged.found is None and hedged.likely and "hedged" in hedged.reason
    assert contains_expected("34", "I think it was 34 or 35.") is hedged.likely


def test_documented_promises_conflicts_are_never_certain_and_lowercase_weekdays_are_read() -> None:
    """Issue 61: a [conflict] answer with no expected value was a certain 0 (docs/grading.md
    lists conflicts among what the grader never decides), and «пн, 8:30» a certain 0."""
    from persona.grading.exact import ExactGrader as _Grader

    conflict = Question("c1", "When is the wedding?", "still open: 14 June or 21 June", ("conflict",), "ch", 1)
    grade = _Grader().grade(conflict, conflict.expected, "It's on 28 June.")
    assert not grade.certain and grade.decided_by == "doubt.conflict"
    meeting = Question("q1", "Когда у нас планёрка?", "понедельникам в 8:30", (), "ch", 1)
    for answer in ("В заметках: планёрка — пн, 8:30", "пн 8:30"):
        found = _Grader().grade(meeting, meeting.expected, answer)
        assert found.score == 10 and found.certain, (answer, found.reason)
    wrong_day = _Grader().grade(meeting, meeting.expected, "вт, 8:30")
    assert wrong_day.score == 0
    team = Question("q2", "When is our team meeting?", "Tuesday at 9:30", (), "ch", 1)
    assert _Grader().grade(team, team.expected, "notes: team meeting — tue, 9:30").score == 10
