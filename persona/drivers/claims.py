"""What the LLM persona claims, checked by the engine: it says which message asked a question
and what grade an answer deserves, and a real model leaks the answer in the question, asks two
questions at once, grades leniently or drifts into another language. Each check returns the
`Slip` to log (the report counts them, the viewer shows them), or None; the run goes on.
(That a fact marked told was said is checked where it is marked: `facts_mark_told`.)
"""

from __future__ import annotations

from persona.benchmark.model import Question
from persona.drivers.actions import Slip, SlipKind
from persona.grading.exact import ExactGrader, contains_expected
from persona.languages import detect_language
from persona.terms import key_terms, terms_match


def questions_in(questions: tuple[Question, ...], asked: set[str], text: str) -> list[Question]:
    """The questions of a phase that `text` asks: each quoted in full (in phase order), then,
    in a message that asks something (a "?"), each not yet `asked` with at least three
    quarters of its key terms there (most first). The first is the one the message is taken
    to ask. (Without the "?", a message telling "The flat has 72 square meters" was taken for
    the question "How many square meters does the flat have?", and the agent's "Noted." for
    its answer.)"""
    flat = " ".join(text.lower().split())
    quoted = [q for q in questions if " ".join(q.text.lower().split()) in flat]
    if "?" not in text and "？" not in text:
        return quoted
    said = key_terms(text)
    near: list[tuple[float, int, Question]] = []
    for q in questions:
        wanted = key_terms(q.text)
        if q.id in asked or not wanted or q in quoted:
            continue
        share = sum(any(terms_match(w, s) for s in said) for w in wanted) / len(wanted)
        if share >= 0.75:
            near.append((share, len(wanted), q))
    near.sort(key=lambda t: t[:2], reverse=True)
    return [*quoted, *(q for _, _, q in near)]


# a grade this far from the exact grader's certain one is disputed (a wrong answer graded 10)
DISPUTED_BY = 5.0
# a message shorter than this says too little to tell its language
LANGUAGE_LETTERS = 40
_GRADER = ExactGrader()


def leaked_answer(question: Question, message: str) -> Slip | None:
    """The message asking `question` holds its expected answer (and the question as written
    does not): the agent was told, not examined."""
    if question.abstain or question.deleted or not question.expected.strip():
        return None
    if contains_expected(question.expected, question.text) or not contains_expected(question.expected, message):
        return None
    return Slip(
        SlipKind.ANSWER_LEAKED,
        f"{question.id}: the message asking it holds its answer {question.expected!r}",
        question_id=question.id,
    )


def two_questions(asked: list[Question], message: str) -> Slip | None:
    """One message asked more than one exam question — two of them matched, and two question
    marks — so the answers can't be told apart. (One "?" is one question, however many
    questions share its words: «Как зовут моего мужа?» is not also «…моего бывшего мужа?».)"""
    if len({" ".join(q.text.lower().split()) for q in asked}) < 2 or message.count("?") < 2:
        return None
    return Slip(SlipKind.TWO_QUESTIONS, f"{', '.join(q.id for q in asked)} asked in one message: {message[:120]!r}")


def disputed_grade(question: Question, answer: str, score: float) -> Slip | None:
    """The persona's grade against the exact grader's, where that one is certain."""
    if not answer.strip():
        return None
    grade = _GRADER.grade(question, question.expected, answer)
    if not grade.certain or abs(grade.score - score) < DISPUTED_BY:
        return None
    return Slip(
        SlipKind.GRADE_DISPUTED,
        f"{question.id}: the persona graded {score:g}, the exact grader is certain of {grade.score:g} ({grade.reason})",
        question_id=question.id,
    )


def wrong_language(language: str, message: str, scripted: tuple[str, ...] = ()) -> Slip | None:
    """A message in another script than the benchmark's language (English and Russian are
    told apart by script; other languages are not checked). A `scripted` line of the phase is
    said as written, whatever its language (marathon-ru's Italian lesson)."""
    found = detect_language(message)
    if language not in ("en", "ru") or found.letters < LANGUAGE_LETTERS or found.language in ("", language):
        return None
    flat = " ".join(message.split())
    if any(" ".join(line.split()) in flat for line in scripted if line.strip()):
        return None
    return Slip(SlipKind.WRONG_LANGUAGE, f"a message in {found.language}, not {language}: {message[:120]!r}")
