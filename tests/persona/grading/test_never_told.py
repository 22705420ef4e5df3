from __future__ import annotations

from pathlib import Path

import json5
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


CORPUS = Path(__file__).parent / "corpus" / "never_told.json5"


@pytest.mark.parametrize("language", ["en", "ru"])
def test_on_a_corpus_of_real_agent_style_replies_recall_is_high_and_false_nudges_rare(language: str) -> None:
    """Labelled replies in the style agents use (markdown, emoji, hedges; answers that hold a
    "don't" next to the fact). The phrasings were tuned on this corpus, so these are upper
    bounds; the floors keep a later change from quietly making the retry rule worse."""
    replies = json5.loads(CORPUS.read_text(encoding="utf-8"))[language]
    told = [r["text"] for r in replies if r["never_told"]]
    answered = [r["text"] for r in replies if not r["never_told"]]
    assert len(told) >= 40 and len(answered) >= 40
    missed = [t for t in told if not says_never_told(t)]
    false = [t for t in answered if says_never_told(t)]
    assert len(missed) / len(told) <= 0.05, missed
    assert len(false) / len(answered) <= 0.05, false


@pytest.mark.parametrize(
    "answer",
    [
        "I don't have to look that up: it's 252 km.",
        "You haven't told your sister yet, but the party is on Friday.",
        "Ты написал: «я не помню, когда у меня отпуск», но потом уточнил — с 3 по 17 июля.",
    ],
)
def test_an_answer_next_to_a_negation_is_an_answer(answer: str) -> None:
    assert not says_never_told(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "You told me the company pays for it, but never the price.",
        "I'm drawing a blank on that one.",
        "I only know her as Dr Haddad — no first name, sorry.",
        "Телефона дяди Толи у меня нет. Могу сохранить, если продиктуете.",
        "Возраст Наташи мне неизвестен.",
        "Вы говорили, что у Сергея трое детей, а сколько им лет — нет.",
        "Не имею ни малейшего представления.",
    ],
)
def test_claims_with_what_it_does_know_beside_them(answer: str) -> None:
    assert says_never_told(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "No record of a dog's name — maybe Biscuit?",
        "I don't know for sure — probably Thursday?",
        "Не помню, простите… Елена Викторовна Шубина?",
    ],
)
def test_a_guess_after_a_denial_is_an_answer(answer: str) -> None:
    assert not says_never_told(answer)
