"""WebSocket chat surfaces: configurable JSON frames, streamed deltas joined.

A turn sends one frame built from the `send` template (`{message}`, `{session}`, `{id}` filled
in) and reads frames until the end of the turn — a frame matching `done_when`, or, with
`quiet` set, that many seconds without a frame of the turn. Frames matching `text_when` carry
text at `text_path`: fragments are appended, or, when a frame repeats the text so far and
extends it, it replaces it (`cumulative` forces that). A frame matching `error_when` ends the
turn with an error. A dropped connection is re-opened with backoff before the next turn.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from adapters.base import (
    AdapterConfigError,
    AgentConnectionError,
    AgentProtocolError,
    AgentReplyTooLarge,
    AgentTimeout,
    SessionState,
    compact_commands,
    max_reply_bytes,
    number_setting,
)
from adapters.http import expand_env, fill_template, find_path


def frame_matches(frame: Any, wanted: dict[str, Any], values: dict[str, str]) -> bool:
    """Every `path: value` of `wanted` (values may use {session}) holds in `frame`."""
    if not wanted:
        return False
    for path, value in wanted.items():
        try:
            actual = find_path(frame, path)
        except (KeyError, IndexError, TypeError):
            return False
        if actual != fill_template(value, values):
            return False
    return True


def join_text(so_far: str, piece: str, cumulative: bool) -> str:
    if cumulative or (so_far and piece.startswith(so_far)):
        return piece
    return so_far + piece


class WebSocketAdapter:
    """Settings: `url` (ws:// or wss://), `headers` (`${ENV}` allowed), `send` (frame template),
    `text_path`, `text_when`, `done_when`, `error_when`, `error_path`, `match` (frames of this
    turn, e.g. {"session": "{session}"}), `cumulative`, `quiet` (s), `timeout` (s, default 300),
    `retries`, `backoff`, `session_prefix`."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.compact_commands = compact_commands(settings)
        self.max_reply_bytes = max_reply_bytes(settings)
        url = settings.get("url")
        if not isinstance(url, str) or not url.startswith(("ws://", "wss://")):
            raise AdapterConfigError("websocket adapter needs `url`: a ws:// or wss:// address")
        self.url = url
        self.headers = {str(k): expand_env(str(v)) for k, v in dict(settings.get("headers", {})).items()}
        self.send_template = settings.get(
            "send", {"type": "message", "session": "{session}", "text": "{message}"}
        )
        self.text_path = str(settings.get("text_path", "text"))
        self.text_when: dict[str, Any] = dict(settings.get("text_when", {"type": "delta"}))
        self.done_when: dict[str, Any] = dict(settings.get("done_when", {"type": "done"}))
        self.error_when: dict[str, Any] = dict(settings.get("error_when", {"type": "error"}))
        self.error_path = str(settings.get("error_path", "error"))
        self.match: dict[str, Any] = dict(settings.get("match", {}))
        self.cumulative = bool(settings.get("cumulative", False))
        self.quiet = number_setting(settings, "quiet", 0)
        self.timeout = number_setting(settings, "timeout", 300)
        self.retries = int(number_setting(settings, "retries", 3, whole=True))
        self.backoff = number_setting(settings, "backoff", 0.5)
        self.session_prefix = str(settings.get("session_prefix", "marathon"))
        self.session = f"{self.session_prefix}-{uuid.uuid4().hex[:12]}"
        self.connection: ClientConnection | None = None

    # -- connection ------------------------------------------------------------------------

    async def _connect(self) -> ClientConnection:
        if self.connection is not None and self.connection.state.name == "OPEN":
            return self.connection
        failure: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                self.connection = await asyncio.wait_for(
                    connect(self.url, additional_headers=self.headers, max_size=self.max_reply_bytes),
                    self.timeout,
                )
                await self._handshake(self.connection)
                return self.connection
            except (OSError, InvalidHandshake, InvalidURI, TimeoutError, ConnectionClosed) as exc:
                failure = exc
        raise AgentConnectionError(f"can't connect to {self.url}: {failure}")

    async def _handshake(self, connection: ClientConnection) -> None:
        """Protocols with a login step override this."""

    async def open(self, resume: SessionState | None = None) -> str:
        if resume is not None:
            self.session = resume.id
        await self._connect()
        return self.session

    async def new_session(self) -> str:
        self.session = f"{self.session_prefix}-{uuid.uuid4().hex[:12]}"
        return self.session

    async def compact(self) -> str:
        """Send the agent's compaction commands; returns what it answered the last."""
        replies = [await self.send(command) for command in self.compact_commands]
        return replies[-1] if replies else ""

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()
            self.connection = None

    # -- a turn ----------------------------------------------------------------------------

    def _values(self, text: str = "") -> dict[str, str]:
        return {"message": text, "session": self.session, "id": uuid.uuid4().hex}

    async def send(self, text: str) -> str:
        connection = await self._connect()
        try:
            await connection.send(json.dumps(fill_template(self.send_template, self._values(text))))
            return await self._collect(connection)
        except ConnectionClosed as exc:
            self.connection = None
            raise AgentConnectionError(f"the WebSocket closed mid-turn: {exc}") from exc

    async def _next_frame(self, connection: ClientConnection, deadline: float) -> Any | None:
        """The next JSON frame, or None after a quiet period; raises on timeout or garbage."""
        loop = asyncio.get_running_loop()
        left = deadline - loop.time()
        if left <= 0:
            raise AgentTimeout(f"no end of turn from {self.url} within {self.timeout:g} s")
        wait = min(left, self.quiet) if self.quiet else left
        try:
            raw = await asyncio.wait_for(connection.recv(), wait)
        except TimeoutError:
            if self.quiet and loop.time() < deadline:
                return None
            raise AgentTimeout(f"no end of turn from {self.url} within {self.timeout:g} s") from None
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd else exc.sent.code if exc.sent else None
            if code == 1009:  # "message too big": the frame passed `max_reply_bytes`, unread
                raise AgentReplyTooLarge(self.max_reply_bytes + 1, self.max_reply_bytes, "frame") from None
            raise
        try:
            return json.loads(raw)
        except ValueError:
            raise AgentProtocolError(f"garbled frame (not JSON): {str(raw)[:120]!r}") from None
        except RecursionError:
            raise AgentProtocolError("garbled frame (JSON nested too deeply)") from None

    async def _collect(self, connection: ClientConnection) -> str:
        deadline = asyncio.get_running_loop().time() + self.timeout
        values = self._values()
        text = ""
        seen = False
        while True:
            frame = await self._next_frame(connection, deadline)
            if frame is None:
                if seen:
                    return text
                continue
            if self.match and not frame_matches(frame, self.match, values):
                continue
            if frame_matches(frame, self.error_when, values):
                raise AgentProtocolError(f"the agent reported an error: {find_or(frame, self.error_path)}")
            if frame_matches(frame, self.text_when, values):
                piece = find_or(frame, self.text_path)
                if not isinstance(piece, str):
                    raise AgentProtocolError(
                        f"frame has no text at {self.text_path!r}: {json.dumps(frame)[:120]}"
                    )
                text, seen = join_text(text, piece, self.cumulative), True
            if frame_matches(frame, self.done_when, values):
                return text


def find_or(frame: Any, path: str) -> Any:
    try:
        return find_path(frame, path)
    except (KeyError, IndexError, TypeError):
        return None
