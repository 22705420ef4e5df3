"""`marathon view`: the JSON API over recorded and live runs, read-only and confined to the
recordings folder; then the page itself in headless Chromium."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from playwright.async_api import Browser, expect
from playwright.async_api import TimeoutError as PlaywrightTimeout

from adapters.http_server import ServedApp, serve
from gateway.log.runlog import EVENTS_FILE
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from gateway.viewer.app import STORE, make_app
from gateway.viewer.index import OPEN_RUNS
from tests.browser import artifact, browser  # noqa: F401 - the fixture
from tests.conftest import DEMO, REPO, BenchFactory
from tests.marathon_cli import spawn_marathon


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished demo run (reference agent, LLM traffic recorded)."""
    recordings = tmp_path_factory.mktemp("viewer") / "recordings"
    spec = RunSpec("demo", DEMO, {"adapter": "reference", "context_tokens": 400}, {"driver": "scripted"})
    asyncio.run(run_spec(spec, recordings))
    return recordings


@pytest.fixture
async def viewer(recorded: Path) -> AsyncIterator[str]:
    served = await serve(make_app(recorded))
    yield served.url
    await served.stop()


async def get(url: str) -> tuple[int, object]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        body = await response.text()
        return response.status, json.loads(body) if response.content_type == "application/json" else body


async def test_the_runs_list_shows_a_recorded_run(viewer: str) -> None:
    status, data = await get(f"{viewer}/api/runs")
    assert status == 200 and isinstance(data, dict)
    (run,) = data["runs"]
    assert run["id"] == "demo" and run["status"] == "finished" and run["benchmark"] == "demo-en"
    assert (run["phase"], run["phases"], run["graded"], run["questions"]) == (5, 5, 15, 15)
    assert run["stand_in"] is True and run["persona"] == "scripted" and run["mean"] > 5
    assert run["cost"] == "$0.0000"
    assert data["subfolders"] == {} and data["pending"] == 0


async def test_recordings_folders_inside_are_pointed_at(recorded: Path, tmp_path: Path) -> None:
    recordings = tmp_path / "recordings"
    (recordings / "experiment" / "a").mkdir(parents=True)
    shutil.copy(recorded / "demo" / EVENTS_FILE, recordings / "experiment" / "a" / EVENTS_FILE)
    served = await serve(make_app(recordings))
    try:
        _, data = await get(f"{served.url}/api/runs")
    finally:
        await served.stop()
    assert isinstance(data, dict) and data["runs"] == [] and data["subfolders"] == {"experiment": 1}


async def test_a_folder_of_many_runs_keeps_few_run_pages_in_memory(recorded: Path, tmp_path: Path) -> None:
    recordings = tmp_path / "recordings"
    ids = [f"r{n}" for n in range(OPEN_RUNS + 2)]
    for run_id in ids:
        (recordings / run_id).mkdir(parents=True)
        shutil.copy(recorded / "demo" / EVENTS_FILE, recordings / run_id / EVENTS_FILE)
    app = make_app(recordings)
    store = app[STORE]
    served = await serve(app)
    try:
        _, listed = await get(f"{served.url}/api/runs")
        assert isinstance(listed, dict) and [r["graded"] for r in listed["runs"]] == [15] * len(ids)
        assert not store.open and all(not w.items and not w.blobs for w in store.watches.values())
        async with aiohttp.ClientSession() as http, http.get(f"{served.url}/api/runs/r0/stream") as stream:
            await stream.content.readline()  # r0 is streaming: its page stays open
            first = {}
            for run_id in ids[1:]:
                _, first[run_id] = await get(f"{served.url}/api/runs/{run_id}/items?limit=20")
            assert list(store.open) == ["r0", *ids[-(OPEN_RUNS - 1) :]]
            _, again = await get(f"{served.url}/api/runs/r1/items?limit=20")  # closed: read again
            assert again == first["r1"] and "r1" in store.open and len(store.open) == OPEN_RUNS
        _, opened = await get(f"{served.url}/api/runs/r1")
        assert isinstance(opened, dict)
        # the list's counters are the run page's
        assert {k: v for k, v in opened.items() if k in listed["runs"][0]} == next(
            r for r in listed["runs"] if r["id"] == "r1"
        )
    finally:
        await served.stop()


async def test_the_transcript_is_paged_in_log_order(viewer: str) -> None:
    _, first = await get(f"{viewer}/api/runs/demo/items?limit=50")
    assert isinstance(first, dict) and len(first["items"]) == 50 and first["more"] is True
    last = first["items"][-1]["seq"]
    _, rest = await get(f"{viewer}/api/runs/demo/items?after={last}&limit=100000")
    assert isinstance(rest, dict) and rest["more"] is False
    items = first["items"] + rest["items"]
    seqs = [i["seq"] for i in items]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    kinds = {i["kind"] for i in items}
    assert {
        "phase",
        "persona",
        "question",
        "agent",
        "grade",
        "compaction",
        "memory",
        "session",
        "llm",
    } <= kinds
    told = [i for i in items if i["kind"] == "persona" and i["facts"]]
    assert sum(len(i["facts"]) for i in told) >= 40  # facts told are marked on the messages
    grades = [i for i in items if i["kind"] == "grade"]
    assert len(grades) == 15 and all(g["expected"] and g["reason"] for g in grades)
    assert {g["evidence"] for g in grades} >= {"beyond the boundary", "in context"}
    _, run = await get(f"{viewer}/api/runs/demo")
    assert (
        isinstance(run, dict) and len(run["series"]["calls"]) > 20 and len(run["series"]["compactions"]) == 3
    )
    assert "update" in run["tags"]


async def test_a_memory_call_opens_its_recorded_llm_exchange(viewer: str) -> None:
    _, page = await get(f"{viewer}/api/runs/demo/items?limit=100000")
    assert isinstance(page, dict)
    search = next(i for i in page["items"] if i["kind"] == "memory" and i["operation"] == "read")
    status, ex = await get(f"{viewer}/api/runs/demo/exchange/{search['exchange']}")
    assert status == 200 and isinstance(ex, dict)
    assert ex["system"].startswith("You are a personal assistant") and ex["messages"][-1]["role"] == "user"
    assert "memory_search" in ex["tools"] and any(c["name"] == "memory_search" for c in ex["tool_calls"])
    assert ex["request_headers"].get("x-api-key", "«redacted»") == "«redacted»"
    assert (await get(f"{viewer}/api/runs/demo/exchange/999999"))[0] == 404


@pytest.mark.parametrize(
    "path",
    ["..%2F..%2Fetc", "..", "%2Fetc", "demo%2F..%2F..", ".hidden", "outside-link", "nope"],
)
async def test_a_path_from_the_url_cannot_leave_the_recordings_folder(
    recorded: Path, viewer: str, tmp_path: Path, path: str
) -> None:
    outside = tmp_path / "secret-run"
    outside.mkdir()
    shutil.copy(recorded / "demo" / EVENTS_FILE, outside / EVENTS_FILE)
    link = recorded / "outside-link"
    if not link.exists():
        link.symlink_to(outside)
    status, _ = await get(f"{viewer}/api/runs/{path}/items")
    assert status == 404
    for probe in ("..%2Fapp.py", "..%2F..%2F__init__.py"):  # real files beside and above the assets
        assert (await get(f"{viewer}/assets/{probe}"))[0] == 404


async def test_a_run_whose_log_is_a_symlink_leading_out_is_not_served(
    recorded: Path, viewer: str, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(recorded / "demo" / EVENTS_FILE, outside / EVENTS_FILE)
    (recorded / "linked-log").mkdir(exist_ok=True)
    if not (recorded / "linked-log" / EVENTS_FILE).exists():
        (recorded / "linked-log" / EVENTS_FILE).symlink_to(outside / EVENTS_FILE)
    assert (await get(f"{viewer}/api/runs/linked-log"))[0] == 404
    status, runs = await get(f"{viewer}/api/runs")
    assert status == 200 and isinstance(runs, dict)
    assert "linked-log" not in [r["id"] for r in runs["runs"]]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "127.0.0.1.nip.io"])
async def test_a_request_for_another_host_name_is_refused(viewer: str, host: str) -> None:
    """DNS rebinding: a page on another site whose name now points at 127.0.0.1."""
    async with aiohttp.ClientSession() as http, http.get(f"{viewer}/api/runs", headers={"Host": host}) as r:
        assert r.status == 403
    async with aiohttp.ClientSession() as http, http.get(f"{viewer}/api/runs", headers={"Host": "localhost"}) as r:
        assert r.status == 200


async def test_a_torn_log_shows_what_is_complete_and_viewing_never_writes(
    recorded: Path, tmp_path: Path
) -> None:
    recordings = tmp_path / "recordings"
    (recordings / "torn").mkdir(parents=True)
    data = (recorded / "demo" / EVENTS_FILE).read_bytes()
    (recordings / "torn" / EVENTS_FILE).write_bytes(data[: len(data) // 2 + 7])  # cut inside a record
    before = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in recordings.rglob("*")}
    served = await serve(make_app(recordings))
    try:
        _, runs = await get(f"{served.url}/api/runs")
        assert isinstance(runs, dict)
        (run,) = runs["runs"]
        assert run["status"] == "resumable" and run["events"] > 0  # killed mid-write: resumable
        _, page = await get(f"{served.url}/api/runs/torn/items?limit=100000")
        assert isinstance(page, dict) and page["items"] and page["more"] is False
    finally:
        await served.stop()
    assert {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in recordings.rglob("*")} == before


# ---- live runs: a marathon in another process, an agent that answers when told to ------------


class GatedAgent:
    """An HTTP agent on loopback that answers one message each time the test opens the gate."""

    def __init__(self) -> None:
        self.permits: asyncio.Queue[None] = asyncio.Queue()
        self.received = 0

    def app(self) -> web.Application:
        async def chat(request: web.Request) -> web.Response:
            text = (await request.json())["message"]
            self.received += 1
            await self.permits.get()
            return web.json_response({"reply": f"reply {self.received}: heard {text[:20]!r}"})

        app = web.Application()
        app.router.add_post("/chat", chat)
        return app


@pytest.fixture
async def live_run(
    make_benchmark: BenchFactory, tmp_path: Path
) -> AsyncIterator[tuple[GatedAgent, Path, ServedApp]]:
    agent = GatedAgent()
    agent_server = await serve(agent.app())
    recordings = tmp_path / "recordings"
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{recordings: "{recordings}", runs: [{{id: "live", benchmark: "{make_benchmark()}", '
        f'agent: {{adapter: "http", url: "{agent_server.url}/chat", timeout: 60}}}}]}}'
    )
    proc = spawn_marathon("run", str(config), cwd=tmp_path, stdout=subprocess.DEVNULL)
    viewer = await serve(make_app(recordings))
    try:
        for _ in range(600):  # wait for the first message to reach the agent
            if agent.received:
                break
            await asyncio.sleep(0.05)
        yield agent, recordings, viewer
    finally:
        for _ in range(100):
            agent.permits.put_nowait(None)
        try:  # the agent answers on this event loop: wait off it
            await asyncio.to_thread(proc.wait, 60)
        finally:
            proc.kill()
            await viewer.stop()
            await agent_server.stop()


async def test_a_live_run_streams_new_items_as_they_are_logged(
    live_run: tuple[GatedAgent, Path, ServedApp],
) -> None:
    agent, _, viewer = live_run
    _, runs = await get(f"{viewer.url}/api/runs")
    assert isinstance(runs, dict) and runs["runs"][0]["status"] == "running"
    seen: list[dict[str, object]] = []
    async with aiohttp.ClientSession() as http, http.get(f"{viewer.url}/api/runs/live/stream") as stream:
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        agent.permits.put_nowait(None)  # let the agent answer the first message
        event = ""
        async with asyncio.timeout(30):
            async for raw in stream.content:
                line = raw.decode().strip()
                if line.startswith("event:"):
                    event = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and event == "items":
                    seen += json.loads(line[5:])
                    if any(i["kind"] == "agent" for i in seen):
                        break
    reply = next(i for i in seen if i["kind"] == "agent")
    assert str(reply["text"]).startswith("reply 1: heard")


async def test_the_page_shows_the_runs_the_transcript_and_the_chart(browser: Browser, viewer: str) -> None:  # noqa: F811
    page = await browser.new_page(viewport={"width": 1200, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)  # CSP refusals too
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    await page.goto(f"{viewer}/")
    row = page.locator('tr[data-run="demo"]')
    await expect(row).to_contain_text("finished")
    await expect(row).to_contain_text("demo-en")
    await expect(row).to_contain_text("15/15")
    await row.click()
    await expect(page.locator("#run-status")).to_have_text("finished")
    await expect(page.locator(".bubble.persona").first).to_contain_text("Some things to remember, please — ")
    await expect(page.locator(".bubble.agent").first).to_be_visible()
    await expect(page.locator(".grade").first).to_contain_text("expected:")
    await expect(page.locator("#chart .main-svg").first).to_be_visible()
    # calls, compactions, questions, and the new session's legend entry
    assert await page.locator("#chart .scatterlayer .trace").count() == 4
    title = await page.eval_on_selector("#chart .gtitle", "e => e.textContent")
    assert title == "Agent context size over time"
    # filters: only the update questions and what belongs to them
    await page.select_option("#filter-tag", "update")
    visible = await page.locator(".grade:visible").count()
    assert visible == 3 and await page.locator(".bubble.persona:visible").count() == 0
    await page.select_option("#filter-tag", "")
    # the inspector opens a memory call's LLM exchange
    await page.locator("a.inspect").first.click()
    await expect(page.locator("#inspector")).to_contain_text("Request: system")
    await page.screenshot(path=str(artifact("viewer-run.png")), full_page=False)
    # the transcript is paged: scrolled to its end, every item is there and "load more" is gone
    _, listed = await get(f"{viewer}/api/runs/demo/items?limit=5000")
    assert isinstance(listed, dict)
    shown_kinds = {"phase", "session", "persona", "question", "agent", "grade", "compaction", "memory", "end"}
    last = max(i["seq"] for i in listed["items"] if i["kind"] in shown_kinds)
    for _ in range(20):
        if await page.locator("#load-more").is_hidden():
            break
        await _scroll_to_if_shown(page.locator("#load-more"))
        await page.wait_for_timeout(200)
    await expect(page.locator("#load-more")).to_be_hidden()
    assert int(await page.locator("#transcript > *").last.get_attribute("data-seq") or -1) == last
    assert not errors
    assert all(u.startswith(viewer) or u.startswith("data:") for u in requests)  # no CDN, no network


async def test_the_page_of_a_live_run_appends_messages_without_reload(
    browser: Browser,  # noqa: F811
    live_run: tuple[GatedAgent, Path, ServedApp],
) -> None:
    agent, _, viewer = live_run
    page = await browser.new_page(viewport={"width": 1200, "height": 1000})
    await page.goto(f"{viewer.url}/#/run/live")
    await expect(page.locator("#run-status")).to_have_text("running")
    await expect(page.locator(".bubble.persona")).to_have_count(1)
    assert await page.locator(".bubble.agent").count() == 0
    meta = page.locator("#run-meta")
    await expect(meta).to_contain_text("phase 1/3 · graded 0/3")
    for n in range(1, 4):  # each answer the agent gives appears on the open page
        agent.permits.put_nowait(None)
        await expect(page.locator(".bubble.agent")).to_have_count(n, timeout=15000)
    await expect(page.locator(".bubble.agent").nth(2)).to_contain_text("reply 3")
    title = await page.eval_on_selector("#chart .gtitle", "e => e.textContent")
    assert "not observable" in title  # an HTTP agent without `llm.upstream`
    # the header moves with the run, not only when its status changes kind
    await expect(meta).not_to_contain_text("phase 1/3", timeout=15000)
    assert await page.locator("#run-status").inner_text() == "running"
    answered = 3
    while "graded 0/3" in await meta.inner_text() and answered < 40:
        agent.permits.put_nowait(None)
        answered += 1
        await expect(page.locator(".bubble.agent")).to_have_count(answered, timeout=15000)
        await page.wait_for_timeout(300)  # a poll of the stream
    # a poll may lag the run by one answer, and a permit given meanwhile grades one more
    await expect(meta).to_contain_text(re.compile(r"phase 3/3 · graded [12]/3"))
    assert await page.locator("#run-status").inner_text() == "running"
    await expect(page.locator("#load-more")).to_be_hidden()  # live: items arrive by themselves
    await page.screenshot(path=str(artifact("viewer-live-header.png")), clip={"x": 0, "y": 0, "width": 1200, "height": 160})
    await page.screenshot(path=str(artifact("viewer-live.png")))
    for _ in range(60):
        agent.permits.put_nowait(None)
    await expect(page.locator("#run-status")).to_have_text("finished", timeout=30000)


async def test_marathon_view_prints_its_address_and_serves_the_recordings(recorded: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway.cli", "view", str(recorded), "--port", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert line.startswith("viewer: http://127.0.0.1:") and "read-only" in line
        url = line.split()[1].rstrip("/")
        status, data = await get(f"{url}/api/runs")
        assert status == 200 and isinstance(data, dict) and data["runs"][0]["id"] == "demo"
        status, page = await get(f"{url}/")
        assert (
            status == 200 and "/assets/viewer.js" in str(page) and "http" not in str(page).split("<body>")[0]
        )
    finally:
        proc.send_signal(2)  # Ctrl-C: a quiet stop, nothing about resuming runs
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    assert proc.stderr is not None and b"resume" not in await proc.stderr.read()


async def test_a_folder_inside_and_a_forks_parent_are_links(
    browser: Browser,  # noqa: F811
    recorded: Path,
    tmp_path: Path,
) -> None:
    """Issue 47: runs in an experiment's or a fork folder showed at the root only as a text hint
    with a command, and a fork named its parent in text."""
    recordings = tmp_path / "recordings"
    (recordings / "demo").mkdir(parents=True)
    shutil.copy(recorded / "demo" / EVENTS_FILE, recordings / "demo" / EVENTS_FILE)
    inside = recordings / "exams"
    agent = {"adapter": "reference", "context_tokens": 400}
    await run_spec(RunSpec("teach", DEMO, agent, checkpoint_at="exam", until="exam"), inside)
    await run_spec(RunSpec("teach.f1", DEMO, agent, checkpoint_at="exam", parent=("teach", "exam")), inside)
    served = await serve(make_app(recordings))
    try:
        status, _ = await get(f"{served.url}/api/runs?in=..")
        assert status == 404  # only a folder the listing names
        status, _ = await get(f"{served.url}/api/runs/teach?in=nope")
        assert status == 404
        page = await browser.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(f"{served.url}/")
        await expect(page.locator('tr[data-run="demo"]')).to_be_visible()
        await page.locator("a.subfolder").click()  # "exams/ (2 runs)"
        await expect(page.locator("h2")).to_have_text("Runs in exams/")
        await expect(page.locator('tr[data-run="teach.f1"]')).to_contain_text("finished")
        await page.screenshot(path=str(artifact("viewer-subfolder.png")))
        await page.locator('tr[data-run="teach.f1"]').click()
        await expect(page.locator(".bubble.agent").first).to_be_visible()
        await expect(page.locator("#run-meta")).to_contain_text('at checkpoint "exam"')
        await page.locator("a.inspect").first.click()  # the inspector reads the run in its folder
        await expect(page.locator("#inspector")).to_contain_text("Request: system")
        await page.keyboard.press("Escape")
        header = {"x": 0, "y": 0, "width": 1200, "height": 200}
        await page.screenshot(path=str(artifact("viewer-fork-parent-link.png")), clip=header)
        await page.locator("#fork-parent").click()
        await expect(page.locator("#where")).to_have_text("/ exams / teach")
        await expect(page.locator(".bubble.persona").first).to_contain_text("Some things to remember")
        assert page.url.endswith("#/in/exams/run/teach")
        await page.goto(f"{served.url}/#/in/exams")
        await page.locator("#to-root").click()
        await expect(page.locator('tr[data-run="demo"]')).to_be_visible()
        assert not errors
    finally:
        await served.stop()


async def test_a_facts_timeline_opens_beside_the_transcript_and_links_each_step(
    browser: Browser,  # noqa: F811
    tmp_path: Path,
) -> None:
    """Issue 48: the memory autopsy in the viewer — a question's value through the run (told,
    written or refused, asked, graded), each step a link to its record in the transcript."""
    recordings = tmp_path / "recordings"
    agent = {"adapter": "reference", "context_tokens": 400, "faults": {"refuse_writes": ["Pixel"]}}
    await run_spec(RunSpec("refuses", DEMO, agent, {"driver": "scripted"}), recordings)
    served = await serve(make_app(recordings))
    try:
        status, data = await get(f"{served.url}/api/runs/refuses/autopsy")
        assert status == 200 and isinstance(data, dict)
        assert data["questions"]["q9"]["stage"] == "write refused"
        page = await browser.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(f"{served.url}/#/run/refuses")
        trace = page.locator('a.trace[data-q="q9"]')
        more = page.locator("#load-more")
        for _ in range(100):  # the transcript is paged: scroll until q9's grade is in
            if await trace.count():
                break
            # the button is hidden once every page is in, and may be hidden before the first
            # page arrives: scroll to it only while it is shown (the race CI hit at stop 54)
            await _scroll_to_if_shown(more)
            await page.wait_for_timeout(200)
        await trace.click()
        await expect(page.locator("#trace-verdict")).to_have_text("q9: expected Pixel — write refused")
        steps = page.locator("#trace-steps li")
        kinds = [await steps.nth(n).locator("b").text_content() for n in range(await steps.count())]
        assert kinds[0] == "told" and "write refused" in kinds and kinds[-2:] == ["asked", "graded"], kinds
        await page.locator("#inspector").screenshot(path=str(artifact("viewer-fact-timeline.png")))
        refused = page.locator("#trace-steps li.write-refused a.goto").first
        seq = (await refused.text_content() or "").removeprefix("record ")
        await refused.click()
        target = page.locator(f'#transcript [data-seq="{seq}"]')
        await expect(target).to_be_visible()
        await expect(target).to_have_class(re.compile("traced"))
        await expect(target).to_contain_text("memory write")
        assert not errors
    finally:
        await served.stop()


async def _scroll_to_if_shown(button: Any) -> None:
    """Scroll to the "load more" button while it is shown. It hides itself once the last page is
    in, which can happen between a visibility check and the scroll (the race CI hit at stops 54
    and 57): a scroll that finds it gone is no failure, the caller's loop looks again."""
    if not await button.is_visible():
        return
    with contextlib.suppress(PlaywrightTimeout):
        await button.scroll_into_view_if_needed(timeout=2000)
