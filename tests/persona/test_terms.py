"""What the claim check reads as said (`persona.terms.missing_details`): the numbers, codes and
names of a fact, in whatever words the persona chose for them."""

from __future__ import annotations

import pytest

from persona.terms import missing_details


@pytest.mark.parametrize(
    ("fact", "said"),
    [
        ("I go swimming three times a week", "I swim thrice weekly"),  # issue 45 item 8
        ("I go swimming twice a week", "I swim two times a week"),
        ("Я плаваю три раза в неделю", "Я плаваю трижды в неделю"),
        ("Я плаваю трижды в неделю", "Плаваю три раза в неделю"),
        ("Я бегаю два раза в неделю", "Бегаю дважды в неделю"),
    ],
)
def test_a_count_said_as_an_adverb_is_said(fact: str, said: str) -> None:
    assert missing_details(fact, said) == []


@pytest.mark.parametrize(
    ("fact", "said", "missing"),
    [
        ("I go swimming three times a week", "I swim twice a week", ["3"]),
        ("Я плаваю три раза в неделю", "Я плаваю дважды в неделю", ["3"]),
        ("My cat Pixel is 4", "My cat is four", ["Pixel"]),
    ],
)
def test_a_count_said_wrong_is_still_missing(fact: str, said: str, missing: list[str]) -> None:
    assert missing_details(fact, said) == missing
