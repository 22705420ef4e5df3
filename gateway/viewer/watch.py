"""One run's log followed as it grows: the viewer's transcript items, status and chart series.

What a caller may rely on: a `RunWatch` only reads (`LogFollower`), never locks or writes;
a torn or half-written log shows what is complete; a run started over (`--fresh`) is noticed
and read from its start again. A watch that is not `detailed` keeps counters only.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.lifecycle import process_alive
from gateway.log.events import (
    AgentInitiated,
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
    LateReply,
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
from gateway.log.follower import LogFollower
from gateway.log.lock import holder_pid
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError
from gateway.log.vocabulary import TerminationReason
from gateway.report.summary import mean_range
from gateway.run.progress import RunProgress
from gateway.traffic.recorder import message_refs

QUIET_LOG_SECONDS = 120.0  # a run with no `end` and no live runner pid, quiet this long: not running


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
    unresolved: set[str] = field(default_factory=set)  # questions whose grader was not sure
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)  # question → least, most its grade can be
    last_start: RunStart | None = None
    last_end: RunEnded | None = None
    last_seq: int = -1
    last_ts: float = 0.0  # the newest event's time: where a resumed start's stop began
    traffic: bool = False  # a model call of the agent reached the recorder
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
                    event.question_count,
                    stand_in=bool(event.agent.get("offline_stand_in")),
                )
                return
            case RunStart():
                self.last_start, self.last_end = event, None
            case RunEnded():
                self.last_end = event
            case Evaluation():
                self.scores[event.question_id] = event.score
                self.bounds[event.question_id] = event.bounds()
                if not event.certain:
                    self.unresolved.add(event.question_id)
                else:
                    self.unresolved.discard(event.question_id)
            case LLMExchange() if event.kind.conversational:
                self.traffic = True
        if self.detailed:
            self._index(event)
        self.last_seq, self.last_ts = event.seq, event.ts

    def _index(self, event: Event) -> None:
        """The transcript item, question, evidence, blob or exchange `event` makes."""
        match event:
            case RunStart():
                # a resumed start: the run was stopped from its last event till now (the chart's band)
                stopped = self.last_ts if event.resumed and self.last_seq >= 0 else None
                self._item(event, "start", resumed=event.resumed, stopped_at=stopped)
            case RunEnded():
                self._item(event, "end", reason=event.reason, detail=event.detail)
            case PhaseEntered():
                self._item(event, "phase", index=event.index, chapter=event.chapter, title=event.title)
            case SessionChanged():
                self._item(event, "session", action=event.action, reply=event.reply)
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
            case LateReply():
                self._item(event, "late_reply", text=event.text, answers=event.answers)
            case AgentInitiated():
                self._item(event, "agent_initiated", text=event.text, why=event.why)
            case Evaluation():
                asked = self.questions.get(event.question_id, {})
                evidence = self.evidence.get(event.question_id)
                self._item(
                    event, "grade", question_id=event.question_id, score=event.score, reason=event.reason,
                    answer=event.answer, attempts=event.attempts, first_score=event.first_score,
                    grader=event.grader, decided_by=event.decided_by, rewrites=list(event.rewrites),
                    expected=asked.get("expected", ""), tags=asked.get("tags", []),
                    certain=event.certain, bounds=list(event.bounds()),
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
                if event.kind.conversational:
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
            if self.last_end.reason is TerminationReason.COMPLETED:
                return "finished"
            return "resumable" if self.last_end.reason is TerminationReason.INTERRUPTED else "failed"
        if self.last_start and self.last_start.node:  # ran on a cluster node: its driver holds the folder
            driver = holder_pid(self.run_dir)
            return "running" if driver and driver != os.getpid() else "resumable"
        pid = self.last_start.pid if self.last_start else 0
        if pid > 0 and process_alive(pid) and pid != os.getpid():
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
            # a model call of the agent reached the recorder (else its compactions and memory calls
            # are not observable: no chart, never a zero); `recorder_url` says where it listened
            "recorded": self.traffic,
            "recorder_url": self.last_start.llm_url if self.last_start else "",
            "persona": str(h.persona.get("driver", "")) if h else "",
            # a fork: the run and checkpoint it started from (its teaching is that run's)
            "forked_from": {"run": h.parent.get("run"), "checkpoint": h.parent.get("checkpoint")}
            if h and h.parent
            else None,
            "phase": p.phase + 1,
            "phases": p.phases,
            "phase_title": p.phase_title,
            "graded": len(self.scores),
            "questions": p.questions,
            # never one confident mean over unresolved grades: the range instead (all wrong … all right)
            "mean": sum(self.scores.values()) / len(self.scores) if self.scores and not self.unresolved else None,
            "mean_range": self._mean_range(),
            "unresolved": sorted(self.unresolved),
            "cost": p.cost,
            "tokens": p.tokens,
            "created": h.created if h else 0,
            "events": self.last_seq + 1,
        }

    def _mean_range(self) -> list[float] | None:
        if not self.unresolved:
            return None
        span = mean_range(self.bounds.values())
        return list(span) if span else None

    def series(self) -> dict[str, list[list[Any]]]:
        """The context-size chart's data for the whole run (the transcript itself is paged)."""
        out: dict[str, list[list[Any]]] = {
            "calls": [], "compactions": [], "questions": [], "sessions": [], "stops": []
        }  # fmt: skip
        for i in self.items:
            if i["kind"] == "llm":
                out["calls"].append([i["ts"], i["input_tokens"]])
            elif i["kind"] == "compaction":
                out["compactions"].append([i["ts"], i["tokens_before"]])
            elif i["kind"] == "question" and not i["resent"]:
                out["questions"].append([i["ts"], i["question_id"]])
            elif i["kind"] == "session":  # a drop in context size right after one is explained
                out["sessions"].append([i["ts"], i["action"]])
            elif i["kind"] == "start" and i["stopped_at"] is not None:  # stopped, then resumed
                out["stops"].append([i["stopped_at"], i["ts"]])
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
