"""Fake agents on 127.0.0.1: small honest agents that speak a real chat surface.

`http_agent` serves `POST /chat` (`{"message"}` → `{"reply"}`) with a hook that may answer a
request with a fault instead (a 500, a hang, a garbled body); `FakeOpenClaw` speaks OpenClaw's
gateway WebSocket protocol as docs/agents.md and adapters/openclaw.py describe it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import ClientError, ClientSession, web
from websockets.asyncio.server import ServerConnection

from adapters.http_server import ServedApp, serve


def memory_agent() -> Callable[[str], str]:
    """A tiny honest agent: remembers statements, answers questions from them."""
    notes: list[str] = []

    def answer(text: str) -> str:
        if text.rstrip().endswith("?"):
            words = {w.lower().strip("?.,") for w in text.split() if len(w) > 3}
            best = max(
                notes, key=lambda n: len(words & {w.lower().strip(".,") for w in n.split()}), default=""
            )
            return best or "You never told me."
        notes.extend(
            line.strip("- ") for line in text.splitlines() if line.strip() and not line.endswith(":")
        )
        return "Noted."

    return answer


async def http_agent(
    fault: Callable[[int, web.Request], Awaitable[web.StreamResponse | None]], port: int = 0
) -> ServedApp:
    answer = memory_agent()
    count = 0

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal count
        count += 1
        faulty = await fault(count, request)
        if faulty is not None:
            return faulty
        return web.json_response({"reply": answer((await request.json())["message"])})

    app = web.Application()
    app.router.add_post("/chat", handler)
    return await serve(app, port=port)


class FakeOpenClaw:
    """OpenClaw's gateway protocol as the notes describe it: challenge, connect, chat.send, chat events."""

    def __init__(self, token: str, heartbeat: str = "", slow_first: float = 0.0) -> None:
        """`heartbeat`: a run of its own (another runId) whose final text comes before each
        turn's; `slow_first`: seconds the first turn's events are held back (a late reply)."""
        self.token = token
        self.heartbeat = heartbeat
        self.slow_first = slow_first
        self.turns = 0
        self.pending: list[asyncio.Future[None]] = []  # answers held back
        self.connects: list[dict[str, Any]] = []

    async def __call__(self, ws: ServerConnection) -> None:
        await ws.send(
            json.dumps({"type": "event", "event": "connect.challenge", "payload": {"nonce": "n1", "ts": 1}})
        )
        hello = json.loads(await ws.recv())
        self.connects.append(hello)
        if hello.get("params", {}).get("auth", {}).get("token") != self.token:
            await ws.send(
                json.dumps({"type": "res", "id": hello["id"], "ok": False, "error": {"code": "UNAUTHORIZED"}})
            )
            return
        await ws.send(
            json.dumps(
                {"type": "res", "id": hello["id"], "ok": True, "payload": {"type": "hello-ok", "protocol": 4}}
            )
        )
        async for raw in ws:
            req = json.loads(raw)
            key, text = req["params"]["sessionKey"], req["params"]["message"]
            self.turns += 1
            run_id = f"r{self.turns}"
            await ws.send(json.dumps({"type": "res", "id": req["id"], "ok": True, "payload": {"runId": run_id}}))
            await ws.send(json.dumps({"type": "event", "event": "tick", "payload": {}}))
            if self.heartbeat:
                await ws.send(json.dumps(self._chat(f"hb{self.turns}", key, 1, "final", self.heartbeat)))
            if self.turns == 1 and self.slow_first:
                late = self._answer(ws, "r1", key, text, delay=self.slow_first)
                self.pending.append(asyncio.ensure_future(late))
                continue
            await self._answer(ws, run_id, key, text)

    @staticmethod
    def _chat(run_id: str, key: str, seq: int, state: str, text: str) -> dict[str, Any]:
        message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        payload = {"runId": run_id, "sessionKey": key, "seq": seq, "state": state, "message": message}
        return {"type": "event", "event": "chat", "payload": payload}

    async def _answer(self, ws: ServerConnection, run_id: str, key: str, text: str, delay: float = 0.0) -> None:
        await asyncio.sleep(delay)
        answer = f"echo: {text}"
        for n in range(1, len(answer) + 1, 5):
            await ws.send(json.dumps(self._chat(run_id, key, n, "delta", answer[:n])))
        await ws.send(json.dumps(self._chat(run_id, key, 99, "final", answer)))


async def llm_agent(llm_url: str, port: int = 0, retries: int = 3, fail_status: int = 0) -> ServedApp:
    """An agent that answers through its own model, as Hermes does: each message becomes an
    OpenAI chat-completions call to `llm_url` (tried `retries` times); when the model fails,
    the agent still answers over HTTP 200 — with the failure as its text ("API call failed
    after 3 retries: HTTP 502"), which a benchmark must not grade as forgetting. With
    `fail_status` it answers that HTTP status instead, as Letta does (500, "An internal server
    error occurred")."""
    history: dict[str, list[dict[str, str]]] = {}

    async def handler(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        messages = history.setdefault(str(body.get("session_id", "")), [])
        messages.append({"role": "user", "content": str(body["message"])})
        failure = ""
        async with ClientSession() as client:
            for _ in range(retries):
                try:
                    async with client.post(
                        f"{llm_url}/v1/chat/completions",
                        json={"model": "fake-model", "messages": messages},
                        headers={"Authorization": "Bearer sk-fake-agent-key"},
                    ) as response:
                        if response.status < 400:
                            text = str((await response.json())["choices"][0]["message"]["content"] or "")
                            messages.append({"role": "assistant", "content": text})
                            return web.json_response({"reply": text})
                        failure = f"HTTP {response.status}"
                except ClientError as exc:
                    failure = type(exc).__name__
        if fail_status:
            return web.json_response({"detail": "An internal server error occurred"}, status=fail_status)
        return web.json_response({"reply": f"API call failed after {retries} retries: {failure}"})

    app = web.Application()
    app.router.add_post("/chat", handler)
    return await serve(app, port=port)


def http_agent_settings(agent: ServedApp, **extra: Any) -> dict[str, Any]:
    """A run's `agent` block for a fake HTTP agent (`http_agent`, `llm_agent`)."""
    return {
        "adapter": "http",
        "url": f"{agent.url}/chat",
        "body": {"message": "{message}", "session_id": "{session}"},
        "reply_path": "reply",
        "timeout": 10,
        **extra,
    }
