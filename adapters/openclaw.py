"""OpenClaw's gateway WebSocket protocol (v3/v4), as a preset of the WebSocket adapter.

From OpenClaw's docs and a run of 2026.9.6: the server opens with an event
`connect.challenge {nonce, ts}`; the client answers a `req` `connect` with client info, role,
scopes and its auth token (v4 accepted a token-only connect on loopback, no device identity);
the server answers `res` `hello-ok`. A turn is `req chat.send {sessionKey, message,
idempotencyKey}` (answered by a `res`), then `event chat` frames `{runId, sessionKey, seq,
state: delta|final|aborted|error, message}` for that session key. A new session is a new
session key. Frames are `{type: req, id, method, params}`, `{type: res, id, ok,
payload|error}`, `{type: event, event, payload, seq?}`.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from adapters.base import AgentConnectionError, AgentProtocolError, AgentTimeout, OffTurn
from adapters.http import expand_env
from adapters.websocket import WebSocketAdapter, join_text


class AgentBusy(AgentProtocolError):
    """The agent asked to be asked again later (a retryable refusal)."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def message_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, dict):
        content = message.get("content", message.get("text", ""))
        if isinstance(content, list):
            return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
        return str(content)
    return ""


class OpenClawAdapter(WebSocketAdapter):
    """Settings: `url` (default ws://127.0.0.1:18789), `token` (`${OPENCLAW_GATEWAY_TOKEN}`),
    `timeout`, `session_prefix` (default "agent:main:marathon")."""

    def __init__(self, settings: dict[str, Any]) -> None:
        super().__init__({"url": "ws://127.0.0.1:18789", "session_prefix": "agent:main:marathon", **settings})
        self.token = expand_env(str(settings.get("token", "")))
        self._ids = 0
        self.current: tuple[str, str] = ("", "")  # the turn's runId and message
        self.timed_out: dict[str, str] = {}  # runId → the message whose turn timed out
        self.off_turn: list[OffTurn] = []

    def _next_id(self) -> str:
        self._ids += 1
        return str(self._ids)

    async def _recv_json(self, connection: ClientConnection) -> dict[str, Any]:
        raw = await asyncio.wait_for(connection.recv(), self.timeout)
        try:
            frame = json.loads(raw)
        except ValueError:
            raise AgentProtocolError(f"garbled frame from OpenClaw (not JSON): {str(raw)[:120]!r}") from None
        if not isinstance(frame, dict):
            raise AgentProtocolError("OpenClaw frame is not an object")
        return frame

    async def _connect(self) -> ClientConnection:
        """Connect, waiting out "gateway starting" refusals (up to `timeout`)."""
        deadline = asyncio.get_running_loop().time() + self.timeout
        while True:
            try:
                return await super()._connect()
            except AgentBusy as busy:
                if self.connection is not None:
                    await self.connection.close()
                    self.connection = None
                if asyncio.get_running_loop().time() + busy.retry_after > deadline:
                    raise
                await asyncio.sleep(busy.retry_after)

    async def _handshake(self, connection: ClientConnection) -> None:
        challenge = await self._recv_json(connection)
        if challenge.get("event") != "connect.challenge":
            raise AgentProtocolError(f"expected connect.challenge, got {json.dumps(challenge)[:120]}")
        request_id = self._next_id()
        await connection.send(
            json.dumps(
                {
                    "type": "req",
                    "id": request_id,
                    "method": "connect",
                    "params": {
                        "minProtocol": 3,
                        "maxProtocol": 4,
                        "client": {
                            "id": "gateway-client",  # one of the ids OpenClaw accepts (GATEWAY_CLIENT_IDS)
                            "displayName": "marathonbench",
                            "version": "0.1.0",
                            "platform": "linux",
                            "mode": "backend",
                        },
                        "role": "operator",
                        "scopes": ["operator.read", "operator.write"],
                        "auth": {"token": self.token},
                    },
                }
            )
        )
        await self._await_response(connection, request_id)

    async def _await_response(self, connection: ClientConnection, request_id: str) -> dict[str, Any]:
        while True:
            frame = await self._recv_json(connection)
            self._note_earlier_run(frame)
            if frame.get("type") == "res" and str(frame.get("id")) == request_id:
                if not frame.get("ok"):
                    raw_error = frame.get("error")
                    error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
                    message = f"OpenClaw refused: {json.dumps(frame.get('error'))[:200]}"
                    if error.get("retryable"):  # e.g. "gateway starting; retry shortly"
                        raise AgentBusy(message, float(error.get("retryAfterMs", 500)) / 1000)
                    raise AgentProtocolError(message)
                payload = frame.get("payload")
                return payload if isinstance(payload, dict) else {}

    async def _turn(self, connection: ClientConnection, text: str) -> str:
        request_id = self._next_id()
        await connection.send(
            json.dumps(
                {
                    "type": "req",
                    "id": request_id,
                    "method": "chat.send",
                    "params": {
                        "sessionKey": self.session,
                        "message": text,
                        "idempotencyKey": uuid.uuid4().hex,
                    },
                }
            )
        )
        accepted = await self._await_response(connection, request_id)
        run_id = str(accepted.get("runId") or "")
        self.current = (run_id, text)
        reply = ""
        while True:
            frame = await self._recv_json(connection)
            payload = (
                frame.get("payload")
                if frame.get("type") == "event" and frame.get("event") == "chat"
                else None
            )
            if not isinstance(payload, dict) or payload.get("sessionKey") != self.session:
                continue
            state = payload.get("state")
            piece = message_text(payload.get("message"))
            other = str(payload.get("runId") or "")
            if run_id and other and other != run_id:  # another run's: a late reply, a heartbeat
                if state == "final" and piece:
                    self.off_turn.append(self._off_turn(other, piece))
                continue
            if state == "delta":
                reply = join_text(reply, piece, cumulative=False)
            elif state == "final":
                return piece or reply
            elif state in ("aborted", "error"):
                raise AgentProtocolError(
                    f"OpenClaw chat {state}: {json.dumps(payload.get('errorMessage') or payload.get('error'))[:200]}"
                )

    def _note_earlier_run(self, frame: dict[str, Any]) -> None:
        """A chat event's final text that arrives before this turn's run has begun (while the
        request is answered) belongs to an earlier run: a late reply, or the agent's own."""
        payload = frame.get("payload") if frame.get("type") == "event" and frame.get("event") == "chat" else None
        if isinstance(payload, dict) and payload.get("sessionKey") == self.session and payload.get("state") == "final":
            piece = message_text(payload.get("message"))
            if piece:
                self.off_turn.append(self._off_turn(str(payload.get("runId") or ""), piece))

    def _off_turn(self, run_id: str, text: str) -> OffTurn:
        if run_id in self.timed_out:
            return OffTurn("late", text, answers=self.timed_out[run_id])
        return OffTurn("initiated", text, why=f"a run the persona did not start ({run_id})")

    def take_off_turn(self) -> list[OffTurn]:
        """Final chat events of other runs than the turn's (`runId`): late replies to a turn
        that timed out, or runs the agent started itself (heartbeats)."""
        taken, self.off_turn = self.off_turn, []
        return taken

    async def send(self, text: str) -> str:
        connection = await self._connect()
        try:
            return await asyncio.wait_for(self._turn(connection, text), self.timeout)
        except TimeoutError:
            run_id, sent = self.current
            if run_id:
                self.timed_out[run_id] = sent
            raise AgentTimeout(f"OpenClaw sent no final chat event within {self.timeout:g} s") from None
        except ConnectionClosed as exc:
            self.connection = None
            raise AgentConnectionError(f"the OpenClaw WebSocket closed mid-turn: {exc}") from exc
