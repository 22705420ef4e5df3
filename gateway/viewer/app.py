"""`marathon view`: a live web viewer for the runs under a recordings folder.

An aiohttp app on 127.0.0.1 serving one page (`assets/`, plotly.js from the installed
plotly package: nothing from a CDN) and a small JSON API over the run logs:

    GET /api/runs                         every run: status, benchmark, agent, persona, progress, score, cost
                                          (and `pending`: runs not read yet; the next call goes on)
    GET /api/runs/{id}                    one run: header, status, questions, chart series
    GET /api/runs/{id}/items?after=&limit= the transcript, paged by log sequence number
    GET /api/runs/{id}/exchange/{seq}     one recorded LLM exchange (request and response, as logged: redacted)
    GET /api/runs/{id}/stream?after=      server-sent events: transcript items as the log grows
    GET /api/runs/{id}/autopsy            the memory autopsy: each question's stage and timeline

Each takes `in=NAME` for a recordings folder inside this one (an experiment's, a fork folder):
only a name `/api/runs` lists under `subfolders`.

What a caller may rely on: the viewer only reads. Logs are followed incrementally
(`LogFollower`), never locked or written, so a run never waits for it; a torn or half-written
log shows what is complete; a run id from a URL names a folder directly under the
recordings folder or nothing.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import json
import re
from pathlib import Path
from typing import Any

from aiohttp import web

from gateway.log.runlog import EVENTS_FILE
from gateway.viewer.index import Recordings
from gateway.viewer.watch import RunWatch

ASSETS = Path(__file__).parent / "assets"
PAGE_LIMIT = 500
POLL_SECONDS = 0.3


PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


@functools.cache
def _plotly_js() -> bytes:
    from plotly.offline import get_plotlyjs

    script: str = get_plotlyjs()
    return script.encode()


def _int(request: web.Request, name: str, default: int) -> int:
    try:
        return int(request.query.get(name, default))
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be a whole number") from None


STORE = web.AppKey("recordings", Recordings)


LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def host_guard(serving: str) -> Any:
    """Refuse a request whose `Host` is not a name of the address served: a page on another
    site whose name was re-pointed at 127.0.0.1 (DNS rebinding) must not read recordings.
    Bound to every address (0.0.0.0, ::), the user chose exposure: any name is accepted."""
    allowed = LOOPBACK_NAMES | {serving.strip("[]").lower()}
    anywhere = serving in ("0.0.0.0", "::", "")

    @web.middleware
    async def guard(request: web.Request, handler: Any) -> web.StreamResponse:
        try:
            name = (request.url.host or "").lower()
        except ValueError:  # a Host header that is no host at all
            name = ""
        if not anywhere and name not in allowed:
            raise web.HTTPForbidden(text=f"this viewer serves {serving}, not {name!r}")
        response: web.StreamResponse = await handler(request)
        return response

    return guard


def make_app(recordings: Path, host: str = "127.0.0.1") -> web.Application:
    store = Recordings(recordings)
    app = web.Application(middlewares=[host_guard(host)])
    app[STORE] = store
    streams: set[asyncio.Task[Any]] = set()
    inside: dict[str, Recordings] = {}  # the recordings folders inside this one, opened on demand

    def store_for(request: web.Request) -> Recordings:
        """`?in=NAME`: a recordings folder inside this one (an experiment's, a fork folder) —
        only a name this folder's own listing gives, so a URL can never leave it."""
        name = request.query.get("in", "")
        if not name:
            return store
        if name not in store.subfolders() or (store.root / name).resolve().parent != store.root:
            raise web.HTTPNotFound(text="no such recordings folder inside this one")
        if name not in inside:
            inside[name] = Recordings(store.root / name)
        return inside[name]

    async def needs(request: web.Request) -> RunWatch:
        watch = await store_for(request).watch(request.match_info["run_id"])
        if watch is None:
            raise web.HTTPNotFound(text="no such run under the recordings folder")
        return watch

    async def index(request: web.Request) -> web.FileResponse:
        # only our own scripts, and requests back to this server: a defence in depth behind
        # showing every recorded text with textContent
        return web.FileResponse(ASSETS / "index.html", headers={"Content-Security-Policy": PAGE_POLICY})

    async def asset(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name == "plotly.js":
            return web.Response(body=_plotly_js(), content_type="application/javascript")
        path = ASSETS / name
        if not re.fullmatch(r"[a-z-]+\.(js|css)", name) or not path.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(path)

    listed: dict[str, dict[str, Any]] = {}  # each folder's last list answer, encoded

    async def runs(request: web.Request) -> web.Response:
        here = store_for(request)
        summaries, pending = await here.listing()
        subfolders = here.subfolders() if here is store else {}  # one level: an experiment's folder
        key = (here.version, json.dumps(subfolders))
        last = listed.setdefault(str(here.root), {"version": -1, "body": b""})
        if last["version"] != key:  # 10,000 summaries take ~0.1 s to encode: not every 2 s for nothing
            body = {
                "root": str(here.root), "in": request.query.get("in", ""), "runs": summaries,
                "pending": pending, "subfolders": subfolders,
            }  # fmt: skip
            last.update(version=key, body=json.dumps(body).encode())
        return web.Response(body=last["body"], content_type="application/json")

    async def run(request: web.Request) -> web.Response:
        watch = await needs(request)
        h = watch.header
        return web.json_response(
            {
                **watch.summary(),
                "header": None
                if h is None
                else {"benchmark": h.benchmark, "persona": h.persona, "agent": h.agent, "meta": h.meta},
                "tags": sorted({t for q in watch.questions.values() for t in q["tags"]}),
                "series": watch.series(),
                "series_seq": watch.items[-1]["seq"] if watch.items else -1,
            }
        )

    async def items(request: web.Request) -> web.Response:
        watch = await needs(request)
        after = _int(request, "after", -1)
        limit = max(1, min(_int(request, "limit", PAGE_LIMIT), 5000))
        lo = bisect.bisect_right(watch.items, after, key=lambda i: int(i["seq"]))  # items are in seq order
        page = watch.items[lo : lo + limit]
        last = page[-1]["seq"] if page else after
        more = bool(page) and watch.items[-1]["seq"] > last
        return web.json_response({"items": page, "more": more, "status": watch.status})

    async def exchange(request: web.Request) -> web.Response:
        watch = await needs(request)
        data = watch.exchange(int(request.match_info["seq"]))
        if data is None:
            raise web.HTTPNotFound(text="no LLM exchange with that number in this run")
        return web.json_response(data)

    traced: dict[Path, tuple[int, dict[str, Any]]] = {}  # run folder → (log size, its autopsy)

    async def trace(request: web.Request) -> web.Response:
        """The memory autopsy of the run: each graded question's stage and timeline, each step
        with the log record it is read from (the page links it to the transcript)."""
        watch = await needs(request)
        size = (watch.run_dir / EVENTS_FILE).stat().st_size
        cached = traced.get(watch.run_dir)
        if cached is None or cached[0] != size:
            try:
                body = await asyncio.to_thread(_autopsy_json, watch.run_dir, store.root)
            except Exception as exc:  # a run the report can't read: say so, as the list does
                raise web.HTTPUnprocessableEntity(text=f"no autopsy for this run: {type(exc).__name__}: {exc}") from None
            if len(traced) >= 8:  # as many as the open run pages (a long-lived viewer stays small)
                traced.pop(next(iter(traced)))
            traced[watch.run_dir] = cached = (size, body)
        return web.json_response(cached[1])

    async def stream(request: web.Request) -> web.StreamResponse:
        """Server-sent events: new transcript items as the run logs them; a `status` event
        whenever the run's summary (status, phase, graded, mean, cost) changes. The client
        reconnects with `after` = the last seq."""
        watch = await needs(request)
        after = _int(request, "after", -1)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        task = asyncio.current_task()
        assert task is not None
        streams.add(task)
        watch.streams += 1
        described = ""
        pending = [i for i in watch.items if i["seq"] > after]
        try:
            while True:
                if pending:
                    await response.write(f"event: items\ndata: {json.dumps(pending)}\n\n".encode())
                    after = pending[-1]["seq"]
                # the header (phase, graded, mean, cost) moves with the run, not only its status
                summary = json.dumps(watch.summary())
                if summary != described:
                    described = summary
                    await response.write(f"event: status\ndata: {summary}\n\n".encode())
                await asyncio.sleep(POLL_SECONDS)
                pending = [i for i in await watch.refresh() if i["seq"] > after]
                if watch.follower.restarted:
                    await response.write(b"event: restarted\ndata: {}\n\n")
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            streams.discard(task)
            watch.streams -= 1
        return response

    async def end_streams(app: web.Application) -> None:
        """Open event streams never end by themselves: stop them so shutdown doesn't wait."""
        for task in list(streams):
            task.cancel()

    app.on_shutdown.append(end_streams)
    app.router.add_get("/", index)
    app.router.add_get("/assets/{name}", asset)
    app.router.add_get("/api/runs", runs)
    app.router.add_get("/api/runs/{run_id}", run)
    app.router.add_get("/api/runs/{run_id}/items", items)
    app.router.add_get("/api/runs/{run_id}/exchange/{seq:\\d+}", exchange)
    app.router.add_get("/api/runs/{run_id}/stream", stream)
    app.router.add_get("/api/runs/{run_id}/autopsy", trace)
    return app


def _autopsy_json(run_dir: Path, root: Path) -> dict[str, Any]:
    from gateway.report.autopsy import autopsy
    from gateway.report.recordings import load_run

    result = autopsy(load_run(run_dir), within=root)  # the viewer reads nothing outside its folder
    return {
        "memory_unseen": result.memory_unseen,
        "questions": {
            q.question_id: {
                "expected": q.expected,
                "verdict": q.verdict,
                "evidence": q.evidence,
                "stage": q.stage.value if q.stage else None,
                "steps": [
                    {
                        "seq": None if step.at is None else step.at.seq,
                        "parent": step.at is not None and step.at.inherited,
                        "kind": step.kind.value,
                        "detail": step.detail,
                    }
                    for step in q.steps
                ],
            }
            for q in result.questions
        },
    }
