"""An earlier question must not give away a later answer (docs/benchmarks.md): `check` warns
with both lines; the shipped benchmarks have none."""

from __future__ import annotations

from pathlib import Path

import pytest

from persona.benchmark.loader import load_benchmark
from tests.conftest import REPO, TINY, BenchFactory


@pytest.mark.parametrize(
    ("earlier", "later", "given"),
    [
        (
            "Please write to Mr Pickering about the tap. Correct answer: draft",
            "What is our landlord's name? Correct answer: Pickering",
            "pickering",
        ),
        (
            "Сколько я потратила на корм для Графа? Правильный ответ: 4000 рублей",
            "Как зовут собаку и какой она породы? Правильный ответ: Граф, немецкая овчарка",
            "граф",
        ),
    ],
)
def test_a_later_answer_in_an_earlier_question_is_warned_about_with_both_lines(
    make_benchmark: BenchFactory, earlier: str, later: str, given: str
) -> None:
    chapter = f"# Two\n\n## Exam\n```js\nawait bench.newSession();\n```\n❓ a1 {earlier}\n❓ a2 {later}\n"
    warnings = load_benchmark(make_benchmark(ch2__md=chapter)).warnings
    (warning,) = [w for w in warnings if "gives away" in w]
    assert "ch2.md:7: question a1 gives away the answer of a2" in warning and "ch2.md:8)" in warning
    assert warning.endswith(given)


def test_short_or_generic_words_are_no_giveaway(make_benchmark: BenchFactory) -> None:
    chapter = TINY["ch2.md"] + "❓ q4 How many days of leave have I left? Correct answer: 18 days\n"
    chapter += "❓ q5 Which wrist did I break? Correct answer: left\n❓ q6 What does he teach? Correct answer: chemistry\n"
    chapter = chapter.replace("What is my cat called?", "When is my next dental check-up?")
    assert not [w for w in load_benchmark(make_benchmark(ch2__md=chapter)).warnings if "gives away" in w]


@pytest.mark.parametrize("name", ["demo-en", "marathon-en", "marathon-ru"])
def test_no_shipped_benchmark_gives_an_answer_away(name: str) -> None:
    assert not [w for w in load_benchmark(REPO / "benchmarks" / name).warnings if "gives away" in w]


@pytest.mark.parametrize(
    ("update", "greeting", "warned"),
    [
        ("✎ pets 1.3 From March Miso eats salmon", "> Hello!", True),
        ("✎ pets 1.3 Miso eats salmon now", "> Hello!", False),  # no date it takes effect
        ("✎ pets 1.3 From March Miso eats salmon", "> Hello! Today is Monday 2 September.", False),  # dated
    ],
)
def test_now_over_an_update_dated_in_an_undated_story_is_warned_about(
    make_benchmark: BenchFactory, update: str, greeting: str, warned: bool
) -> None:
    ch1 = TINY["ch1.md"].replace("> Hello!", greeting) + update + "\n"
    ch2 = TINY["ch2.md"] + "❓ q9 [update] What does Miso eat now? Correct answer: salmon\n"
    warnings = [
        w for w in load_benchmark(make_benchmark(ch1__md=ch1, ch2__md=ch2)).warnings if "asks about now" in w
    ]
    assert bool(warnings) is warned
    if warned:
        assert "ch2.md:" in warnings[0] and "question q9" in warnings[0] and "ch1.md:" in warnings[0]
        assert "'From March'" in warnings[0]


@pytest.mark.parametrize("name", ["demo-en", "marathon-en", "marathon-ru"])
def test_no_shipped_benchmark_asks_about_now_over_a_dated_update(name: str) -> None:
    assert not [w for w in load_benchmark(REPO / "benchmarks" / name).warnings if "asks about now" in w]


def test_the_indexed_check_finds_exactly_what_comparing_every_pair_finds() -> None:
    """The give-away check reads each question once into an index (4,000 questions took 257 s
    pair by pair; bench/big_benchmarks.py): on random benchmarks it must warn about exactly the
    pairs the plain every-pair comparison warns about, in the same order."""
    import random
    from pathlib import Path

    from persona.benchmark import lint
    from persona.benchmark.model import Question
    from persona.terms import key_terms, split_items

    def every_pair(questions: list[Question]) -> list[tuple[str, str, list[str]]]:
        out = []
        for j, later in enumerate(questions):
            if later.abstain or later.deleted:
                continue
            items = [t for item in split_items(later.expected) if (t := lint._telling_words(item))]
            for earlier in questions[:j]:
                said = key_terms(earlier.text)
                given = [
                    t
                    for terms in items
                    if all(any(lint._same_stem(t, s) for s in said) for t in terms)
                    for t in terms
                ]
                if given:
                    out.append((earlier.id, later.id, list(dict.fromkeys(given))))
        return out

    words = [
        "Pickering",
        "Miso",
        "Графа",
        "Граф",
        "salmon",
        "salmons",
        "garden",
        "gardener",
        "Porto",
        "Ife",
        "river",
    ]
    rng = random.Random(5)
    for _ in range(40):
        questions = [
            Question(
                f"q{n}",
                " ".join(rng.choices(words, k=3)) + "?",
                ", ".join(rng.sample(words, rng.randint(1, 2))),
                ("abstain",) if rng.random() < 0.1 else (),
                "ch.md",
                n,
            )
            for n in range(12)
        ]
        warned = lint.giveaways(questions, Path("b"))
        expected = every_pair(questions)
        assert len(warned) == len(expected)
        for text, (earlier, later, given) in zip(warned, expected, strict=True):
            assert f"question {earlier} gives away the answer of {later} " in text and text.endswith(
                ", ".join(given)
            )


def _in_context(bench: Path) -> list[str]:
    return [w for w in load_benchmark(bench).warnings if "tests the agent's context" in w]


def test_an_exam_right_after_its_answers_with_no_break_is_warned_about(make_benchmark: BenchFactory) -> None:
    """The phase before the exam told the cat's name (a facts file) and its new age (an
    update), and no new session or compaction came between: both questions test the context."""
    ch2 = TINY["ch2.md"].replace("```js\nawait bench.newSession();\n```\n", "")
    warnings = _in_context(make_benchmark(ch2__md=ch2))
    assert len(warnings) == 2, warnings
    q1, q2 = warnings
    assert "ch2.md:4: question q1" in q1 and "pets.md:4 said its answer" in q1  # "My cat is called Miso"
    assert "ch2.md:5: question q2" in q2 and "ch1.md:13 said its answer" in q2  # "Miso turned 5 years old"
    assert "await bench.newSession();" in q1


NO_PETS_TOLD = TINY["ch1.md"].split("## Pets")[0]


@pytest.mark.parametrize(
    ("ch1", "ch2"),
    [
        (TINY["ch1.md"], TINY["ch2.md"]),  # a new session before the exam
        (TINY["ch1.md"], TINY["ch2.md"].replace("bench.newSession()", "bench.compact()")),  # a compaction
        (NO_PETS_TOLD, "# Two\n\n## Exam\n> My cat is Miso.\n❓ q1 What is my cat called? Correct answer: Miso\n"),
    ],
    ids=["new-session", "compaction", "in-phase-check"],
)
def test_an_exam_after_a_break_or_an_in_phase_check_is_not_warned_about(
    make_benchmark: BenchFactory, ch1: str, ch2: str
) -> None:
    assert not _in_context(make_benchmark(ch1__md=ch1, ch2__md=ch2))


@pytest.mark.parametrize("name", ["demo-en", "marathon-en", "marathon-ru"])
def test_no_shipped_exam_follows_its_answers_in_context(name: str) -> None:
    assert not _in_context(REPO / "benchmarks" / name)
