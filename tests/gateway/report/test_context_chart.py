"""The charts draw gaps, restarts, sessions and zero bars as what they are (issue 47): a run
stopped and resumed broke nowhere on the context line, a ladder rung's "new session" labels
overlapped into noise, the clock showed ".000", and a mean of 0 looked like missing data.
The report's figure (gateway/report/context_chart.py) and the viewer's (viewer.js) follow the
same rules; both are drawn here in Chromium, and screenshots kept in test-artifacts/."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from adapters.http_server import serve
from gateway.log.events import RunStart
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.matrix import write_matrix_report
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from gateway.viewer.app import make_app
from tests.browser import artifact, browser  # noqa: F401 - the fixture
from tests.conftest import DEMO
from tests.run_logs import cut_after

NO_MEMORY = {"adapter": "reference", "context_tokens": 400, "memory": False}
STOP = 2.5  # seconds the run stays stopped: a band as wide as a few calls


async def stopped_and_resumed(recordings: Path, spec: RunSpec) -> None:
    """Run `spec`, then cut its log as a crash would (after the 6th reply), wait, resume it."""
    await run_spec(spec, recordings)
    cut_after(recordings / spec.id / EVENTS_FILE, "reply", 6)
    await asyncio.sleep(STOP)
    await run_spec(spec, recordings)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plain run and a ladder rung with 8 distractor sessions, each stopped once and resumed."""
    where = tmp_path_factory.mktemp("charts") / "recordings"

    async def both() -> None:
        await stopped_and_resumed(where, RunSpec("plain", DEMO, NO_MEMORY, {"driver": "scripted"}))
        rung = RunSpec("lad.s2", DEMO, NO_MEMORY, {"driver": "scripted"}, "s2", {"id": "lad", "repeat": 1, "rung": "s2"})
        await stopped_and_resumed(where, rung)

    asyncio.run(both())
    return where


async def figure(page: Page, selector: str) -> dict[str, Any]:
    """What plotly drew in the chart at `selector`: its traces, shapes and tick labels."""
    data: dict[str, Any] = await page.eval_on_selector(
        selector,
        """el => ({
            traces: el.data.map(t => ({name: t.name, x: t.x, text: t.text})),
            shapes: (el.layout.shapes || []).map(s => ({type: s.type, dash: s.line && s.line.dash})),
            annotations: (el.layout.annotations || []).map(a => a.text),
            ticks: [...el.querySelectorAll('.xtick text')].map(t => t.textContent),
            legend: [...el.querySelectorAll('.legendtext')].map(t => t.textContent),
        })""",
    )
    return data


def check_context(drawn: dict[str, Any], sessions: int) -> None:
    line = next(t for t in drawn["traces"] if t["name"] == "input tokens per call")
    assert None in line["x"], "the line runs across the stop"
    assert "stopped, then resumed (1)" in drawn["legend"]
    assert sum(s["type"] == "rect" for s in drawn["shapes"]) == 1  # the band
    assert f"new session ({sessions})" in drawn["legend"]
    assert sum(s["dash"] == "dot" for s in drawn["shapes"]) == sessions
    assert not any("new session" in str(a) for a in drawn["annotations"]), "a label per line overlaps"
    assert drawn["ticks"] and not any(t.endswith(".000") for t in drawn["ticks"]), drawn["ticks"]


def sessions_in(recordings: Path, run: str) -> int:
    log = read_log(recordings / run / EVENTS_FILE)
    assert sum(isinstance(e, RunStart) and e.resumed for e in log.events) == 1
    return sum(e.type == "session" for e in log.events)


async def test_the_reports_charts_show_the_stop_the_sessions_and_a_zero_bar(
    browser: Browser,  # noqa: F811
    recordings: Path,
) -> None:
    html = write_matrix_report(recordings).html
    page = await browser.new_page(viewport={"width": 1200, "height": 1800})
    await page.goto(html.as_uri())
    await page.wait_for_function("document.querySelectorAll('#run-charts .js-plotly-plot').length >= 4")
    charts = page.locator("#run-charts .js-plotly-plot")
    titles = [await charts.nth(n).locator(".gtitle").text_content() for n in range(await charts.count())]
    context = charts.nth(titles.index("Agent context size over time"))
    drawn = await figure(page, f"#run-charts .js-plotly-plot >> nth={titles.index('Agent context size over time')}")
    check_context(drawn, sessions_in(recordings, "plain"))
    await context.screenshot(path=str(artifact("report-context-stopped.png")))
    tags = charts.nth(titles.index("Score by question tag"))
    bars = await figure(page, f"#run-charts .js-plotly-plot >> nth={titles.index('Score by question tag')}")
    labels = bars["traces"][0]["text"]
    assert len(labels) == len(bars["traces"][0]["x"]) and "0.0" in labels, labels  # a zero bar says 0.0
    assert await tags.locator(".bartext").count() == len(labels)
    await tags.screenshot(path=str(artifact("report-score-by-tag-zero.png")))


async def test_the_viewers_chart_shows_a_rungs_stop_and_its_many_sessions(
    browser: Browser,  # noqa: F811
    recordings: Path,
) -> None:
    served = await serve(make_app(recordings))
    try:
        page = await browser.new_page(viewport={"width": 1200, "height": 900})
        await page.goto(f"{served.url}/#/run/lad.s2")
        await expect(page.locator("#chart .main-svg").first).to_be_visible()
        sessions = sessions_in(recordings, "lad.s2")
        assert sessions >= 8  # the rung's distractor sessions, each a new session
        check_context(await figure(page, "#chart"), sessions)
        await page.locator("#chart").screenshot(path=str(artifact("viewer-context-rung-stopped.png")))
    finally:
        await served.stop()
