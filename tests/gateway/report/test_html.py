"""The HTML report, opened from disk in headless Chromium: the charts draw, offline, and what
agents said stays text (in the viewer too)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from aiohttp import web
from playwright.async_api import Browser, Locator

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
    # calls, compactions, questions, and the new session's legend entry
    assert await context.locator(".scatterlayer .trace").count() == 4
    # a clock a person reads beside the transcript (24-hour), not "minutes since start" 0…0.045
    ticks = await svg_texts(context.locator(".xtick text"))
    assert ticks and all(re.fullmatch(r"\d\d:\d\d(:\d\d(\.\d{1,3})?)?", t) for t in ticks), ticks
    # the exam's new session is marked where the context drops
    assert "new session (1)" in await svg_texts(context.locator(".legendtext"))
    # Pass@1/2/4 coincide on these rungs: each line its own dash, said in the title too
    ladder = page.locator("#ladder0-0")
    dashes = await ladder.locator(".scatterlayer .trace path.js-line").evaluate_all(
        "ps => ps.map(p => p.style.strokeDasharray || 'solid')"
    )
    assert len(dashes) == 3 and len(set(dashes)) == 3, dashes
    assert "the lines lie on one another" in " ".join(await svg_texts(ladder.locator(".gtitle")))
    # picking another run redraws the run charts with its data
    before = await page.locator("#run-facts").inner_text()
    await page.select_option("#run-select", index=3)
    await page.wait_for_function("document.querySelector('#run-chart-0 .main-svg') !== null")
    assert await page.locator("#run-facts").inner_text() != before
    await page.screenshot(path=str(artifact("html-report.png")), full_page=True)
    await page.locator("#run-charts").screenshot(path=str(artifact("html-report-run-charts.png")))
    await ladder.screenshot(path=str(artifact("html-report-pass-at-b.png")))
    # a run whose agent keeps no memory: its panel says so instead of an empty axis of −1…1
    labels = await page.locator("#run-select option").all_inner_texts()
    await page.select_option("#run-select", index=next(n for n, t in enumerate(labels) if "mem.t0.B" in t))
    memory = page.locator("#run-chart-3")
    await memory.locator(".main-svg").first.wait_for()
    assert "no memory calls" in " ".join(await svg_texts(memory.locator(".annotation")))
    assert await memory.locator(".ytick").count() == 0
    await memory.screenshot(path=str(artifact("html-report-no-memory.png")))


async def svg_texts(found: Locator) -> list[str]:
    """The text of SVG elements (they have no innerText)."""
    texts: list[str] = await found.evaluate_all("els => els.map(e => e.textContent)")
    return texts


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


async def test_past_the_newest_runs_a_report_keeps_a_line_not_the_log(tmp_path: Path) -> None:
    """10,000 demo runs took `report` to 8.1 GB and past 300 s (4 charts a run, every log
    kept): only the `charted` newest are read whole and charted; each other run is a line,
    as its report.md says it, kept in an index so the next report reads no log for it."""
    from gateway.log.runlog import EVENTS_FILE
    from gateway.report.html import render_html
    from gateway.report.recordings import load_runs
    from gateway.report.run_cards import INDEX_FILE

    recordings = tmp_path / "recordings"
    await run_spec(RunSpec("r0", DEMO, {"adapter": "reference"}, {"driver": "scripted"}), recordings)
    data = (recordings / "r0" / EVENTS_FILE).read_bytes()
    for n in (1, 2, 3):  # copies: the same created time, so the later folder names are the newest
        (recordings / f"r{n}").mkdir()
        (recordings / f"r{n}" / EVENTS_FILE).write_bytes(data)
    runs, cards, problems = load_runs(recordings, charted=2)
    assert not problems and [r.run_dir.name for r in runs] == ["r2", "r3"]
    assert [c.folder for c in cards] == ["r0", "r1"]
    assert all(c.line(recordings).startswith("r0 — completed, mean 8.67/10 (") for c in cards)
    page = render_html(recordings, runs, [], [], [], None, cards)
    assert page.count('"charts": [{') == 2  # two runs charted
    payload = re.search(r"const REPORT = (\{.*\});", page)
    assert payload is not None
    summed, older = json.loads(payload[1])["uncharted"]
    assert summed["lines"] == [] and "older runs" in older["title"]
    assert [line.rsplit("/", 2)[-2] for line in older["lines"]] == ["r0", "r1"]

    # the next report takes the cards from the index; a log that changed is read again
    index = json.loads((recordings / INDEX_FILE).read_text())
    assert sorted(index["runs"]) == ["r0", "r1", "r2", "r3"]
    (recordings / "r0" / EVENTS_FILE).write_bytes(data[: len(data) // 2])  # killed half-way, say
    crafted = index["runs"]["r1"]
    crafted[2]["mean"] = "10.00/10"  # changed by hand, to tell a card taken from the index
    (recordings / INDEX_FILE).write_text(json.dumps(index))
    _, cards, _ = load_runs(recordings, charted=2)
    by_folder = {c.folder: c for c in cards}
    assert by_folder["r0"].status != "completed"  # read again: the log changed
    assert by_folder["r1"].mean == "10.00/10"  # its log unchanged: not read again
