"""`marathon replay`: another agent gets the recorded persona side word for word, graded anew."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from aiohttp import web

from adapters.http_server import serve
from fakes.persona_model import FakePersonaModel
from gateway.log.events import (
    Asked,
    Evaluation,
    PhaseEntered,
    Said,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.report.recordings import load_run
from gateway.run.config import RunSpec
from gateway.run.replay import ReplayDriver
from gateway.run.runner import run_spec
from persona.benchmark.ladder import apply_rung
from persona.benchmark.loader import load_benchmark
from persona.drivers.actions import AgentReply, Ask, Evaluate, Finish, Say
from tests.conftest import DEMO, TINY, BenchFactory
from tests.marathon_cli import marathon


def persona_side(path: Path) -> list[tuple[str, str]]:
    return [
        (e.type, e.text)
        for e in read_log(path / EVENTS_FILE).events
        if isinstance(e, Said | Asked) and not e.resent
    ]


async def test_a_replay_sends_the_same_messages_and_grades_the_new_answers(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    calls = 0

    async def forgetful(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        if calls == 2:  # one failure: the recorded persona sends that message twice
            return web.json_response({"error": "busy"}, status=500)
        return web.json_response({"reply": "I don't know, you never told me."})

    app = web.Application()
    app.router.add_post("/chat", forgetful)
    served = await serve(app)
    bench = make_benchmark()
    try:
        agent = {"adapter": "http", "url": f"{served.url}/chat", "retries": 0}
        await run_spec(RunSpec("orig", bench, agent, {"driver": "scripted"}), tmp_path)
    finally:
        await served.stop()
    recorded = persona_side(tmp_path / "orig")
    assert recorded[1] == recorded[2] == ("say", "Hello!")  # sent again after the 500
    assert any("search your memory" in t for _, t in recorded)  # the forgetful agent was nudged
    result = marathon("replay", str(tmp_path / "orig"), "--agent", "reference", cwd=tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    replayed = persona_side(tmp_path / "orig.replay-reference")
    assert replayed == recorded[:1] + recorded[2:]  # word for word; the message the agent failed on once
    header = read_log(tmp_path / "orig.replay-reference" / EVENTS_FILE).header
    assert header.persona["driver"] == "replay" and header.meta == {"replay_of": "orig"}
    scores = {
        e.question_id: (e.score, e.attempts)
        for e in read_log(tmp_path / "orig.replay-reference" / EVENTS_FILE).events
        if isinstance(e, Evaluation)
    }
    assert scores["q1"] == (10, 1)  # the reference agent knew at once; the replayed nudge doesn't count
    assert set(scores) == {"q1", "q2", "q3"}


async def test_a_replay_of_a_rung_plays_the_same_distractors(tmp_path: Path) -> None:
    agent = {"adapter": "reference", "context_tokens": 400}
    outcome = await run_spec(RunSpec("lad", DEMO, agent, {"driver": "scripted"}, "s1"), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    result = marathon("replay", str(tmp_path / "lad"), "--agent", "reference", "--id", "again", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert persona_side(tmp_path / "again") == persona_side(tmp_path / "lad")
    assert read_log(tmp_path / "again" / EVENTS_FILE).header.benchmark["rung"] == "s1"


async def test_one_llm_persona_recording_plays_a_whole_ladder_with_the_same_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = FakePersonaModel()
    served = await serve(model.app())
    try:
        llm = {"driver": "anthropic:fake-persona", "base_url": served.url}
        spec = RunSpec("llm", DEMO, {"adapter": "reference"}, llm, "s1")
        assert (await run_spec(spec, tmp_path)).reason == TerminationReason.COMPLETED
    finally:
        await served.stop()  # the replays below call no persona model
    result = await asyncio.to_thread(
        marathon,
        "replay",
        str(tmp_path / "llm"),
        "--agent",
        "reference",
        "--rung",
        "s0",
        "--rung",
        "s2",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    recorded = load_run(tmp_path / "llm")
    replays = {rung: load_run(tmp_path / f"llm.replay-reference.{rung}") for rung in ("s0", "s2")}
    for rung, run in replays.items():
        assert run.header.benchmark["rung"] == rung
        assert run.evidence_hash == recorded.evidence_hash  # the LLM's wording, on every rung
        assert len(run.summary.evaluations) == 15
        assert [e.index for e in run.log.events if isinstance(e, PhaseEntered)] == list(
            range(len(run.benchmark.phases))
        )
    told = [e.text for e in replays["s2"].log.events if isinstance(e, Said) and e.purpose == "distractor"]
    s2 = apply_rung(load_benchmark(DEMO), "s2")
    assert len(replays["s2"].header.benchmark["distractors"]) == 8 == len(s2.distractors)
    assert told == [u.text for p in s2.phases if p.distractor for u in p.items]  # the s2 rung's own
    assert not [e for e in replays["s0"].log.events if isinstance(e, Said) and e.purpose == "distractor"]


def test_a_recording_of_a_changed_benchmark_is_refused_before_the_replay_starts(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    bench = make_benchmark()
    asyncio.run(run_spec(RunSpec("orig", bench, {"adapter": "reference"}), tmp_path))
    make_benchmark(pets__md=TINY["pets.md"].replace("tuna", "chicken"))
    result = marathon("replay", str(tmp_path / "orig"), "--agent", "reference", cwd=tmp_path)
    assert result.returncode == 1
    assert "recorded on another version of tiny" in result.stderr
    assert not (tmp_path / "orig.replay-reference").exists()


def test_a_recording_that_did_not_complete_is_refused(tmp_path: Path, make_benchmark: BenchFactory) -> None:
    dead = {"adapter": "http", "url": "http://127.0.0.1:9/chat", "retries": 0, "timeout": 0.5}
    outcome = asyncio.run(run_spec(RunSpec("orig", make_benchmark(), dead), tmp_path))
    assert outcome.reason == TerminationReason.AGENT_FAILED
    result = marathon("replay", str(tmp_path / "orig"), "--agent", "reference", cwd=tmp_path)
    assert result.returncode == 1
    assert "the recorded run did not complete (agent_failed)" in result.stderr
    assert not (tmp_path / "orig.replay-reference").exists()


async def test_a_replay_of_a_resumed_run_sends_the_message_it_re_sent_once(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """Stopped while a message was with the agent, the run re-sent it on resume (`resent`): the
    replay must send it once — not drop it, which left a question unasked or facts untold."""
    calls = 0
    stuck = asyncio.Event()
    released = asyncio.Event()  # set before the server stops: it would wait a minute for the handler

    async def chat(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        text = (await request.json())["message"]
        if calls == 3 and not stuck.is_set():
            stuck.set()
            await released.wait()  # no answer while the run is stopped meanwhile
        return web.json_response({"reply": "Miso" if "cat" in text else "5" if "old" in text else "Noted."})

    app = web.Application()
    app.router.add_post("/chat", chat)
    served = await serve(app)
    bench = make_benchmark()
    agent = {"adapter": "http", "url": f"{served.url}/chat", "timeout": 60}
    try:
        first = asyncio.create_task(run_spec(RunSpec("orig", bench, agent, {"driver": "scripted"}), tmp_path))
        await asyncio.wait_for(stuck.wait(), 30)
        first.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first
        resumed = await run_spec(RunSpec("orig", bench, agent, {"driver": "scripted"}), tmp_path)
    finally:
        released.set()
        await served.stop()
    assert resumed.reason == TerminationReason.COMPLETED and resumed.resent == 1
    result = marathon("replay", str(tmp_path / "orig"), "--agent", "reference", cwd=tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    summary = load_run(tmp_path / "orig.replay-reference").summary
    assert summary.coverage_complete and set(summary.evaluations) == {"q1", "q2", "q3"}
    sent = [t for _, t in persona_side(tmp_path / "orig.replay-reference")]
    assert len(sent) == len(set(sent)) == len({t for _, t in persona_side(tmp_path / "orig")})


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        ("Mochi.", (0.0, 1, True, (0.0, 0.0))),  # an answer: the recorded nudge's reply doesn't count
        # a claim beside what may be the answer: which try counts is open, 0 (first) … 5 (nudged)
        ("Mochi — though I never saved her birthday.", (0.0, 1, False, (0.0, 5.0))),
        ("You never told me her name.", (5.0, 2, True, (5.0, 5.0))),  # a claim: the nudged try ×0.5
    ],
)
async def test_a_replay_reads_the_retry_rule_on_the_replayed_agents_replies(
    make_benchmark: BenchFactory, tmp_path: Path, first: str, expected: tuple[float, int, bool, tuple[float, float]]
) -> None:
    """The recording nudged q1 (its agent said it was never told) and not q2; the replayed agent
    is graded by the same rule: a recorded nudge after an answer doesn't count, and where the
    rule would nudge but the recording has none (q2), the grade is unresolved, 0 … 5."""

    async def recorded_agent(request: web.Request) -> web.Response:
        text = (await request.json())["message"]
        if "search your memory" in text:
            return web.json_response({"reply": "Miso."})
        if "cat called" in text:
            return web.json_response({"reply": "You never told me."})
        return web.json_response({"reply": "Miso is 5." if "How old" in text else "Noted."})

    app = web.Application()
    app.router.add_post("/chat", recorded_agent)
    served = await serve(app)
    bench = make_benchmark()
    try:
        await run_spec(RunSpec("orig", bench, {"adapter": "http", "url": f"{served.url}/chat"}), tmp_path)
    finally:
        await served.stop()
    driver = ReplayDriver(tmp_path / "orig", load_benchmark(bench))
    grades: dict[str, Evaluate] = {}
    reply: AgentReply | None = None
    while not isinstance(action := await driver.next_action(reply), Finish):
        reply = None
        if isinstance(action, Ask):
            answers = {"q1": first, "q2": "No idea, you never told me.", "q3": "You never told me about a dog."}
            reply = AgentReply(answers[action.question_id])
        elif isinstance(action, Say):
            reply = AgentReply("Miso." if action.purpose == "nudge" else "Noted.")
        elif isinstance(action, Evaluate):
            grades[action.question_id] = action
    q1 = grades["q1"]
    bounds = (q1.score, q1.score) if q1.certain else (q1.low, q1.high)
    assert (q1.score, q1.attempts, q1.certain, bounds) == expected, q1.reason
    assert not grades["q2"].certain and (grades["q2"].low, grades["q2"].high) == (0.0, 5.0)
    assert "the recording has no nudge here" in grades["q2"].reason
