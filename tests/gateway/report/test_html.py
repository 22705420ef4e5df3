"""The HTML report, opened from disk in headless Chromium: the charts draw, offline, and what
agents said stays text (in the viewer too)."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web
from playwright.async_api import Browser

from adapters.http_server import serve
from gateway.report.matrix import write_matrix_report
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from gateway.viewer.app import make_app
from tests.browser import artifact, browser  # noqa: F401 - the fixture
from tests.conftest import DEMO, BenchFactory


async def test_the_report_draws_every_chart_offline(browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    recordings = tmp_path / "recordings"
    agent = {"adapter": "reference", "context_tokens": 400}
    for rung in ("s0", "s1"):
        meta = {"id": "lad", "repeat": 1, "rung": rung}
        await run_spec(RunSpec(f"lad.{rung}", DEMO, agent, {"driver": "scripted"}, rung, meta), recordings)
    for variant, memory in (("A", True), ("B", False)):
        for task, rung in (("t0", "s0"), ("t1", "s1")):
            meta = {
                "experiment": "mem",
                "task": task,
                "pair": f"mem.{task}.r1",
                "repeat": 1,
                "variant": variant,
            }
            await run_spec(
                RunSpec(
                    f"mem.{task}.{variant}",
                    DEMO,
                    {**agent, "memory": memory},
                    {"driver": "scripted"},
                    rung,
                    meta,
                ),
                recordings,
            )
    html = write_matrix_report(recordings).html
    page = await browser.new_page(viewport={"width": 1200, "height": 1800})
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    await page.goto(html.as_uri())
    await page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length > 0")
    assert not errors
    assert all(url.startswith("file:") for url in requests)  # nothing fetched from a network
    titles = await page.eval_on_selector_all(".gtitle", "els => els.map(e => e.textContent)")
    for expected in (
        "Pass@B by rung — lad",
        "Paired A/B by question group — mem",
        "Score by chapter",
        "Score by question tag",
        "Agent context size over time",
        "Memory calls per question",
    ):
        assert any(t.startswith(expected) for t in titles), (expected, titles)
    # every chart drew its data: bars, or points along lines
    for div in await page.locator(".js-plotly-plot").all():
        marks = await div.locator(".point, .trace.bars path, .scatterlayer .trace path").count()
        assert marks > 0
    context = page.locator("#run-chart-2")
    assert await context.locator(".scatterlayer .trace").count() == 3  # calls, compactions, questions
    # picking another run redraws the run charts with its data
    before = await page.locator("#run-facts").inner_text()
    await page.select_option("#run-select", index=3)
    await page.wait_for_function("document.querySelector('#run-chart-0 .main-svg') !== null")
    assert await page.locator("#run-facts").inner_text() != before
    await page.screenshot(path=str(artifact("html-report.png")), full_page=True)


HOSTILE = '</script><img src="x" id="pwned" onerror="document.title=\'pwned\'"><b>bold</b>'


async def test_an_agents_answer_is_shown_as_text_never_as_markup(
    browser: Browser,  # noqa: F811
    make_benchmark: BenchFactory,
    tmp_path: Path,
) -> None:
    async def hostile(request: web.Request) -> web.Response:
        return web.json_response({"reply": HOSTILE})

    app = web.Application()
    app.router.add_post("/chat", hostile)
    served = await serve(app)
    try:
        await run_spec(
            RunSpec("h", make_benchmark(), {"adapter": "http", "url": f"{served.url}/chat"}), tmp_path
        )
    finally:
        await served.stop()
    html = write_matrix_report(tmp_path).html
    page = await browser.new_page()
    await page.goto(html.as_uri())
    await page.wait_for_function("document.querySelectorAll('#run-charts .main-svg').length > 0")
    assert await page.locator("#pwned").count() == 0 and await page.title() == "marathonbench report"
    assert HOSTILE in await page.locator("#run-facts").inner_text()
    viewer = await serve(make_app(tmp_path))
    try:
        await page.goto(f"{viewer.url}/#/run/h")
        await page.locator(".bubble.agent").first.wait_for()
        assert await page.locator(".bubble.agent").first.inner_text() != ""
        assert HOSTILE in await page.locator(".bubble.agent").first.inner_text()
        assert await page.locator("#pwned").count() == 0 and await page.title() == "marathonbench viewer"
    finally:
        await page.close()
        await viewer.stop()
