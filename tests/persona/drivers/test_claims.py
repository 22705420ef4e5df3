"""The persona's claims, checked by the engine: each mistake a weak model makes — the fake
persona model's mistake modes, over loopback through the official SDK — is caught as a
`persona_slip` that the report lists; the run goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.http_server import ServedApp
from fakes.persona_model import FakePersonaModel
from gateway.log.events import (
    PersonaSlip,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.loader import load_benchmark
from persona.drivers.claims import questions_in, two_questions
from tests.conftest import DEMO
from tests.persona.drivers.settings import persona


@pytest.mark.parametrize(
    ("mistake", "kind", "says"),
    [
        ("leak", "answer_leaked", "q1: the message asking it holds its answer '34'"),
        ("lenient", "grade_disputed", "the persona graded 10, the exact grader is certain of 0"),
        ("misnumber", "fact_not_said", "profile:1.1 marked told, but"),
        ("wrong_language", "wrong_language", "a message in ru, not en"),
        ("mark_untold", "fact_not_said", "marked told, but"),
        ("two_questions", "two_questions", "asked in one message"),
        ("beside_failing", "message_dropped", "marked told on a message that was never sent (a tool call beside it failed)"),
    ],
)
async def test_each_mistake_of_a_weak_model_is_a_slip_in_the_report(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path, mistake: str, kind: str, says: str
) -> None:
    model, served = fake
    model.mistake = mistake
    outcome = await run_spec(RunSpec("c", DEMO, {"adapter": "reference"}, persona("anthropic", served.url)), tmp_path)
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


async def test_a_question_on_a_fact_the_persona_never_said_is_unscored_not_forgotten(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path
) -> None:
    """The persona told the age as 35 (it is 34) and marked the fact told: the agent's "35"
    is no forgetting. The question leaves the scores, listed as unscored (persona)."""
    from gateway.report.recordings import load_run

    model, served = fake
    model.mistake = "misnumber"
    await run_spec(RunSpec("c", DEMO, {"adapter": "reference"}, persona("anthropic", served.url)), tmp_path)
    summary = load_run(tmp_path / "c").summary
    assert "q1" in summary.unscored_persona and "q1" not in summary.evaluations
    assert "profile:1.1" in summary.unscored_persona["q1"]  # (each batch's first number was told wrong)
    assert len(summary.evaluations) + len(summary.unscored_persona) == 15
    report = (tmp_path / "c" / "report.md").read_text()
    assert f"### Unscored (persona): {len(summary.unscored_persona)} — left out of the scores, not forgotten" in report
    assert "- q1: its answer is in profile:1.1" in report
    # only a question whose answer holds a detail never said is unscored: one on the same fact's
    # other details, said right, still counts (issue 45 item 4: "Pixel" unscored by the cat's age)
    questions = {q.id: q for q in load_benchmark(DEMO).questions}
    missing = [m for s in summary.slips if s.kind == "fact_not_said" for m in s.missing]
    assert missing and all(
        any(m in questions[qid].expected for m in missing) for qid in summary.unscored_persona
    ), (missing, {qid: questions[qid].expected for qid in summary.unscored_persona})


async def test_reasoning_written_into_a_message_never_reaches_the_agent(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path
) -> None:
    from gateway.log.events import Asked, Said

    model, served = fake
    model.mistake = "reasoning"
    outcome = await run_spec(RunSpec("c", DEMO, {"adapter": "reference"}, persona("anthropic", served.url)), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    sent = [e.text for e in read_log(tmp_path / "c" / EVENTS_FILE).events if isinstance(e, (Said, Asked))]
    assert sent and not [t for t in sent if "thinking" in t.lower()]


async def test_a_leaked_answer_is_unscored_and_a_disputed_grade_unresolved(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path
) -> None:
    """Issue 45 item 3. Before: 14 `answer_leaked` slips yet 15/15 graded and the mean unchanged;
    a lenient persona's disputed grades standing (10.00 instead of 8.67)."""
    from gateway.report.recordings import load_run

    model, served = fake
    model.mistake = "leak"
    await run_spec(RunSpec("leak", DEMO, {"adapter": "reference"}, persona("anthropic", served.url)), tmp_path)
    leaked = load_run(tmp_path / "leak").summary
    slips = {s.question_id for s in leaked.slips if s.kind == "answer_leaked"}
    assert slips and slips <= set(leaked.unscored_persona) and not slips & set(leaked.evaluations)
    assert all("gave its answer away" in leaked.unscored_persona[q] for q in slips)
    model.mistake = "lenient"
    await run_spec(RunSpec("lenient", DEMO, {"adapter": "reference"}, persona("anthropic", served.url)), tmp_path)
    lenient = load_run(tmp_path / "lenient").summary
    disputed = {s.question_id for s in lenient.slips if s.kind == "grade_disputed"}
    assert disputed and all(not lenient.evaluations[q].certain for q in disputed)
    assert lenient.mean is None and lenient.mean_range is not None  # a range, never the lenient 10.00
    low, high = lenient.mean_range
    assert low < 8.67 < high and "unresolved" in lenient.describe_mean()  # the clean run's mean, within


async def test_facts_marked_told_on_a_message_never_sent_stay_untold_until_one_the_agent_received(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path
) -> None:
    """Issue 45 item 1: the persona writes a batch of facts beside its `facts_mark_told` and a
    tool call that fails, so the message is dropped. Before, the facts counted as told on the
    dropped text (every profile fact, no slip, while the agent had heard none of them). Now a
    fact is told only once a message the agent received said it: the model is told its message
    was not sent, says it again, and the run grades as a clean one."""
    from gateway.cli.invariants import telling_problems
    from gateway.log.events import FactTold, Replied, Said
    from gateway.report.recordings import load_run

    model, served = fake
    await run_spec(RunSpec("clean", DEMO, {"adapter": "reference"}, persona("anthropic", served.url)), tmp_path)
    model.mistake = "beside_failing"
    await run_spec(RunSpec("c", DEMO, {"adapter": "reference"}, persona("anthropic", served.url)), tmp_path)
    run = load_run(tmp_path / "c")
    events = run.log.events
    dropped = [e for e in events if isinstance(e, PersonaSlip) and e.kind == "message_dropped"]
    batches = sum(-(-len(ff.facts) // 3) for ff in run.benchmark.facts.values())
    assert len(dropped) == batches == 14  # each batch of three facts, the first time it was written
    assert telling_problems(events, [], run.benchmark) == []
    # each fact counted told after the agent answered the message that told it
    first_told = {f"{e.file}:{e.fact_id}": e.seq for e in reversed(events) if isinstance(e, FactTold)}
    for key, seq in first_told.items():
        file, _, fid = key.partition(":")
        value = run.benchmark.facts[file].facts[fid].text.rstrip(".")
        said = next(e.seq for e in events if isinstance(e, Said) and value in e.text)
        assert any(isinstance(e, Replied) and said < e.seq < seq for e in events), key
    clean = load_run(tmp_path / "clean").summary
    assert run.summary.mean == clean.mean and run.summary.told_facts == clean.told_facts
    assert not run.summary.unscored_persona


def test_the_told_invariant_names_a_fact_counted_told_before_any_message_said_it() -> None:
    """`told_delivered` (marathon verify) on a log where the LLM persona's mark came before the
    message, and the message was never answered."""
    from gateway.cli.invariants import telling_problems
    from gateway.log.events import FactsMarked, FactTold, Replied, Said

    benchmark = load_benchmark(DEMO)
    fid, fact = next(iter(benchmark.facts["profile"].facts.items()))
    marked = [FactsMarked(fact_ids=[f"profile:{fid}"]), FactTold(file="profile", fact_id=fid)]
    message = Said(text=f"About me: {fact.text}", purpose="persona")
    events = [*marked, message, Replied(text="Noted.")]
    for i, e in enumerate(events):
        e.seq = i
    assert [p.split(" counted")[0] for p in telling_problems(events, [], benchmark)] == [f"profile:{fid}"]
    never_answered = [message, *marked]
    assert telling_problems(never_answered, [], benchmark)
    answered = [message, Replied(text="Noted."), *marked]
    assert telling_problems(answered, [], benchmark) == []


async def test_an_update_recorded_but_never_told_is_a_slip_and_its_questions_are_unscored(
    fake: tuple[FakePersonaModel, ServedApp], tmp_path: Path
) -> None:
    """Issue 45 item 2: `facts_edit` with no message carrying the new value. Before: no slip,
    coverage complete, and the questions on the new values graded 0 (6.67 against the clean
    8.67) — the agent charged with forgetting what it was never told. Now each unsaid update is
    an `update_not_said` slip and its questions are unscored (persona); every other question
    grades as in the clean run."""
    from gateway.report.recordings import load_run

    model, served = fake
    await run_spec(RunSpec("clean", DEMO, {"adapter": "reference"}, persona("anthropic", served.url)), tmp_path)
    model.mistake = "untold_update"
    outcome = await run_spec(RunSpec("c", DEMO, {"adapter": "reference"}, persona("anthropic", served.url)), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    summary = load_run(tmp_path / "c").summary
    clean = load_run(tmp_path / "clean").summary
    slips = [s for s in summary.slips if s.kind == "update_not_said"]
    assert sorted(s.fact for s in slips) == ["home:1.3", "home:2.2", "profile:3.1"]  # 3.1 changed twice: its last value
    questions = {q.id: q for q in load_benchmark(DEMO).questions}
    new_values = ("1,915", "28 May", "1,100")
    on_updates = {qid for qid, q in questions.items() if any(v in q.expected for v in new_values)}
    assert on_updates and set(summary.unscored_persona) == on_updates, summary.unscored_persona
    assert all("never said" in summary.unscored_persona[q] for q in on_updates)
    assert {q: e.score for q, e in summary.evaluations.items()} == {
        q: e.score for q, e in clean.evaluations.items() if q not in on_updates
    }
    report = (tmp_path / "c" / "report.md").read_text()
    assert f"### Unscored (persona): {len(on_updates)}" in report and "- update_not_said: " in report
