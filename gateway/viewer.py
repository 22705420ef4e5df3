"""`marathon view`: a live web viewer for the runs under a recordings folder.

An aiohttp app on 127.0.0.1 serving one page (`viewer_assets/`, plotly.js from the installed
plotly package: nothing from a CDN) and a small JSON API over the run logs:

    GET /api/runs                         every run: status, benchmark, agent, persona, progress, score, cost
    GET /api/runs/{id}                    one run: header, status, questions, chart series
    GET /api/runs/{id}/items?after=&limit= the transcript, paged by log sequence number
    GET /api/runs/{id}/exchange/{seq}     one recorded LLM exchange (request and response, as logged: redacted)
    GET /api/runs/{id}/stream?after=      server-sent events: transcript items as the log grows

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
import os
import re
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from gateway.events import (
    Asked,
    Blob,
    CanaryHit,
    CompactionSeen,
    ErrorEvent,
    Evaluation,
    Event,
    EvidenceCheck,
    FactEdited,
    Header,
    LLMExchange,
    MemoryCallSeen,
    PersonaSlip,
    PhaseEntered,
    Replied,
    RunEnded,
    RunStart,
    Said,
    SessionChanged,
)
from gateway.progress import RunProgress
from gateway.runlog import EVENTS_FILE, LogFollower, RunLogFormatError
from gateway.traffic.recorder import message_refs

ASSETS = Path(__file__).parent / "viewer_assets"
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
PAGE_LIMIT = 500
OPEN_RUNS = 8  # run pages whose details stay in memory (a reopened one is read again)
POLL_SECONDS = 0.3
QUIET_LOG_SECONDS = 120.0  # a run with no `end` and no live runner pid, quiet this long: not running


PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


@functools.cache
def _plotly_js() -> bytes:
    from plotly.offline import get_plotlyjs

    script: str = get_plotlyjs()
    return script.encode()


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class RunWatch:
    """One run, followed as its log grows: counters and status; when `detailed`, also the
    transcript items, chart series and recorded LLM exchanges (what a run page needs — a run
    in the list keeps only its counters, so a folder of many long runs stays small)."""

    run_dir: Path
    detailed: bool = True
    follower: LogFollower = field(init=False)
    header: Header | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    exchanges: dict[int, LLMExchange] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)
    evidence: dict[str, bool] = field(default_factory=dict)
    progress: RunProgress = field(init=False)
    scores: dict[str, float] = field(default_factory=dict)
    last_start: RunStart | None = None
    last_end: RunEnded | None = None
    last_seq: int = -1
    traffic: bool = False  # an LLM exchange was recorded
    streams: int = 0  # open event streams on this watch: it stays detailed while there are any
    error: str = ""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        self.follower = LogFollower(self.run_dir / EVENTS_FILE)
        self.progress = RunProgress(self.run_dir.name, 0, 0)

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    async def refresh(self) -> list[dict[str, Any]]:
        """Read what was appended since the last call; the new transcript items."""
        async with self.lock:
            try:
                events = await asyncio.to_thread(self.follower.read_new)
            except (OSError, RunLogFormatError) as exc:
                self.error = str(exc)
                return []
            if self.follower.restarted:  # the run was started over (--fresh)
                fresh = RunWatch(self.run_dir, self.detailed)
                self.__dict__.update(
                    {k: v for k, v in fresh.__dict__.items() if k not in ("follower", "lock", "streams")}
                )
            start = len(self.items)
            for event in events:
                self._take(event)
            return self.items[start:]

    def _item(self, event: Event, kind: str, **fields: Any) -> None:
        self.items.append({"kind": kind, "seq": event.seq, "ts": event.ts, **fields})

    def _take(self, event: Event) -> None:
        self.progress.observe(event)
        match event:
            case Header():
                self.header = event
                self.progress = RunProgress(
                    event.run_id or self.run_id,
                    int(event.benchmark.get("phases", 0)),
                    int(event.benchmark.get("questions", 0)),
                    stand_in=bool(event.agent.get("offline_stand_in")),
                )
                return
            case RunStart():
                self.last_start, self.last_end = event, None
            case RunEnded():
                self.last_end = event
            case Evaluation():
                self.scores[event.question_id] = event.score
            case LLMExchange():
                self.traffic = True
        self.last_seq = event.seq
        if self.detailed:
            self._index(event)

    def _index(self, event: Event) -> None:
        """The transcript item, question, evidence, blob or exchange `event` makes."""
        match event:
            case RunStart():
                self._item(event, "start", resumed=event.resumed)
            case RunEnded():
                self._item(event, "end", reason=event.reason, detail=event.detail)
            case PhaseEntered():
                self._item(event, "phase", index=event.index, chapter=event.chapter, title=event.title)
            case SessionChanged():
                self._item(event, "session", action=event.action)
            case Said():
                self._item(
                    event, "persona", text=event.text, purpose=event.purpose, facts=event.fact_ids,
                    question_id=event.question_id, resent=event.resent,
                )  # fmt: skip
            case Asked():
                self.questions[event.question_id] = {
                    "text": event.text,
                    "expected": event.expected,
                    "tags": event.tags,
                }
                self._item(
                    event, "question", question_id=event.question_id, text=event.text, expected=event.expected,
                    tags=event.tags, resent=event.resent,
                )  # fmt: skip
            case Replied():
                self._item(event, "agent", text=event.text, elapsed=event.elapsed)
            case Evaluation():
                asked = self.questions.get(event.question_id, {})
                evidence = self.evidence.get(event.question_id)
                self._item(
                    event, "grade", question_id=event.question_id, score=event.score, reason=event.reason,
                    answer=event.answer, attempts=event.attempts, first_score=event.first_score,
                    grader=event.grader, expected=asked.get("expected", ""), tags=asked.get("tags", []),
                    evidence=None if evidence is None else ("in context" if evidence else "beyond the boundary"),
                )  # fmt: skip
            case EvidenceCheck():
                self.evidence[event.question_id] = event.in_context
            case FactEdited():
                self._item(event, "edit", fact=f"{event.file}:{event.fact_id}", old=event.old, new=event.new)
            case ErrorEvent():
                self._item(event, "error", source=event.source, error=event.kind, message=event.message)
            case PersonaSlip():
                self._item(event, "slip", slip=event.kind, detail=event.detail)
            case Blob():
                self.blobs[event.ref] = event.data
            case LLMExchange():
                self.exchanges[event.seq] = event
                if event.kind != "probe":
                    self._item(
                        event, "llm", input_tokens=event.input_tokens, question_id=event.question_id,
                        call=event.kind, status=event.status,
                    )  # fmt: skip
            case CompactionSeen():
                self._item(
                    event, "compaction", compaction=event.kind, tokens_before=event.tokens_before,
                    tokens_after=event.tokens_after, exchange=event.exchange,
                )  # fmt: skip
            case MemoryCallSeen():
                self._item(
                    event, "memory", tool=event.tool, operation=event.operation, target=event.target,
                    exchange=event.exchange, question_id=event.question_id,
                )  # fmt: skip
            case CanaryHit():
                self._item(event, "canary", marker=event.marker, exchange=event.exchange)

    @property
    def status(self) -> str:
        """running | finished | failed | resumable | unreadable."""
        if self.header is None:
            return "unreadable" if self.error else "starting"
        if self.last_end is not None:
            if self.last_end.reason == "completed":
                return "finished"
            return "resumable" if self.last_end.reason == "interrupted" else "failed"
        pid = self.last_start.pid if self.last_start else 0
        if _pid_alive(pid) and pid != os.getpid():
            return "running"
        if pid == 0:  # a log from before runners logged their pid: judge by its age
            try:
                quiet = time.time() - (self.run_dir / EVENTS_FILE).stat().st_mtime
            except OSError:
                quiet = QUIET_LOG_SECONDS
            return "running" if quiet < QUIET_LOG_SECONDS else "resumable"
        return "resumable"  # killed or crashed: `marathon run` picks it up

    def summary(self) -> dict[str, Any]:
        h = self.header
        p = self.progress
        agent = h.agent if h else {}
        return {
            "id": self.run_id,
            "status": self.status,
            "error": self.error,
            "benchmark": h.benchmark.get("name", "") if h else "",
            "rung": h.benchmark.get("rung", "") if h else "",
            "agent": str(agent.get("profile") or agent.get("adapter") or ""),
            "model": str(agent.get("model", "")),
            "stand_in": bool(agent.get("offline_stand_in")),
            # the agent's LLM traffic goes through the recorder (else no chart, no memory calls)
            "recorded": self.traffic or bool(self.last_start and self.last_start.llm_url),
            "persona": str(h.persona.get("driver", "")) if h else "",
            "phase": p.phase + 1,
            "phases": p.phases,
            "phase_title": p.phase_title,
            "graded": len(self.scores),
            "questions": p.questions,
            "mean": sum(self.scores.values()) / len(self.scores) if self.scores else None,
            "cost": p.cost,
            "tokens": p.tokens,
            "created": h.created if h else 0,
            "events": self.last_seq + 1,
        }

    def series(self) -> dict[str, list[list[Any]]]:
        """The context-size chart's data for the whole run (the transcript itself is paged)."""
        out: dict[str, list[list[Any]]] = {"calls": [], "compactions": [], "questions": []}
        for i in self.items:
            if i["kind"] == "llm":
                out["calls"].append([i["ts"], i["input_tokens"]])
            elif i["kind"] == "compaction":
                out["compactions"].append([i["ts"], i["tokens_before"]])
            elif i["kind"] == "question" and not i["resent"]:
                out["questions"].append([i["ts"], i["question_id"]])
        return out

    def exchange(self, seq: int) -> dict[str, Any] | None:
        """An LLM exchange as recorded, its messages rebuilt from the content-addressed blobs."""
        ex = self.exchanges.get(seq)
        if ex is None:
            return None

        def text(ref: str) -> str:
            return self.blobs.get(ref, b"").decode("utf-8", "replace") if ref else ""

        messages = []
        for ref in message_refs(ex, self.exchanges):
            try:
                messages.append(json.loads(text(ref)))
            except ValueError:
                messages.append({"role": "?", "content": text(ref)})
        try:
            tools = json.loads(text(ex.tools_ref)) if ex.tools_ref else []
        except ValueError:
            tools = []
        return {
            "seq": ex.seq, "ts": ex.ts, "api": ex.api, "method": ex.method, "path": ex.path, "status": ex.status,
            "model": ex.model, "stream": ex.stream, "kind": ex.kind, "system": text(ex.system_ref),
            "messages": messages, "tools": [t.get("name", "?") for t in tools if isinstance(t, dict)],
            "params": ex.params, "request_headers": ex.request_headers, "text": ex.text,
            "tool_calls": ex.tool_calls, "usage": ex.usage, "stop_reason": ex.stop_reason, "error": ex.error,
            "question_id": ex.question_id, "raw_request": text(ex.request_ref)[:20000],
        }  # fmt: skip


class Recordings:
    """The runs under one folder, each followed on demand: every run's counters (for the list),
    and the details of the `OPEN_RUNS` run pages opened last (or still streaming)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.watches: dict[str, RunWatch] = {}  # counters only
        self.open: OrderedDict[str, RunWatch] = OrderedDict()  # detailed, least recently opened first

    def run_dir(self, run_id: str) -> Path | None:
        """The folder of `run_id`, only when it is a run directly under the recordings folder."""
        if not RUN_ID.match(run_id):
            return None
        candidate = (self.root / run_id).resolve()
        if candidate.parent != self.root or not (candidate / EVENTS_FILE).is_file():
            return None
        return candidate

    async def watch(self, run_id: str, detailed: bool = True) -> RunWatch | None:
        """The run's watch, brought up to date; None when `run_id` names no run here."""
        run_dir = self.run_dir(run_id)
        if run_dir is None:
            return None
        watch = self.open.get(run_id)
        if watch is not None:
            if detailed:  # the list's refreshes don't count as opening a run
                self.open.move_to_end(run_id)
        elif detailed:
            watch = self.open[run_id] = RunWatch(run_dir, detailed=True)
            self.watches.pop(run_id, None)
            self._close_least_recent()
        else:
            watch = self.watches.get(run_id)
            if watch is None:
                watch = self.watches[run_id] = RunWatch(run_dir, detailed=False)
        await watch.refresh()
        return watch

    def _close_least_recent(self) -> None:
        """Keep OPEN_RUNS detailed watches; one with an open stream stays."""
        for run_id in [r for r, w in self.open.items() if w.streams == 0][
            : max(0, len(self.open) - OPEN_RUNS)
        ]:
            self.open.pop(run_id)

    def subfolders(self) -> dict[str, int]:
        """Folders below this one that hold runs of their own (an experiment's recordings):
        they are separate recordings folders, listed so the page can point at them."""
        counts: dict[str, int] = {}
        for log in self.root.glob(f"*/*/{EVENTS_FILE}"):
            folder = log.parent.parent
            if not (folder / EVENTS_FILE).exists():
                counts[folder.name] = counts.get(folder.name, 0) + 1
        return dict(sorted(counts.items()))

    async def all(self) -> list[RunWatch]:
        ids = sorted(p.parent.name for p in self.root.glob(f"*/{EVENTS_FILE}"))
        watches = [w for w in [await self.watch(i, detailed=False) for i in ids] if w is not None]
        return sorted(watches, key=lambda w: -(w.header.created if w.header else 0))


def _int(request: web.Request, name: str, default: int) -> int:
    try:
        return int(request.query.get(name, default))
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be a whole number") from None


STORE = web.AppKey("recordings", Recordings)


def make_app(recordings: Path) -> web.Application:
    store = Recordings(recordings)
    app = web.Application()
    app[STORE] = store
    streams: set[asyncio.Task[Any]] = set()

    async def needs(request: web.Request) -> RunWatch:
        watch = await store.watch(request.match_info["run_id"])
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

    async def runs(request: web.Request) -> web.Response:
        return web.json_response(
            {
                "root": str(store.root),
                "runs": [w.summary() for w in await store.all()],
                "subfolders": store.subfolders(),
            }
        )

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

    async def stream(request: web.Request) -> web.StreamResponse:
        """Server-sent events: new transcript items as the run logs them; a `status` event
        when the run's status changes. The client reconnects with `after` = the last seq."""
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
        status = ""
        pending = [i for i in watch.items if i["seq"] > after]
        try:
            while True:
                if pending:
                    await response.write(f"event: items\ndata: {json.dumps(pending)}\n\n".encode())
                    after = pending[-1]["seq"]
                if watch.status != status:
                    status = watch.status
                    await response.write(f"event: status\ndata: {json.dumps(watch.summary())}\n\n".encode())
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
    return app
