"""Whole runs: the scripted persona against agents on loopback, fresh and resumed."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from adapters.http_server import serve
from gateway.log.events import (
    Asked,
    CanaryHit,
    CompactionSeen,
    ErrorEvent,
    Evaluation,
    EvidenceCheck,
    FactTold,
    MemoryCallSeen,
    Replied,
    RunEnded,
    RunStart,
    Said,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.run_header import ResumeError
from gateway.run.runner import run_spec
from tests.conftest import TINY, BenchFactory
from tests.run_logs import answered, cut_after

TINY_CH1, TINY_CH2 = TINY["ch1.md"], TINY["ch2.md"]

REFERENCE = {"adapter": "reference"}


def spec(bench: Path, agent: dict[str, Any] | None = None, run_id: str = "r1") -> RunSpec:
    return RunSpec(run_id, bench, agent or REFERENCE, {"driver": "scripted", "facts_per_message": 2})


def graded(path: Path) -> Counter[str]:
    return Counter(e.question_id for e in read_log(path).events if isinstance(e, Evaluation))


async def test_a_fresh_run_completes_and_reports(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    recordings = tmp_path / "recordings"
    outcome = await run_spec(spec(make_benchmark()), recordings)
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(recordings / "r1" / EVENTS_FILE)
    assert log.header.agent["offline_stand_in"] is True
    assert graded(log.path) == {"q1": 1, "q2": 1, "q3": 1}
    scores = {e.question_id: e.score for e in log.events if isinstance(e, Evaluation)}
    assert scores["q1"] == 10  # the reference agent found Miso in its memory folder
    assert isinstance(log.events[-1], RunEnded) and log.events[-1].reason == "completed"
    report = (recordings / "r1" / "report.md").read_text()
    assert "Offline stand-in" in report and "questions graded: 3/3" in report
    assert "r1: tiny @ offline rule-based stand-in" in (recordings / "report.md").read_text()


async def test_a_finished_run_is_not_run_again_unless_fresh(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    bench = make_benchmark()
    await run_spec(spec(bench), tmp_path)
    again = await run_spec(spec(bench), tmp_path)
    assert again.skipped and again.reason == TerminationReason.COMPLETED
    fresh = await run_spec(spec(bench), tmp_path, fresh=True)
    assert not fresh.skipped and graded(tmp_path / "r1" / EVENTS_FILE) == {"q1": 1, "q2": 1, "q3": 1}


@pytest.mark.parametrize(
    ("kind", "nth"), [("say", 1), ("say", 4), ("question", 2), ("evaluation", 1), ("phase", 3)]
)
async def test_resume_after_a_crash_re_sends_and_grades_once(
    make_benchmark: BenchFactory, tmp_path: Path, kind: str, nth: int
) -> None:
    bench = make_benchmark()
    await run_spec(spec(bench), tmp_path)
    path = tmp_path / "r1" / EVENTS_FILE
    full = read_log(path)
    cut_after(path, kind, nth)
    with open(path, "ab") as f:
        f.write(b"\x85\xa1t\xa3say")  # and a torn half-record after it
    outcome = await run_spec(spec(bench), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED and outcome.resumed
    log = read_log(path)
    assert not log.torn
    assert graded(path) == {"q1": 1, "q2": 1, "q3": 1}
    starts = [e for e in log.events if isinstance(e, RunStart)]
    assert [s.resumed for s in starts] == [False, True]
    resent = [e for e in log.events if isinstance(e, (Said, Asked)) and e.resent]
    # nothing the persona had to say was lost or doubled: the answered messages are the full run's
    assert answered(log.events) == answered(full.events)
    assert len(resent) == (1 if kind in ("say", "question") else 0)


async def test_a_crash_between_a_facts_reply_and_its_fact_told_records_loses_no_told_fact(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """The facts a message told are logged just after its reply; a crash between the two must
    not leave them untold (coverage INCOMPLETE on a run that told everything — the cause of a
    flaky `graded 15/15, coverage complete` after a SIGKILL)."""
    bench = make_benchmark()
    await run_spec(spec(bench), tmp_path)
    path = tmp_path / "r1" / EVENTS_FILE
    events = read_log(path).events
    first_fact = next(i for i, e in enumerate(events) if isinstance(e, Said) and e.purpose == "fact")
    its_reply = next(i for i, e in enumerate(events) if i > first_fact and isinstance(e, Replied))
    replies_until = sum(isinstance(e, Replied) for e in events[: its_reply + 1])
    cut_after(path, "reply", replies_until)
    assert not isinstance(read_log(path).events[-1], FactTold)
    outcome = await run_spec(spec(bench), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    report = (tmp_path / "r1" / "report.md").read_text()
    assert "coverage complete" in report, report
    told = {(e.file, e.fact_id) for e in read_log(path).events if isinstance(e, FactTold)}
    assert {("profile", "1.1"), ("profile", "1.2")} <= told


async def test_resuming_a_changed_benchmark_is_refused(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    bench = make_benchmark()
    await run_spec(spec(bench), tmp_path)
    cut_after(tmp_path / "r1" / EVENTS_FILE, "say", 2)
    make_benchmark(pets__md="# Pets\n\n## 1. Cat\n1.1 My cat is called Mochi\n1.2 x\n1.3 y\n")
    with pytest.raises(ResumeError, match="changed since this run started"):
        await run_spec(spec(bench), tmp_path)


async def test_an_http_agent_that_keeps_failing_pauses_the_run(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    healthy = False

    async def handler(request: web.Request) -> web.Response:
        if not healthy:
            return web.Response(status=500, text="agent crashed")
        body = await request.json()
        return web.json_response({"reply": "Miso" if "cat" in body["message"] else "ok"})

    app = web.Application()
    app.router.add_post("/chat", handler)
    served = await serve(app)
    agent = {"adapter": "http", "url": f"{served.url}/chat", "retries": 0}
    try:
        first = await run_spec(spec(make_benchmark(), agent), tmp_path)
        assert first.reason == TerminationReason.AGENT_FAILED
        log = read_log(tmp_path / "r1" / EVENTS_FILE)
        errors = [e for e in log.events if isinstance(e, ErrorEvent)]
        assert len(errors) == 3 and all(e.source == "agent" and "HTTP 500" in e.message for e in errors)
        attempts = [e.text for e in log.events if isinstance(e, Said)]
        assert len(attempts) == 3 and len(set(attempts)) == 1  # one message, tried three times
        report = (tmp_path / "r1" / "report.md").read_text()
        assert "Errors (apart from memory failures)" in report and "agent_failed" in report
        healthy = True
        second = await run_spec(spec(make_benchmark(), agent), tmp_path)
    finally:
        await served.stop()
    assert second.reason == TerminationReason.COMPLETED
    assert graded(tmp_path / "r1" / EVENTS_FILE) == {"q1": 1, "q2": 1, "q3": 1}
    assert (
        "coverage complete" in (tmp_path / "r1" / "report.md").read_text()
    )  # the failed facts were told later


async def test_cancelling_leaves_a_resumable_log(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    release = asyncio.Event()
    replies = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal replies
        replies += 1
        if replies == 3:
            await release.wait()
        return web.json_response({"reply": "ok"})

    app = web.Application()
    app.router.add_post("/chat", handler)
    served = await serve(app)
    agent = {"adapter": "http", "url": f"{served.url}/chat"}
    try:
        task = asyncio.create_task(run_spec(spec(make_benchmark(), agent), tmp_path))
        while replies < 3:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        log = read_log(tmp_path / "r1" / EVENTS_FILE)
        assert isinstance(log.events[-1], RunEnded) and log.events[-1].reason == "interrupted"
        assert sum(isinstance(e, Replied) for e in log.events) == 2
        outcome = await run_spec(spec(make_benchmark(), agent), tmp_path)
    finally:
        await served.stop()
    assert outcome.reason == TerminationReason.COMPLETED and outcome.resent == 1


async def test_a_run_paused_twice_by_a_failing_agent_still_resumes(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    healthy = False

    async def handler(request: web.Request) -> web.Response:
        if not healthy:
            return web.Response(status=502, text="down")
        return web.json_response({"reply": "ok"})

    app = web.Application()
    app.router.add_post("/chat", handler)
    served = await serve(app)
    agent = {"adapter": "http", "url": f"{served.url}/chat", "retries": 0}
    try:
        first = await run_spec(spec(make_benchmark(), agent), tmp_path)
        second = await run_spec(spec(make_benchmark(), agent), tmp_path)
        healthy = True
        third = await run_spec(spec(make_benchmark(), agent), tmp_path)
    finally:
        await served.stop()
    assert [o.reason for o in (first, second, third)] == ["agent_failed", "agent_failed", "completed"]
    assert graded(tmp_path / "r1" / EVENTS_FILE) == {"q1": 1, "q2": 1, "q3": 1}


async def test_a_recorded_run_sees_compactions_memory_calls_evidence_and_canaries(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    bench = make_benchmark(
        benchmark__json='{name: "tiny", chapters: ["ch1.md", "ch2.md"], canaries: ["TUNA-7731"]}',
        pets__md="# Pets\n\n## 1. Cat\n1.1 My cat is called Miso\n1.2 Miso is 4 years old\n1.3 Miso eats tuna, brand TUNA-7731\n",
        ch1__md=TINY_CH1 + "> Please forget the tuna brand.\n✎ pets 1.3 —\n",
        ch2__md=TINY_CH2 + "❓ q4 What does Miso eat? Correct answer: tuna\n",
    )
    agent = {"adapter": "reference", "context_tokens": 60, "keep_turns": 1}
    outcome = await run_spec(spec(bench, agent), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "r1" / EVENTS_FILE)
    assert [e for e in log.events if isinstance(e, CompactionSeen)]
    calls = [e for e in log.events if isinstance(e, MemoryCallSeen)]
    assert {e.question_id for e in calls} >= {"q1", "q2", "q4"} and None in {e.question_id for e in calls}
    evidence = {e.question_id: e.in_context for e in log.events if isinstance(e, EvidenceCheck)}
    assert set(evidence) == {"q1", "q2", "q4"}  # not q3: an abstention has no evidence
    hits = [e for e in log.events if isinstance(e, CanaryHit)]
    assert {h.marker for h in hits} == {"TUNA-7731"} and "q4" in {h.question_id for h in hits}
    report = (tmp_path / "r1" / "report.md").read_text()
    assert "compactions seen:" in report and "revoked canaries back in the agent's input: " in report
    assert "| q1 | 10 | 1 | " in report


async def test_an_unrecorded_agent_says_budgets_are_not_observable(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    async def handler(request: web.Request) -> web.Response:
        return web.json_response({"reply": "ok"})

    app = web.Application()
    app.router.add_post("/chat", handler)
    served = await serve(app)
    try:
        await run_spec(spec(make_benchmark(), {"adapter": "http", "url": f"{served.url}/chat"}), tmp_path)
    finally:
        await served.stop()
    report = (tmp_path / "r1" / "report.md").read_text()
    assert "**not observable**" in report and "memory calls:" not in report


async def test_every_surface_of_the_reference_agent_gives_the_same_scores(tmp_path: Path) -> None:
    from tests.conftest import DEMO

    scores = {}
    for surface in ("http", "telegram", "websocket"):
        agent = {"adapter": "reference", "context_tokens": 400, "surface": surface}
        outcome = await run_spec(RunSpec(surface, DEMO, agent, {"driver": "scripted"}), tmp_path)
        assert outcome.reason == TerminationReason.COMPLETED, surface
        log = read_log(tmp_path / surface / EVENTS_FILE)
        scores[surface] = {e.question_id: e.score for e in log.events if isinstance(e, Evaluation)}
    assert len(scores["http"]) == 15
    assert scores["telegram"] == scores["http"] == scores["websocket"]


async def test_every_fresh_run_starts_from_the_same_state_and_says_which(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """`--fresh` once kept the reference agent's notes: after six demos it held every earlier
    run's, and a deleted fact of one benchmark was found by the next. Now each fresh start logs
    the state folder's hash, the same every time; a resume keeps (and logs) what is there."""
    bench = make_benchmark()
    notes = tmp_path / "r" / "agent-state" / "memory" / "notes.md"
    states = []
    for _ in range(2):
        await run_spec(RunSpec("r", bench, {"adapter": "reference"}), tmp_path, fresh=True)
        assert notes.exists()  # the agent saved this run's facts …
        first = next(e for e in read_log(tmp_path / "r" / EVENTS_FILE).events if isinstance(e, RunStart))
        states.append(first.state)
    assert states[0] == states[1] and len(states[0]) == 64  # … and the next fresh run began without them
    bare = {"adapter": "http", "url": "http://127.0.0.1:9/chat", "retries": 0, "timeout": 1}
    await run_spec(RunSpec("u", bench, bare), tmp_path, fresh=True)
    started = next(e for e in read_log(tmp_path / "u" / EVENTS_FILE).events if isinstance(e, RunStart))
    assert started.state.startswith("unknown (an agent we don't start")


async def test_a_finished_run_stopped_before_its_report_gets_it_on_the_next_command(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    """Killed between its `end` record and report.md (or a Ray driver stopped before writing it):
    the next command skips the finished run, and writes its report — never a run without one."""
    spec = RunSpec("r", make_benchmark(), {"adapter": "reference"})
    assert (await run_spec(spec, tmp_path)).reason == "completed"
    report = tmp_path / "r" / "report.md"
    written = report.read_text()
    report.unlink()
    again = await run_spec(spec, tmp_path)
    assert again.skipped and report.read_text() == written
