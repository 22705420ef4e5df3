"""The `AgentAdapter` protocol and the errors every adapter raises.

An adapter is one chat surface (HTTP, WebSocket, Telegram, ...). It knows nothing of
benchmarks or recordings: it opens a session, sends a message and returns the settled reply,
starts a new session, and closes. Errors inherit builtins too, so a caller may catch
`TimeoutError` or `ConnectionError` without importing ours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable


class AdapterError(Exception):
    """The agent could not be reached or answered unusably.

    `fatal`: sending again can't cure it (the agent's process is gone, or it refuses our
    credentials) — the runner stops the run at once instead of trying the message 3 times.
    """

    kind = "adapter_error"
    fatal = False


class AgentTimeout(AdapterError, TimeoutError):
    kind = "timeout"


class AgentConnectionError(AdapterError, ConnectionError):
    kind = "connection"


class AgentHTTPError(AdapterError):
    kind = "http_status"

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class AgentAuthError(AgentHTTPError, PermissionError):
    """401 or 403: the agent refuses our credentials; no retry will change that."""

    kind = "auth"
    fatal = True


class AgentExited(AgentConnectionError):
    """The agent's process (started by us) exited; the message names its exit code and the
    last lines of its `agent.log`."""

    kind = "agent_exited"
    fatal = True


def number_setting(settings: dict[str, object], name: str, default: float, *, whole: bool = False) -> float:
    """A numeric setting (`timeout`, `retries`, `quiet`…), or an `AdapterConfigError` naming it:
    `timeout: "soon"` says which setting and what it must be, not "could not convert string"."""
    value = settings.get(name, default)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (whole and not float(value).is_integer())
    ):
        what = "a whole number" if whole else "a number"
        raise AdapterConfigError(f"`{name}` must be {what} (≥ 0), not {value!r}")
    if value < 0:
        raise AdapterConfigError(
            f"`{name}` must be {'a whole number' if whole else 'a number'} ≥ 0, not {value!r}"
        )
    return float(value)


DEFAULT_MAX_REPLY_BYTES = 1 << 20  # 1 MiB: a chat reply, a frame, a Bot API payload


def max_reply_bytes(settings: dict[str, object]) -> int:
    """The `max_reply_bytes` setting (default 1 MiB), validated."""
    value = settings.get("max_reply_bytes", DEFAULT_MAX_REPLY_BYTES)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1024:
        raise AdapterConfigError("`max_reply_bytes` must be a whole number of bytes, at least 1024")
    return value


class AgentReplyTooLarge(AdapterError):
    """The agent's reply (a body, a frame, a Bot API payload) passed `max_reply_bytes`: it was
    cut there and not read further, so memory stays flat; the question is graded on nothing."""

    kind = "reply_too_large"

    def __init__(self, size: int, limit: int, what: str = "reply") -> None:
        more = "more than " if size > limit else ""
        super().__init__(
            f"the agent's {what} was {more}{size:,} bytes, past the limit of {limit:,} (`max_reply_bytes`)"
        )
        self.size, self.limit = size, limit


class AgentProtocolError(AdapterError, ValueError):
    """The agent answered, but not in the shape its profile says (garbled frame, no reply)."""

    kind = "protocol"


class AdapterConfigError(AdapterError, ValueError):
    kind = "config"


@dataclass
class SessionState:
    """A session to continue after a restart: its id and, for stateless surfaces that need
    the whole history on every call, the turns so far as (user, assistant) pairs."""

    id: str
    turns: list[tuple[str, str]] = field(default_factory=list)


class AgentAdapter(Protocol):
    async def open(self, resume: SessionState | None = None) -> str:
        """Connect; continue `resume` if given, else start a session. Returns the session id."""
        ...

    async def send(self, text: str) -> str:
        """Send one user message; return the agent's settled reply text."""
        ...

    async def new_session(self) -> str:
        """Start a new session (the agent keeps its long-term memory). Returns the new id."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class CompactingAdapter(Protocol):
    """An agent that can be asked to compact its context (`await bench.compact()`): the
    adapter sends the agent's own command for it (`compact_commands` in its settings:
    `/compact` for OpenClaw and the reference agent, `/compress` for Hermes). What the agent
    answered is the return value; the compaction itself is seen by the LLM recorder."""

    compact_commands: list[str]

    async def compact(self) -> str: ...


def compact_commands(settings: dict[str, object]) -> list[str]:
    """The `compact_commands` setting: a list of chat commands (or one), validated."""
    value = settings.get("compact_commands", [])
    commands = [value] if isinstance(value, str) else value
    if not isinstance(commands, list) or not all(isinstance(c, str) and c.strip() for c in commands):
        raise AdapterConfigError('`compact_commands` must be a list of chat commands, e.g. ["/compact"]')
    return [str(c) for c in commands]


def can_compact(adapter: object) -> bool:
    return isinstance(adapter, CompactingAdapter) and bool(adapter.compact_commands)


@runtime_checkable
class RetryNotifying(Protocol):
    """An adapter that retries a message itself (HTTP): it calls `on_retry` with what it is
    retrying, so the runner logs each retry as the agent's error."""

    on_retry: Callable[[str], None] | None


@runtime_checkable
class SessionReplying(Protocol):
    """An adapter whose session command gets an answer (a Telegram bot's reply to `/new`):
    `session_reply` is the last one, logged beside the new session."""

    session_reply: str


@runtime_checkable
class SessionKeeping(Protocol):
    """An adapter that holds its session as state (`SessionState`: its id and, for stateless
    surfaces, the turns so far) — what a restarted agent is reopened on."""

    session: object


def session_reply(adapter: object) -> str:
    """What the agent answered the last session command ("" when its surface has no answer)."""
    return adapter.session_reply if isinstance(adapter, SessionReplying) else ""


def kept_session(adapter: object) -> SessionState | None:
    """The session to reopen after a restart, when the adapter keeps one as state."""
    session = adapter.session if isinstance(adapter, SessionKeeping) else None
    return session if isinstance(session, SessionState) else None


@dataclass(frozen=True)
class OffTurn:
    """A message of the agent's that is not the reply to the message just sent: a late reply
    to an earlier message (`answers`: that message), or one the agent sent on its own — a
    heartbeat, a greeting, a reminder (`why` says how it was told apart)."""

    kind: Literal["late", "initiated"]
    text: str
    answers: str = ""
    why: str = ""


@runtime_checkable
class OffTurnAdapter(Protocol):
    """A surface that can tell the agent's off-turn messages from its replies (Telegram). The
    runner logs what `take_off_turn` returns — never grades it, never joins it to a reply."""

    def take_off_turn(self) -> list[OffTurn]:
        """The off-turn messages found since the last call."""
        ...
