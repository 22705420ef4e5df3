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

Beside it: run_header.py (header, resume check), turns.py (the turns), fork_start.py (forks).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

from adapters.base import (
    AdapterError,
    AgentAdapter,
    CompactingAdapter,
    RetryNotifying,
    SessionState,
    can_compact,
    session_reply,
)
from adapters.profiles import resolve
from gateway.log.events import (
    Asked,
    CheckpointSaved,
    ErrorEvent,
    Evaluation,
    Event,
    FactEdited,
    FactsMarked,
    FactTold,
    PersonaSlip,
    PersonaTurn,
    PhaseEntered,
    RunEnded,
    RunStart,
    Said,
    SessionChanged,
)
from gateway.log.redact import DEFAULT_SECRET_ENV, Redactor, secret_values
from gateway.log.runlog import RunLog, RunLogWriteError, RunLogWriter, run_status
from gateway.log.vocabulary import ErrorKind, ErrorSource, SessionAction, TerminationReason
from gateway.report.markdown import reports_behind
from gateway.run.agents import AgentHandle, describe_agent, open_agent
from gateway.run.checkpoints import CheckpointError, SavedCheckpoint, archive_state
from gateway.run.config import RunSpec
from gateway.run.fork_group import stale_fork_refusal
from gateway.run.fork_start import inherited_prefix, restore_at_start
from gateway.run.forking import find_checkpoint
from gateway.run.journal import LocalJournal, LogAppender, RunJournal
from gateway.run.personas import build_driver
from gateway.run.progress import RunProgress
from gateway.run.resume import conversation, same_action, told_but_not_logged
from gateway.run.run_header import ResumeError, RunOutcome, resume_refusal, run_header, window_changes
from gateway.run.run_limits import RunLimits
from gateway.run.traffic_state import RunTraffic, open_traffic
from gateway.run.turns import MAX_CONSECUTIVE_AGENT_ERRORS, AgentTurns
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
from persona.drivers.protocol import PersonaCantPlay, PersonaDriver, close_driver, start_driver


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
        self.turns: AgentTurns | None = None  # messages and session commands, once the agent is open
        self.limit_detail = ""  # which limit ended the run
        self.outcome = RunOutcome(spec.id, self.run_dir, None)
        self.progress = RunProgress(
            spec.id,
            len(self.benchmark.phases),
            len(self.benchmark.questions),
            stand_in=bool(describe_agent(spec.agent).get("offline_stand_in")),
        )
        self.limits = RunLimits(spec.limits, self.progress, self.log)

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
            if reports_behind(self.run_dir):  # stopped between its end record and its report
                with contextlib.suppress(OSError):
                    self.journal.finish(self.benchmark)
            return self.outcome
        reason = TerminationReason.ERROR
        detail = ""
        try:
            forked = self.parent is not None and self.spec.parent_prefix
            prefix = inherited_prefix(self.parent, self.run_dir, self.lineage) if forked and self.parent else []
            history = prefix + (previous.events if previous else [])
            self.progress.inherit(prefix)
            replay = [e.response for e in history if isinstance(e, PersonaTurn)]
            self.driver = build_driver(self.spec.persona, self.benchmark, self.log, replay)
            await start_driver(self.driver)  # an LLM persona's model is reached once before the agent starts
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
                turns = self.turns = AgentTurns(
                    handle.adapter, self.traffic, self.log, self._flush, self.spec.id, self.llm_url
                )
                if isinstance(handle.adapter, RetryNotifying):
                    handle.adapter.on_retry = turns.log_retry
                for note in handle.notes:
                    self.log(ErrorEvent(source=ErrorSource.RUNNER, kind=ErrorKind.AGENT_START, message=note))
                if moved and previous is not None:
                    self._log_moved(previous)
                try:
                    reason = await self._drive(previous, moved, history)
                    if reason == TerminationReason.LIMIT_REACHED:
                        detail = self.limit_detail
                    last_error = turns.last_error
                    if last_error is not None and reason in (
                        TerminationReason.AGENT_FAILED,
                        TerminationReason.AGENT_LLM_FAILED,
                    ):  # the console and the report name it
                        detail = f"{last_error.source} {last_error.kind}: {last_error.message}"
                finally:  # the adapter closes with the agent (open_agent), after its process stopped
                    await close_driver(self.driver)
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
        header = run_header(self.spec, self.benchmark, self.parent)
        self.writer, previous = self.journal.open(lambda: self.redactor.event(header), self.fresh)
        if isinstance(self.writer, RunLogWriter):
            self.writer.redactor = self.redactor  # each event redacted once, by the writer
        if previous is None:
            return None
        refusal = resume_refusal(previous, self.spec, self.benchmark, self.journal.location) or stale_fork_refusal(
            previous, self.parent, self.journal.location
        )
        if refusal is not None:
            self.writer.close()
            raise ResumeError(refusal)
        return previous

    def _log_moved(self, previous: RunLog) -> None:
        before = sorted({e.node for e in previous.events if isinstance(e, RunStart)} - {""})
        message = (
            f"this run resumes on {self.journal.node}, where its agent has no state (it ran on "
            f"{', '.join(before) or 'another machine'}): the agent starts afresh from its snapshot in a "
            "new session, so what it remembered before is gone — answers after this point test a "
            "restarted agent, not its memory"
        )
        self.log(ErrorEvent(source=ErrorSource.RUNNER, kind=ErrorKind.AGENT_STATE_LOST, message=message))
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
                persona_window=window_changes(previous, self.spec) if previous is not None else {},
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
            if isinstance(action, (Say, Ask)) and (reached := self.limits.reached(self.writer)):
                self.limit_detail = reached
                return TerminationReason.LIMIT_REACHED
            reply = await self._perform(action)
            if self.turns is not None and self.turns.errors_in_a_row >= MAX_CONSECUTIVE_AGENT_ERRORS:
                if self.turns.last_error is not None and self.turns.last_error.source is ErrorSource.AGENT_LLM:
                    return TerminationReason.AGENT_LLM_FAILED
                return TerminationReason.AGENT_FAILED

    async def _perform(self, action: PersonaAction, resent: bool = False) -> AgentReply | None:
        assert self.adapter is not None and self.turns is not None
        turns = self.turns
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
                reply = await turns.send(action.text)
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
                return await turns.send(action.text)
            case NewSession():
                session = await turns.until_done("new session", self.adapter.new_session)
                turns.log_off_turn()
                if traffic:
                    traffic.session_changed()
                answered = session_reply(self.adapter)  # what the agent said to /new
                self.log(SessionChanged(action=SessionAction.NEW_SESSION, detail=session, reply=answered))
            case Compact():
                adapter = self.adapter
                if not can_compact(adapter):  # refused before the run; a replay may still get here
                    self.log(
                        ErrorEvent(
                            source=ErrorSource.RUNNER,
                            kind=ErrorKind.UNSUPPORTED,
                            message="bench.compact(): this agent's adapter can't ask it to compact",
                        )
                    )
                    self.log(SessionChanged(action=SessionAction.COMPACT, detail="unsupported"))
                else:
                    assert isinstance(adapter, CompactingAdapter)
                    if traffic:  # the compaction command is a message: its model calls are its turn's
                        traffic.recorder.turn_started()
                    answered = await turns.until_done("compact", adapter.compact)
                    if traffic:
                        traffic.recorder.turn_ended()
                    turns.log_off_turn()
                    self.log(SessionChanged(action=SessionAction.COMPACT, detail="", reply=answered))
            case Checkpoint():
                await self._checkpoint(action.name)
            case MarkTold():
                self.log(FactsMarked(fact_ids=list(action.fact_ids)))
                for key in action.fact_ids:
                    file, _, fact_id = key.partition(":")
                    self.log(FactTold(file=file, fact_id=fact_id))
            case Slip():
                self.log(PersonaSlip.of(action))
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
                        decided_by=action.decided_by,
                        rewrites=list(action.rewrites),
                    )
                )
        return None

    async def _checkpoint(self, name: str) -> None:
        """Stop the agent cleanly between two settled turns, archive its state folder, start it
        again on the same session. Logged only once the archive is whole: a run killed before
        takes it again on resume."""
        handle, turns = self.handle, self.turns
        if handle is None or turns is None or handle.state_dir is None or handle.restart_around is None:
            message = f"checkpoint {name!r}: this agent's state is not held by marathonbench; nothing archived"
            self.log(ErrorEvent(source=ErrorSource.RUNNER, kind=ErrorKind.UNSUPPORTED, message=message))
            return
        if self.writer is not None:
            self.writer.flush()
        state_dir, restart, rules = handle.state_dir, handle.restart_around, handle.state_rules
        saved: list[CheckpointSaved] = []
        last = self.spec.until == name  # the run ends here: its agent is not started again for nothing
        await turns.until_done(
            f"checkpoint {name}",
            lambda: restart(lambda: saved.append(archive_state(state_dir, self.run_dir, name, rules)), not last),
        )
        turns.log_off_turn()
        if self.traffic is not None:
            self.traffic.session_changed()  # a restarted agent's first call is no compaction
        self.journal.keep(self.run_dir / saved[-1].archive, saved[-1].archive)  # on a node: to the driver
        self.log(saved[-1])
        print(f"[{self.spec.id}] checkpoint {name!r}: state {saved[-1].state_hash[:12]}, {saved[-1].bytes:,} bytes", flush=True)

    def _flush(self) -> None:
        if self.writer is not None:
            self.writer.flush()

    def _finish(self, reason: TerminationReason, detail: str) -> None:
        if self.writer is None:
            return
        detail = self.redactor.text(detail)
        self.outcome.detail = detail
        try:
            if self.traffic is not None and (note := self.traffic.recorder.background_note()):
                self.log(ErrorEvent(source=ErrorSource.RUNNER, kind=ErrorKind.BACKGROUND_UNRECOGNISED, message=note))
                print(f"[{self.spec.id}] warning: {note}", file=sys.stderr, flush=True)
            self.log(RunEnded(reason=reason, detail=detail, pid=os.getpid()))
        except RunLogWriteError:
            pass  # the log is what failed; the report below still says what we have
        finally:
            with contextlib.suppress(RunLogWriteError):  # never in place of the error that ended the run
                self.writer.close()
        with contextlib.suppress(OSError):
            self.journal.finish(self.benchmark)


async def run_spec(spec: RunSpec, recordings: Path, *, fresh: bool = False) -> RunOutcome:
    return await Run(spec, recordings, fresh=fresh).execute()
