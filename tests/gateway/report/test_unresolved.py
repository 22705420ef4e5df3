"""A run whose grader was not sure of some answers: no report, console line or viewer states
one mean over them — the range (all unresolved wrong … all right) and the list, and how to
resolve them."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from adapters.http_server import serve
from gateway.log.events import Evaluation
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.recordings import load_run
from gateway.run.config import RunSpec
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
