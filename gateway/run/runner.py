"""The runner: one run = one persona × one agent × one benchmark, driven to its end.

Only a `completed` run, or one that reached its limits (`limit_reached`: wall time, agent
turns, spend — a failure that is kept), is final; every other ending can be resumed by
running it again.

State is explicit: the run log is the single source of truth. A fresh run writes a header and
goes; a resumed run reads its log, rebuilds the persona's state by replaying the logged
replies into a fresh (deterministic) driver, re-sends a message that was sent but never
answered (flagged `resent`), and continues. Every exit — finished, Ctrl-C, agent failure,
crash in our code — ends with an `end` event naming a `TerminationReason` (when the log can
still be written) and a report, in `finally`.

Size: the run's state machine — drive, perform, the termination checks — is one concept with
one state; split, its state would be passed around instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.base import (
    AdapterError,
    AgentAdapter,
    AgentReplyTooLarge,
    CompactingAdapter,
    OffTurnAdapter,
    SessionState,
    can_compact,
)
from adapters.profiles import resolve
from gateway import __version__
from gateway.log.events import (
    AGENT_STATE_LOST,
    FAILED_ANSWER,
    RECORDER_BYPASSED,
    AgentInitiated,
    Asked,
    CheckpointSaved,
    ErrorEvent,
    Evaluation,
    Event,
    FactEdited,
    FactsMarked,
    FactTold,
    Header,
    LateReply,
    PersonaSlip,
    PersonaTurn,
    PhaseEntered,
    Replied,
    RunEnded,
    RunStart,
    Said,
    SessionChanged,
    TerminationReason,
)
from gateway.log.lineage import inherited_events
from gateway.log.redact import DEFAULT_SECRET_ENV, Redactor, redact_text, secret_values
from gateway.log.runlog import EVENTS_FILE, RunLog, RunLogWriteError, RunLogWriter, run_status
from gateway.log.scrub import scrub_text
from gateway.run.agents import AgentHandle, describe_agent, open_agent
from gateway.run.checkpoints import CheckpointError, SavedCheckpoint, archive_state
from gateway.run.config import RunSpec
from gateway.run.definition import agent_version, run_definition
from gateway.run.fork_start import restore_at_start
from gateway.run.forking import find_checkpoint
from gateway.run.journal import LocalJournal, LogAppender, RunJournal
from gateway.run.personas import build_driver, driver_name
from gateway.run.progress import RunProgress
from gateway.run.resume import conversation, same_action, told_but_not_logged
from gateway.run.traffic_state import RunTraffic, open_traffic
from persona.benchmark.model import Benchmark
from persona.drivers.actions import (
    AgentReply,
    Ask,
    Checkpoint,
    Compact,
    EditFact,
    EnterPhase,
    Evaluate,
    Finish,
    MarkTold,
    NewSession,
    PersonaAction,
    Say,
    Slip,
)
from persona.drivers.protocol import PersonaCantPlay, PersonaDriver

MAX_CONSECUTIVE_AGENT_ERRORS = 3


# the agent made calls outside any persona turn that no background pattern of its profile matched
BACKGROUND_UNRECOGNISED = "background_unrecognised"


class ResumeError(RuntimeError):
    """The log can't be continued (other benchmark, diverging replay); `--fresh` starts over."""


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    reason: TerminationReason | None
    skipped: bool = False
    resumed: bool = False
    resent: int = 0
    detail: str = ""  # why it ended, when not `completed` (the last agent error, an exception)

    @property
    def report(self) -> Path:
        return self.run_dir / "report.md"


class Run:
    """Drives one run; `execute()` returns how it ended. Not reusable.

    `recordings/<run id>` is the run's working folder (the agent's process, state and log file
    live there); `journal` says where its log is when that is elsewhere (a run on a cluster
    node logs to the driver's disk), and `benchmark` passes one already loaded (a node may not
    have the benchmark's files)."""

    def __init__(
        self,
        spec: RunSpec,
        recordings: Path,
        *,
        fresh: bool = False,
        journal: RunJournal | None = None,
        benchmark: Benchmark | None = None,
        lineage: tuple[SavedCheckpoint, list[Event]] | None = None,
    ) -> None:
        self.spec = spec
        self.run_dir = recordings / spec.id
        self.journal = journal or LocalJournal(self.run_dir)
        # every event passes here before the log: the run's own secret values (its agent's
        # token, a URL's password, the keys its settings point at) redacted wherever they appear
        self.redactor = Redactor(
            values=secret_values(
                {"agent": resolve(spec.agent), "persona": spec.persona, "env": DEFAULT_SECRET_ENV}
            )
        )
        self.fresh = fresh
        self.benchmark = benchmark or spec.played_benchmark()
        self.recordings = recordings
        # a fork: the checkpoint it starts from (its parent's log up to there is its prefix),
        # found when the run starts — its parent may run first in the same matrix
        self.parent: SavedCheckpoint | None = None
        # a fork on a cluster node: its checkpoint (the archive copied to this node) and its
        # inherited prefix, found on the driver (the parent's folder is not on this node)
        self.lineage = lineage
        self.handle: AgentHandle | None = None
        self.driver: PersonaDriver | None = None
        self.writer: LogAppender | None = None
        self.adapter: AgentAdapter | None = None
        self.traffic: RunTraffic | None = None
        self.llm_url: str | None = None
        self.agent_state = ""  # what the agent's start found in its state folder (RunStart.state)
        self.agent_errors_in_a_row = 0
        self.last_error: ErrorEvent | None = None  # the last agent error: how a failed run ended
        self.limit_detail = ""  # which limit ended the run
        self.spend_unknown_logged = False
        self.bypass_checked = False
        self.outcome = RunOutcome(spec.id, self.run_dir, None)
        self.progress = RunProgress(
            spec.id,
            len(self.benchmark.phases),
            len(self.benchmark.questions),
            stand_in=bool(describe_agent(spec.agent).get("offline_stand_in")),
        )

    def log(self, event: Event) -> Event:
        assert self.writer is not None
        if not isinstance(self.writer, RunLogWriter):  # a local writer redacts with ours itself
            event = self.redactor.event(event)
        logged = self.writer.append(event)
        self.progress.observe(logged)
        return logged

    async def execute(self) -> RunOutcome:
        """Run (or resume) to an end. Raises `RunInUse` when another process writes this run."""
        self.journal.acquire()
        try:
            return await self._execute()
        finally:
            self.journal.release()

    async def _execute(self) -> RunOutcome:
        if self.lineage is not None:
            self.parent = self.lineage[0]
        elif self.spec.parent is not None:  # `CheckpointError` (no such run or checkpoint): no log
            self.parent = find_checkpoint(self.recordings, *self.spec.parent)
        previous = self._open_log()
        for event in previous.events if previous else []:
            self.progress.observe(event)
        status = run_status(previous) if previous is not None else None
        if status is not None and status.final:
            self.outcome.skipped = True
            self.outcome.reason = status
            assert self.writer is not None
            self.writer.close()
            return self.outcome
        reason = TerminationReason.ERROR
        detail = ""
        try:
            history = self._inherited() + (previous.events if previous else [])
            replay = [e.response for e in history if isinstance(e, PersonaTurn)]
            self.driver = build_driver(self.spec.persona, self.benchmark, self.log, replay)
            if (start := getattr(self.driver, "start", None)) is not None:
                await start()  # an LLM persona's model is reached once before the agent starts
            self.traffic = open_traffic(
                resolve(self.spec.agent),
                self.benchmark,
                self.log,
                history,
                log_check=self.writer.check_writable if self.writer else None,
                secrets=self.redactor.values,
            )
            if self.traffic is not None and self.writer is not None:
                self.writer.check_writable()  # no room to record the agent's model: don't start it
            moved = previous is not None and self.journal.moved
            async with open_agent(
                self.spec.agent,
                self.run_dir,
                self.traffic.recorder if self.traffic else None,
                fresh=previous is None or moved,  # a moved run's agent has no state here: its snapshot
                restore=restore_at_start(self.parent, previous, moved),  # a fork: until a start restored
            ) as handle:
                self.handle = handle
                self.adapter, self.llm_url = handle.adapter, handle.llm_url
                self.agent_state = handle.state
                if hasattr(handle.adapter, "on_retry"):
                    handle.adapter.on_retry = self._log_retry
                for note in handle.notes:
                    self.log(ErrorEvent(source="runner", kind="agent_start", message=note))
                if moved and previous is not None:
                    self._log_moved(previous)
                try:
                    reason = await self._drive(previous, moved, history)
                    if reason == TerminationReason.LIMIT_REACHED:
                        detail = self.limit_detail
                    if self.last_error is not None and reason in (
                        TerminationReason.AGENT_FAILED,
                        TerminationReason.AGENT_LLM_FAILED,
                    ):  # the console and the report name it
                        detail = f"{self.last_error.source} {self.last_error.kind}: {self.last_error.message}"
                finally:  # the adapter closes with the agent (open_agent), after its process stopped
                    client = getattr(self.driver, "client", None)
                    if client is not None:
                        await client.close()
        except asyncio.CancelledError:
            reason = TerminationReason.INTERRUPTED
            raise
        except RunLogWriteError as exc:
            reason, detail = TerminationReason.LOG_FAILED, str(exc)
            raise
        except ResumeError as exc:
            reason, detail = TerminationReason.ERROR, str(exc)
            raise
        except AdapterError as exc:
            reason, detail = TerminationReason.AGENT_FAILED, f"{type(exc).__name__}: {exc}"
        except PersonaCantPlay as exc:
            reason, detail = TerminationReason.PERSONA_FAILED, str(exc)
        except CheckpointError as exc:
            reason, detail = TerminationReason.ERROR, f"checkpoint: {exc}"
        except Exception as exc:
            detail = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self.outcome.reason, self.outcome.detail = reason, detail
            self._finish(reason, detail)
        return self.outcome

    def _open_log(self) -> RunLog | None:
        def header() -> Header:
            return Header(
                tool_version=__version__,
                run_id=self.spec.id,
                benchmark={
                    "name": self.benchmark.name,
                    "path": str(self.spec.benchmark),
                    "hash": self.benchmark.content_hash,
                    "language": self.benchmark.language,
                    "questions": len(self.benchmark.questions),
                    "phases": len(self.benchmark.phases),
                    **(
                        {"rung": self.benchmark.rung, "distractors": list(self.benchmark.distractors)}
                        | ({"pool": str(self.spec.pool)} if self.spec.pool else {})
                        if self.benchmark.rung
                        else {}
                    ),
                    **({"checkpoint_at": self.spec.checkpoint_at} if self.spec.checkpoint_at else {}),
                    **({"until": self.spec.until} if self.spec.until else {}),
                    **({"questions": list(self.spec.questions)} if self.spec.questions is not None else {}),
                    **({"restate": True} if self.spec.restate else {}),
                },
                parent=(self.parent.reference() | ({} if self.spec.parent_prefix else {"prefix": False}))
                if self.parent
                else {},
                persona={**self.spec.persona, "driver": driver_name(self.spec.persona)},
                agent=describe_agent(self.spec.agent),
                meta=self.spec.meta,
                defines=run_definition(self.spec.persona, self.spec.limits)
                | {"agent_version": agent_version(self.spec.agent)},
            )

        self.writer, previous = self.journal.open(lambda: self.redactor.event(header()), self.fresh)
        if isinstance(self.writer, RunLogWriter):
            self.writer.redactor = self.redactor  # each event redacted once, by the writer
        if previous is None:
            return None
        if previous.header.benchmark.get("hash") != self.benchmark.content_hash:
            self.writer.close()
            raise ResumeError(
                f"{self.journal.location}: the benchmark {self.spec.benchmark} changed since this run started; "
                "resuming would mix two benchmarks — use --fresh to start over"
            )
        logged, wanted = (
            previous.header.persona,
            {**self.spec.persona, "driver": driver_name(self.spec.persona)},
        )
        if logged != wanted:
            self.writer.close()
            differ = sorted(k for k in {*logged, *wanted} if logged.get(k) != wanted.get(k))
            raise ResumeError(
                f"{self.journal.location}: this run was started with the persona {_persona_words(logged)}, "
                f"not {_persona_words(wanted)} (they differ in {', '.join(differ)}); resuming would mix two "
                f"personas in one run — resume it with the same persona (--persona {logged.get('driver')}), "
                "or use --fresh to start over"
            )
        return previous

    def _log_moved(self, previous: RunLog) -> None:
        before = sorted({e.node for e in previous.events if isinstance(e, RunStart)} - {""})
        message = (
            f"this run resumes on {self.journal.node}, where its agent has no state (it ran on "
            f"{', '.join(before) or 'another machine'}): the agent starts afresh from its snapshot in a "
            "new session, so what it remembered before is gone — answers after this point test a "
            "restarted agent, not its memory"
        )
        self.log(ErrorEvent(source="runner", kind=AGENT_STATE_LOST, message=message))
        print(f"[{self.spec.id}] warning: {message}", file=sys.stderr, flush=True)

    async def _drive(
        self, previous: RunLog | None, moved: bool = False, history: list[Event] | None = None
    ) -> TerminationReason:
        """Drive the run to its end, continuing `history` (a fork's inherited prefix, then this
        log's `previous` events) when there is one: its persona side is replayed into the driver
        and the agent's session resumed — or, for a run that `moved` to a node without its
        agent's state, a new session opened."""
        assert self.adapter is not None and self.driver is not None
        reply: AgentReply | None = None
        pending: PersonaAction | None = None
        history = history if history is not None else (previous.events if previous else [])
        pairs, session_id, turns = conversation(history) if history else ([], "", [])
        resume = SessionState(session_id, turns) if session_id and not moved else None
        session = await self.adapter.open(resume)
        self.log(
            RunStart(
                resumed=previous is not None,
                replayed_events=len(history),
                session_id=session,
                llm_url=self.llm_url or "",
                pid=os.getpid(),
                node=self.journal.node,
                state=self.agent_state,
                restored=self.handle is not None and self.handle.restored,
            )
        )
        if previous is not None:
            self.outcome.resumed = True
            for key in told_but_not_logged(history, pairs):
                file, _, fact_id = key.partition(":")
                self.log(FactTold(file=file, fact_id=fact_id))
        if history:
            for event, answer in pairs:
                action = await self.driver.next_action(reply)
                if not same_action(action, event):
                    raise ResumeError(
                        f"{self.journal.location}: replaying the log diverged at event {event.seq} "
                        f"(logged {event.type}, the persona now does {type(action).__name__}); use --fresh"
                    )
                reply = answer
                if isinstance(action, (Say, Ask)) and answer is None:
                    pending = action
                    break
        if pending is not None:
            self.outcome.resent += 1
            reply = await self._perform(pending, resent=True)
        while True:
            action = await self.driver.next_action(reply)
            if isinstance(action, Finish):
                return TerminationReason.COMPLETED
            if isinstance(action, (Say, Ask)) and (reached := self._limit_reached()):
                self.limit_detail = reached
                return TerminationReason.LIMIT_REACHED
            reply = await self._perform(action)
            if self.agent_errors_in_a_row >= MAX_CONSECUTIVE_AGENT_ERRORS:
                if self.last_error is not None and self.last_error.source == "agent-llm":
                    return TerminationReason.AGENT_LLM_FAILED
                return TerminationReason.AGENT_FAILED

    def _limit_reached(self) -> str:
        """Which of the run's limits the next message would pass ("" when none)."""
        reached, spend_unknown = self.progress.limit_reached(self.spec.limits, time.time())
        if spend_unknown and not self.spend_unknown_logged:  # said once; the other limits still hold
            self.spend_unknown_logged = True
            message = "spend_usd can't be enforced: a model's price is unknown"
            self.log(ErrorEvent(source="runner", kind="limit", message=message))
        return reached

    async def _perform(self, action: PersonaAction, resent: bool = False) -> AgentReply | None:
        assert self.adapter is not None
        traffic = self.traffic
        match action:
            case EnterPhase():
                if traffic:
                    traffic.enter_phase(action.index)
                self.log(
                    PhaseEntered(
                        index=action.index,
                        chapter=action.chapter,
                        title=action.title,
                        require_all_facts=list(action.require_all_facts),
                    )
                )
            case Say():
                self.log(
                    Said(
                        text=action.text,
                        purpose=action.purpose,
                        fact_ids=list(action.fact_ids),
                        question_id=action.question_id,
                        resent=resent,
                    )
                )
                reply = await self._send(action.text)
                if reply.error is None:
                    for key in action.fact_ids:
                        file, _, fact_id = key.partition(":")
                        self.log(FactTold(file=file, fact_id=fact_id))
                return reply
            case Ask():
                if traffic:
                    traffic.question_started(action.question_id, action.text, action.expected, action.tags)
                self.log(
                    Asked(
                        question_id=action.question_id,
                        text=action.text,
                        expected=action.expected,
                        tags=list(action.tags),
                        resent=resent,
                    )
                )
                return await self._send(action.text)
            case NewSession():
                session = await self._until_done("new session", self.adapter.new_session)
                self._log_off_turn()
                if traffic:
                    traffic.session_changed()
                answered = str(getattr(self.adapter, "session_reply", ""))  # what the agent said to /new
                self.log(SessionChanged(action="new_session", detail=session, reply=answered))
            case Compact():
                adapter = self.adapter
                if not can_compact(adapter):  # refused before the run; a replay may still get here
                    self.log(
                        ErrorEvent(
                            source="runner",
                            kind="unsupported",
                            message="bench.compact(): this agent's adapter can't ask it to compact",
                        )
                    )
                    self.log(SessionChanged(action="compact", detail="unsupported"))
                else:
                    assert isinstance(adapter, CompactingAdapter)
                    if traffic:  # the compaction command is a message: its model calls are its turn's
                        traffic.recorder.turn_started()
                    answered = await self._until_done("compact", adapter.compact)
                    if traffic:
                        traffic.recorder.turn_ended()
                    self._log_off_turn()
                    self.log(SessionChanged(action="compact", detail="", reply=answered))
            case Checkpoint():
                await self._checkpoint(action.name)
            case MarkTold():
                self.log(FactsMarked(fact_ids=list(action.fact_ids)))
                for key in action.fact_ids:
                    file, _, fact_id = key.partition(":")
                    self.log(FactTold(file=file, fact_id=fact_id))
            case Slip():
                self.log(PersonaSlip(kind=action.kind, detail=action.detail))
            case EditFact():
                if traffic:
                    traffic.fact_edited(action.old, action.new)
                self.log(FactEdited(file=action.file, fact_id=action.fact_id, old=action.old, new=action.new))
            case Evaluate():
                if traffic:
                    traffic.question_finished()
                self.log(
                    Evaluation(
                        question_id=action.question_id,
                        score=action.score,
                        reason=action.reason,
                        attempts=action.attempts,
                        first_score=action.first_score,
                        answer=action.answer,
                        grader=action.grader,
                        certain=action.certain,
                        low=action.low,
                        high=action.high,
                    )
                )
        return None

    def _inherited(self) -> list[Event]:
        """A fork's prefix: its parent's events up to the checkpoint (never re-graded: they are
        the parent's); [] for a run that is not a fork."""
        if self.parent is None or not self.spec.parent_prefix:
            return []
        if self.lineage is not None:
            return self.lineage[1]
        return inherited_events(self.run_dir / EVENTS_FILE, Header(run_id=self.spec.id, parent=self.parent.reference()))

    async def _checkpoint(self, name: str) -> None:
        """Stop the agent cleanly between two settled turns, archive its state folder, start it
        again on the same session. Logged only once the archive is whole: a run killed before
        takes it again on resume."""
        handle = self.handle
        if handle is None or handle.state_dir is None or handle.restart_around is None:
            message = f"checkpoint {name!r}: this agent's state is not held by marathonbench; nothing archived"
            self.log(ErrorEvent(source="runner", kind="unsupported", message=message))
            return
        if self.writer is not None:
            self.writer.flush()
        state_dir, restart, rules = handle.state_dir, handle.restart_around, handle.state_rules
        saved: list[CheckpointSaved] = []
        last = self.spec.until == name  # the run ends here: its agent is not started again for nothing
        await self._until_done(
            f"checkpoint {name}",
            lambda: restart(lambda: saved.append(archive_state(state_dir, self.run_dir, name, rules)), not last),
        )
        self._log_off_turn()
        if self.traffic is not None:
            self.traffic.session_changed()  # a restarted agent's first call is no compaction
        self.journal.keep(self.run_dir / saved[-1].archive, saved[-1].archive)  # on a node: to the driver
        self.log(saved[-1])
        print(f"[{self.spec.id}] checkpoint {name!r}: state {saved[-1].state_hash[:12]}, {saved[-1].bytes:,} bytes", flush=True)

    async def _until_done[T](self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """A session command (new session, compact) that fails is logged and tried again, like a
        message. After MAX_CONSECUTIVE_AGENT_ERRORS agent errors in a row the last one is raised
        (the run ends `agent_failed`). The command's own event is logged only once it went
        through, so a resumed run performs it again."""
        while True:
            try:
                result = await call()
            except AdapterError as exc:
                self._agent_error(ErrorEvent(source="agent", kind=exc.kind, message=f"{what}: {exc}"))
                if exc.fatal or self.agent_errors_in_a_row >= MAX_CONSECUTIVE_AGENT_ERRORS:
                    raise
                continue
            self.agent_errors_in_a_row = 0
            return result

    def _log_retry(self, message: str) -> None:
        self._stop_if_recorder_failed()
        self.log(ErrorEvent(source="agent", kind="retry", message=message))

    def _stop_if_recorder_failed(self) -> None:
        """An agent error while the recorder refuses the agent's model calls (its log can't take
        them: a full disk) is ours, not the agent's — the run stops `log_failed`, naming why,
        and no agent error is logged for it."""
        if self.traffic is not None and self.traffic.recorder.failure:
            raise RunLogWriteError(f"the LLM-traffic recorder stopped: {self.traffic.recorder.failure}")

    def _agent_error(self, error: ErrorEvent) -> None:
        """An error of the agent (or of its model) counts towards the errors in a row."""
        self.agent_errors_in_a_row += 1
        error.message = redact_text(error.message)  # it may quote the agent's log
        self.last_error = error
        self.log(error)

    async def _send(self, text: str) -> AgentReply:
        """Send a message and await its settled reply. A reply that came out of a failed model
        call (the recorder saw the turn's last call fail) is logged, then treated as an agent
        error: its facts don't count as told and it is not graded; it is sent again."""
        assert self.adapter is not None
        if self.traffic is not None:
            self.traffic.recorder.turn_started()
        if self.writer is not None:
            self.writer.flush()  # what led to this message is on the log's disk before it leaves
        started = time.monotonic()
        try:
            answer = await self.adapter.send(text)
        except AgentReplyTooLarge as exc:  # cut at the limit: logged, and graded on nothing
            self._stop_if_recorder_failed()
            self._log_off_turn()
            self.log(ErrorEvent(source="agent", kind=exc.kind, message=str(exc)))
            answer = ""
        except AdapterError as exc:
            self._stop_if_recorder_failed()
            self._log_off_turn()
            self._agent_error(ErrorEvent(source="agent", kind=exc.kind, message=str(exc)))
            if exc.fatal:  # the agent is gone or refuses us: sending again can't help
                raise
            return AgentReply("", error=f"{exc.kind}: {exc}")
        self._log_off_turn()
        answer, invalid = scrub_text(answer)
        if invalid:
            message = f"the reply held {invalid} lone surrogate code point(s), which are not text; replaced by U+FFFD"
            self.log(ErrorEvent(source="agent", kind="invalid_text", message=message))
        self.log(Replied(text=answer, elapsed=round(time.monotonic() - started, 4)))
        if self.traffic is not None:
            self.traffic.recorder.turn_ended()
            self._stop_if_recorder_failed()
            await self.traffic.settled()
            self._check_bypass(self.traffic)
            failed = self.traffic.recorder.turn_failure()
            if failed is not None:
                message = f"the agent's answer came out of a failed model call ({failed})"
                self._agent_error(ErrorEvent(source="agent-llm", kind=FAILED_ANSWER, message=message))
                return AgentReply("", error=f"{FAILED_ANSWER}: {message}")
        self.agent_errors_in_a_row = 0
        return AgentReply(answer)

    def _log_off_turn(self) -> None:
        """What the agent sent that is not the reply to the message just sent: late replies to
        earlier messages and messages of its own — logged apart, never graded."""
        if not isinstance(self.adapter, OffTurnAdapter):
            return
        for off in self.adapter.take_off_turn():
            if off.kind == "late":
                self.log(LateReply(text=off.text, answers=off.answers))
            else:
                self.log(AgentInitiated(text=off.text, why=off.why))

    def _check_bypass(self, traffic: RunTraffic) -> None:
        """Once, at the first reply: an agent whose LLM calls don't reach the recorder (its base
        URL points straight at the provider) is told at once, not in the report hours later."""
        if self.bypass_checked or not self.llm_url:
            return
        self.bypass_checked = True
        if traffic.recorder.model_calls == 0:
            message = (
                f"the agent replied, but none of its LLM calls reached the recorder: point the agent's "
                f"LLM base URL at {self.llm_url} — until then its compactions and memory calls are not observable"
            )
            self.log(ErrorEvent(source="runner", kind=RECORDER_BYPASSED, message=message))
            print(f"[{self.spec.id}] warning: {message}", file=sys.stderr, flush=True)

    def _finish(self, reason: TerminationReason, detail: str) -> None:
        if self.writer is None:
            return
        detail = self.redactor.text(detail)
        self.outcome.detail = detail
        try:
            if self.traffic is not None and (note := self.traffic.recorder.background_note()):
                self.log(ErrorEvent(source="runner", kind=BACKGROUND_UNRECOGNISED, message=note))
                print(f"[{self.spec.id}] warning: {note}", file=sys.stderr, flush=True)
            self.log(RunEnded(reason=reason.value, detail=detail))
        except RunLogWriteError:
            pass  # the log is what failed; the report below still says what we have
        finally:
            with contextlib.suppress(RunLogWriteError):  # never in place of the error that ended the run
                self.writer.close()
        with contextlib.suppress(OSError):
            self.journal.finish(self.benchmark)


async def run_spec(spec: RunSpec, recordings: Path, *, fresh: bool = False) -> RunOutcome:
    return await Run(spec, recordings, fresh=fresh).execute()


def _persona_words(settings: dict[str, Any]) -> str:
    extra = ", ".join(f"{k}={v}" for k, v in sorted(settings.items()) if k != "driver")
    return f"{settings.get('driver')}" + (f" ({extra})" if extra else "")
