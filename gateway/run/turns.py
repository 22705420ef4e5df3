"""Messages and session commands to the agent, one at a time, with its errors counted.

A message is sent and its settled reply awaited (`send`); a session command (new session,
compact, a checkpoint's restart) is tried until it goes through (`until_done`). An error of the
agent, or of its own model, is logged and counted: after `MAX_CONSECUTIVE_AGENT_ERRORS` in a row
the run ends (the runner reads `errors_in_a_row` and `last_error`). What the agent says off its
turn (late replies, messages of its own) is logged apart and never graded; an agent whose model
calls bypass the recorder is told once, at its first reply.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable

from adapters.base import AdapterError, AgentAdapter, AgentReplyTooLarge, OffTurnAdapter
from gateway.log.events import (
    AgentInitiated,
    ErrorEvent,
    Event,
    LateReply,
    Replied,
)
from gateway.log.redact import redact_text
from gateway.log.runlog import RunLogWriteError
from gateway.log.scrub import scrub_text
from gateway.log.vocabulary import ErrorKind, ErrorSource
from gateway.run.traffic_state import RunTraffic
from gateway.traffic.recorder import bypass_warning
from persona.drivers.actions import AgentReply

MAX_CONSECUTIVE_AGENT_ERRORS = 3


class AgentTurns:
    """The runner's side of the conversation with one opened agent."""

    def __init__(
        self,
        adapter: AgentAdapter,
        traffic: RunTraffic | None,
        log: Callable[[Event], Event],
        flush: Callable[[], None],
        run_id: str,
        llm_url: str | None,
    ) -> None:
        self.adapter = adapter
        self.traffic = traffic
        self.log = log
        self.flush = flush  # the log's records on disk before a message leaves
        self.run_id = run_id
        self.llm_url = llm_url
        self.errors_in_a_row = 0
        self.last_error: ErrorEvent | None = None  # the last agent error: how a failed run ended
        self.bypass_checked = False

    async def until_done[T](self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """A session command (new session, compact) that fails is logged and tried again, like a
        message. After MAX_CONSECUTIVE_AGENT_ERRORS agent errors in a row the last one is raised
        (the run ends `agent_failed`). The command's own event is logged only once it went
        through, so a resumed run performs it again."""
        while True:
            try:
                result = await call()
            except AdapterError as exc:
                self.agent_error(ErrorEvent(source=ErrorSource.AGENT, kind=ErrorKind(exc.kind), message=f"{what}: {exc}"))
                if exc.fatal or self.errors_in_a_row >= MAX_CONSECUTIVE_AGENT_ERRORS:
                    raise
                continue
            self.errors_in_a_row = 0
            return result

    def log_retry(self, message: str) -> None:
        self.stop_if_recorder_failed()
        self.log(ErrorEvent(source=ErrorSource.AGENT, kind=ErrorKind.RETRY, message=message))

    def stop_if_recorder_failed(self) -> None:
        """An agent error while the recorder refuses the agent's model calls (its log can't take
        them: a full disk) is ours, not the agent's — the run stops `log_failed`, naming why,
        and no agent error is logged for it."""
        if self.traffic is not None and self.traffic.recorder.failure:
            raise RunLogWriteError(f"the LLM-traffic recorder stopped: {self.traffic.recorder.failure}")

    def agent_error(self, error: ErrorEvent) -> None:
        """An error of the agent (or of its model) counts towards the errors in a row."""
        self.errors_in_a_row += 1
        error.message = redact_text(error.message)  # it may quote the agent's log
        self.last_error = error
        self.log(error)

    async def send(self, text: str) -> AgentReply:
        """Send a message and await its settled reply. A reply that came out of a failed model
        call (the recorder saw the turn's last call fail) is logged, then treated as an agent
        error: its facts don't count as told and it is not graded; it is sent again."""
        assert self.adapter is not None
        if self.traffic is not None:
            self.traffic.recorder.turn_started(text)
        self.flush()  # what led to this message is on the log's disk before it leaves
        started = time.monotonic()
        try:
            answer = await self.adapter.send(text)
        except AgentReplyTooLarge as exc:  # cut at the limit: logged, and graded on nothing
            self.stop_if_recorder_failed()
            self.log_off_turn()
            self.log(ErrorEvent(source=ErrorSource.AGENT, kind=ErrorKind(exc.kind), message=str(exc)))
            answer = ""
        except AdapterError as exc:
            self.stop_if_recorder_failed()
            self.log_off_turn()
            # an error answer that came out of a failed model call (Letta: HTTP 500 when its model
            # is unreachable) is the agent's model failing, as the recorder saw it — not the agent
            failed = self.traffic.recorder.turn_failure() if self.traffic is not None else None
            source, message = (ErrorSource.AGENT_LLM, f"{exc} — {failed}") if failed else (ErrorSource.AGENT, str(exc))
            self.agent_error(ErrorEvent(source=source, kind=ErrorKind(exc.kind), message=message))
            if exc.fatal:  # the agent is gone or refuses us: sending again can't help
                raise
            return AgentReply("", error=f"{exc.kind}: {exc}")
        self.log_off_turn()
        answer, invalid = scrub_text(answer)
        if invalid:
            message = f"the reply held {invalid} lone surrogate code point(s), which are not text; replaced by U+FFFD"
            self.log(ErrorEvent(source=ErrorSource.AGENT, kind=ErrorKind.INVALID_TEXT, message=message))
        self.log(Replied(text=answer, elapsed=round(time.monotonic() - started, 4)))
        if self.traffic is not None:
            self.traffic.recorder.turn_ended()
            self.stop_if_recorder_failed()
            await self.traffic.settled()
            self.check_bypass(self.traffic)
            failed = self.traffic.recorder.turn_failure()
            if failed is not None:
                message = f"the agent's answer came out of a failed model call ({failed})"
                self.agent_error(ErrorEvent(source=ErrorSource.AGENT_LLM, kind=ErrorKind.FAILED_ANSWER, message=message))
                return AgentReply("", error=f"{ErrorKind.FAILED_ANSWER}: {message}")
        self.errors_in_a_row = 0
        return AgentReply(answer)

    def log_off_turn(self) -> None:
        """What the agent sent that is not the reply to the message just sent: late replies to
        earlier messages and messages of its own — logged apart, never graded."""
        if not isinstance(self.adapter, OffTurnAdapter):
            return
        for off in self.adapter.take_off_turn():
            if off.kind == "late":
                self.log(LateReply(text=off.text, answers=off.answers))
            else:
                self.log(AgentInitiated(text=off.text, why=off.why))

    def check_bypass(self, traffic: RunTraffic) -> None:
        """Once, at the first reply: an agent whose LLM calls don't reach the recorder (its base
        URL points straight at the provider) is told at once, not in the report hours later."""
        if self.bypass_checked or not self.llm_url:
            return
        self.bypass_checked = True
        if traffic.recorder.model_calls == 0:
            warning = bypass_warning(self.llm_url)
            self.log(warning)
            print(f"[{self.run_id}] warning: {warning.message}", file=sys.stderr, flush=True)
