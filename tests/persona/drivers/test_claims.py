"""The persona's claims, checked by the engine: each mistake a weak model makes — the fake
persona model's mistake modes, over loopback through the official SDK — is caught as a
`persona_slip` that the report lists; the run goes on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.http_server import ServedApp, serve
from fakes.persona_model import FakePersonaModel
from gateway.log.events import PersonaSlip, TerminationReason
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.loader import load_benchmark
from persona.drivers.claims import questions_in, two_questions
from tests.conftest import DEMO


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[FakePersonaModel, ServedApp]]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = FakePersonaModel()
    served = await serve(model.app())
    yield model, served
    await served.stop()


@pytest.mark.parametrize(
    ("mistake", "kind", "says"),
    [
        ("leak", "answer_leaked", "q1: the message asking it holds its answer '34'"),
        ("lenient", "grade_disputed", "the persona graded 10, the exact grader is certain of 0"),
        ("misnumber", "fact_not_said", "profile:1.1 marked told, but"),
        ("wrong_language", "wrong_language", "a message in ru, not en"),
    ],
)
async def test_each_mistake_of_a_weak_model_is_a_slip_in_the_report(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path, mistake: str, kind: str, says: str
) -> None:
    model, served = fake
    model.mistake = mistake
    persona = {"driver": "anthropic:fake-persona", "base_url": served.url}
    outcome = await run_spec(RunSpec("c", DEMO, {"adapter": "reference"}, persona), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED  # a slip is logged; the run goes on
    slips = [e for e in read_log(tmp_path / "c" / EVENTS_FILE).events if isinstance(e, PersonaSlip)]
    assert {s.kind for s in slips} == {kind}, [(s.kind, s.detail[:80]) for s in slips]
    assert any(says in s.detail for s in slips), [s.detail for s in slips]
    report = (tmp_path / "c" / "report.md").read_text()
    assert f"### Persona slips: {len(slips)}" in report and f"- {kind}: " in report


def test_two_questions_in_one_message_are_caught_and_one_question_is_not() -> None:
    exam = next(p for p in load_benchmark(DEMO).phases if p.title == "Exam")
    both = "How old am I? And what is the name of our cat?"
    asked = questions_in(exam.questions, set(), both)
    assert [q.id for q in asked] == ["q1", "q9"]
    slip = two_questions(asked, both)
    assert slip is not None and slip.kind == "two_questions" and "q1, q9" in slip.detail
    one = "How old am I?"
    assert two_questions(questions_in(exam.questions, set(), one), one) is None
    told = "By the way: the name of our cat is Pixel."  # no question mark: a fact, never a question
    assert questions_in(exam.questions, set(), told) == []
