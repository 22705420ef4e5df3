from __future__ import annotations

import pytest

from persona.grading.never_told import says_never_told


@pytest.mark.parametrize(
    "answer",
    [
        "You never told me about that.",
        "You haven't mentioned your dog.",
        "I don't have any record of your rent.",
        "I couldn't find anything about it in my notes.",
        "I have no information about your sister.",
        "Вы мне не говорили об этом.",
        "Ты не рассказывала про собаку.",
        "Не знаю, какой у вас рекорд.",
        "У меня нет информации об этом.",
        "Ничего не нашёл в памяти.",
    ],
)
def test_detects_never_told(answer: str) -> None:
    assert says_never_told(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "Your cat is called Pixel.",
        "You told me your rent is 1,915 euros.",
        "Ваш кот — Босс, вы говорили об этом вчера.",
        "Your flight is LH1173.",
    ],
)
def test_ordinary_answers_are_not_never_told(answer: str) -> None:
    assert not says_never_told(answer)
