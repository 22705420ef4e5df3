"""A run whose grader was not sure of some answers: no report, console line or viewer states
one mean over them — the range (all unresolved wrong … all right) and the list, and how to
resolve them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp import web

from adapters.http_server import serve
from fakes.persona_model import FakePersonaModel
from gateway.log.events import Evaluation, PersonaTurn
from gateway.log.runlog import EVENTS_FILE, RunLog, read_log
from gateway.report.recordings import load_run
from gateway.run.config import RunSpec, load_config
from gateway.run.runner import run_spec
from gateway.viewer.app import make_app
from tests.conftest import BenchFactory
from tests.gateway.viewer.test_viewer import get


async def test_unresolved_grades_give_a_range_and_a_list(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    async def chat(request: web.Request) -> web.Response:
        text = (await request.json())["message"]
        if "cat called" in text:
            return web.json_response({"reply": "Miso, I think — or was it Mochi?"})  # a hedge: not sure
        if "How old" in text:
            return web.json_response({"reply": "Miso is 5."})
        return web.json_response({"reply": "Noted."})

    app = web.Application()
    app.router.add_post("/chat", chat)
    served = await serve(app)
    try:
        await run_spec(
            RunSpec("u", make_benchmark(), {"adapter": "http", "url": f"{served.url}/chat"}), tmp_path
        )
    finally:
        await served.stop()
    log = read_log(tmp_path / "u" / EVENTS_FILE)
    grades = {e.question_id: e for e in log.events if isinstance(e, Evaluation)}
    assert not grades["q1"].certain and "not sure" in grades["q1"].reason
    assert grades["q2"].certain and grades["q2"].score == 10
    summary = load_run(tmp_path / "u").summary
    assert summary.mean is None and summary.mean_range is not None
    low, high = summary.mean_range
    assert low < high
    report = (tmp_path / "u" / "report.md").read_text()
    assert "**mean score: between" in report and "1 unresolved" in report and ": q1;" in report
    assert "marathon rescore RUN --grader" in report
    viewer = await serve(make_app(tmp_path))
    try:
        _, runs = await get(f"{viewer.url}/api/runs")
        assert isinstance(runs, dict)
        (run,) = runs["runs"]
        assert (
            run["mean"] is None
            and run["unresolved"] == ["q1"]
            and run["mean_range"][0] < run["mean_range"][1]
        )
    finally:
        await viewer.stop()


async def _judged_run(
    benchmark: Path, tmp_path: Path, model: FakePersonaModel, first: str, later: str
) -> tuple[RunLog, Evaluation]:
    """A scripted run with `grading: {judge: …}` on the loopback fake provider; the agent
    answers "What is my cat called?" with `first`, then (after a nudge) with `later`."""
    provider = await serve(model.app())
    asked: list[str] = []

    async def chat(request: web.Request) -> web.Response:
        text = (await request.json())["message"]
        asked.append(text)
        if "cat called" in text:
            return web.json_response({"reply": first if sum("cat called" in t for t in asked) == 1 else later})
        return web.json_response({"reply": "Miso is 5." if "How old" in text else "Noted."})

    app = web.Application()
    app.router.add_post("/chat", chat)
    served = await serve(app)
    config = tmp_path / "config.jsonc"
    config.write_text(
        json.dumps({
            "recordings": "out",
            "runs": [{
                "id": "j", "benchmark": str(benchmark),
                "agent": {"adapter": "http", "url": f"{served.url}/chat"},
                "grading": {"judge": "anthropic:judge-model", "base_url": provider.url},
            }],
        })
    )  # fmt: skip
    try:
        (spec,) = load_config(config).runs
        await run_spec(spec, tmp_path / "out")
    finally:
        await served.stop()
        await provider.stop()
    log = read_log(tmp_path / "out" / "j" / EVENTS_FILE)
    return log, next(e for e in log.events if isinstance(e, Evaluation) and e.question_id == "q1")


async def test_a_judge_decides_live_what_the_exact_grader_is_not_sure_of(
    make_benchmark: BenchFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`grading: {judge: …}` on a scripted run: the uncertain answer goes to the judge (the
    loopback fake provider, Anthropic's wire format) and the retry rule still applies."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    log, q1 = await _judged_run(
        make_benchmark(), tmp_path, FakePersonaModel(), "You never told me.", "Miso, I think — or Mochi?"
    )
    assert q1.attempts == 2 and q1.score == 5.0 and q1.certain  # the nudge's ×0.5 on the judge's 10
    assert (
        q1.grader == "judge:anthropic:judge-model" and "for the exact grader, which was not sure" in q1.reason
    )
    assert [e for e in log.events if isinstance(e, PersonaTurn)], "the judge's answer is logged for resume"
    assert load_run(tmp_path / "out" / "j").summary.mean is not None  # nothing left unresolved


@pytest.mark.parametrize("garbled", [False, True])
async def test_a_judge_reads_whether_a_wrong_answer_claims_it_was_never_told(
    make_benchmark: BenchFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, garbled: bool
) -> None:
    """With a judge, the judge (not the offline detector) reads never-told, so a claim the
    detector misses ("a mystery to me") still gets its search-memory nudge; a reading the
    judge garbles leaves the detector's, and the grade's reason says which stood."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = FakePersonaModel(garble_judge=garbled)
    _, q1 = await _judged_run(make_benchmark(), tmp_path, model, "Honestly, that one is a mystery to me.", "Miso.")
    readings = [r for r in model.requests if "You are reading one reply" in json.dumps(r["system"])]
    assert len(readings) == 1  # asked once: of the wrong first answer, not of the right ones
    if garbled:
        assert q1.attempts == 1 and q1.score == 0  # the detector's "no claim" stood: no nudge
        assert "the judge gave no never-told reading" in q1.reason
    else:
        assert q1.attempts == 2 and q1.score == 5.0  # nudged; "Miso." counts ×0.5
        assert "never-told: yes, read by judge:anthropic:judge-model" in q1.reason


@pytest.mark.parametrize("found_on_the_nudge", [True, False])
async def test_an_unsure_never_told_reading_is_nudged_and_a_difference_left_unresolved(
    make_benchmark: BenchFactory, tmp_path: Path, found_on_the_nudge: bool
) -> None:
    """A reply holding a claim and a figure ("…only that she turned 5 in March") may be a claim
    or an answer: the persona nudges it and grades both tries. Where they differ (0, or 5 after
    the nudge) the question is unresolved and its range spans both — not a mean over a guess;
    where they agree the grade is sure."""
    async def chat(request: web.Request) -> web.Response:
        text = (await request.json())["message"]
        if "search your memory" in text:  # the nudge (it repeats the question)
            return web.json_response({"reply": "Found it: Miso." if found_on_the_nudge else "Still nothing."})
        if "cat called" in text:
            return web.json_response(
                {"reply": "I don't have her name saved, sorry — I only know she turned 5 in March."}
            )
        if "dog called" in text:
            return web.json_response({"reply": "You never told me about a dog."})
        return web.json_response({"reply": "Miso is 5." if "How old" in text else "Noted."})

    app = web.Application()
    app.router.add_post("/chat", chat)
    served = await serve(app)
    try:
        await run_spec(
            RunSpec("n", make_benchmark(), {"adapter": "http", "url": f"{served.url}/chat"}), tmp_path
        )
    finally:
        await served.stop()
    grades = {
        e.question_id: e for e in read_log(tmp_path / "n" / EVENTS_FILE).events if isinstance(e, Evaluation)
    }
    q1 = grades["q1"]
    assert q1.attempts == 2 and "not sure the first reply claims it was never told" in q1.reason
    summary = load_run(tmp_path / "n").summary
    if found_on_the_nudge:
        assert not q1.certain and q1.bounds() == (0.0, 5.0) and q1.score == 5.0  # the guess: a claim
        assert summary.mean is None
        assert summary.mean_range == (pytest.approx(20 / 3), pytest.approx(25 / 3))  # q2, q3 right
        report = (tmp_path / "n" / "report.md").read_text()
        assert "1 unresolved" in report and "q1 — unresolved: 0…5/10** (best guess 5)" in report
        viewer = await serve(make_app(tmp_path))
        try:
            _, runs = await get(f"{viewer.url}/api/runs")
        finally:
            await viewer.stop()
        assert isinstance(runs, dict)
        assert runs["runs"][0]["mean_range"] == [pytest.approx(20 / 3), pytest.approx(25 / 3)]
    else:
        assert q1.certain and q1.score == 0 and "the same either way" in q1.reason
        assert summary.mean == pytest.approx(20 / 3)
