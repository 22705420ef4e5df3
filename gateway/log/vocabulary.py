"""The closed vocabularies of the run log: how a start ended, why a message was sent, what a
session command did, who failed and how, what kind of model call the recorder saw.

Each is a `StrEnum`: on disk it is its value (a plain msgpack string, as before these types
existed), in code it is a member, so a consumer compares members, never prose — a status built
as `"limit_reached (agent_turns: …)"` and compared with `== "limit_reached"` once dropped every
run that hit a limit from the A/B table. The reader (`gateway.log.records.event_from_record`)
turns a value into its member and refuses a record whose value is none of them (an
`InvalidEvent`, named), so a typo on disk can't pass for a kind.

What the persona decides (a message's purpose, a slip) is defined in `persona.drivers.actions`,
which can't import the gateway; it is re-exported here so the log's whole vocabulary has one
address.
"""

from __future__ import annotations

from enum import StrEnum

from persona.drivers.actions import Purpose, SlipKind

__all__ = [
    "CallKind",
    "ErrorKind",
    "ErrorSource",
    "Purpose",
    "SessionAction",
    "SlipKind",
    "TerminationReason",
]


class TerminationReason(StrEnum):
    """How a run's start ended (tau2's termination reason, kept beside the event that stores
    it). `completed` and `limit_reached` are final; every other ending is resumed by running
    the run again."""

    COMPLETED = "completed"
    INTERRUPTED = "interrupted"  # Ctrl-C / cancelled: resumable
    AGENT_FAILED = "agent_failed"  # the agent kept failing: resumable once it is fixed
    AGENT_LLM_FAILED = "agent_llm_failed"  # the agent's own model kept failing: resumable once it is back
    LOG_FAILED = "log_failed"  # the run log could not be written: stopped, fail closed
    ERROR = "error"  # a bug or bad state on our side; resumable once fixed
    LIMIT_REACHED = "limit_reached"  # a run limit (time, turns, spend) was reached: final, a failure
    PERSONA_FAILED = (
        "persona_failed"  # the persona's model could not play it: resumable once changed or fixed
    )

    @property
    def final(self) -> bool:
        """A run that ended so is not run again: it completed, or used up its limits."""
        return self in (TerminationReason.COMPLETED, TerminationReason.LIMIT_REACHED)

    @property
    def evaluated(self) -> bool:
        """Its grades are a verdict on the agent: a completed run, or one that used up its
        limits (what it didn't reach counts as failed). Any other ending is unfinished work."""
        return self.final


class SessionAction(StrEnum):
    """What a `session` record asked of the agent."""

    NEW_SESSION = "new_session"
    COMPACT = "compact"


class ErrorSource(StrEnum):
    """Whose failure an `error` record is: the agent's, its own model's (seen by the
    recorder), ours (the runner's), or the benchmark's. Agent and agent-llm errors are reported
    apart from memory failures."""

    AGENT = "agent"
    AGENT_LLM = "agent-llm"
    RUNNER = "runner"
    BENCHMARK = "benchmark"

    @property
    def agents(self) -> bool:
        """The agent's side failed (itself or its model), not the platform."""
        return self in (ErrorSource.AGENT, ErrorSource.AGENT_LLM)


class ErrorKind(StrEnum):
    """What went wrong, one member per kind any part of marathon logs. The agent's kinds are
    its adapter errors' `kind` (adapters/base.py; a test holds the two lists together)."""

    # the agent (an adapter error's kind)
    ADAPTER_ERROR = "adapter_error"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    HTTP_STATUS = "http_status"
    AUTH = "auth"
    AGENT_EXITED = "agent_exited"
    REPLY_TOO_LARGE = "reply_too_large"
    PROTOCOL = "protocol"
    CONFIG = "config"
    RETRY = "retry"  # a message sent again after an agent error
    INVALID_TEXT = "invalid_text"  # a reply that is no text (lone surrogates, control bytes)
    # the agent's own model call, seen by the recorder
    NO_CONNECTION = "no_connection"
    STREAM_CUT = "stream_cut"
    RATE_LIMITED = "rate_limited"
    OVERLOADED = "overloaded"
    SERVER_ERROR = "server_error"
    REFUSED = "refused"
    FAILED_ANSWER = "failed_answer"  # the reply came out of a failed model call
    # ours
    AGENT_START = "agent_start"  # the agent's process could not be started
    LIMIT = "limit"  # a run limit was reached
    UNSUPPORTED = "unsupported"  # the agent has no way to do what the benchmark asks (compact)
    RECORDER_REFUSED = "recorder_refused"  # our recorder refused a call: its log was full
    RECORDER_BYPASSED = "recorder_bypassed"  # no LLM call reached the recorder
    AGENT_STATE_LOST = "agent_state_lost"  # resumed where the agent had no state
    BACKGROUND_UNRECOGNISED = "background_unrecognised"  # calls of the agent's own we could not place


class CallKind(StrEnum):
    """What one model call of the agent was, as the recorder read it (`LLMExchange.kind`)."""

    ORDINARY = "ordinary"  # the agent answering the conversation
    SUMMARY = "summary"  # a compaction's summary call
    MEMORY_FLUSH = "memory_flush"  # a silent "store durable memories now" turn before compacting
    PROBE = "probe"  # a model listing or health check: not a call of the conversation
    BACKGROUND = "background"  # a call the agent made on its own: never counted against a question

    @property
    def conversational(self) -> bool:
        """Counted as the agent's model traffic (everything but a probe)."""
        return self is not CallKind.PROBE
