"""The reference agent as a Telegram bot: long polling against any Bot API root.

Written against the Bot API itself (aiohttp), as a small bot would be: `getMe`,
`deleteWebhook`, `setMyCommands`, then `getUpdates` with a timeout; `/new` starts a new
session; a reply is preceded by a typing action and sent first as a short preview that is
then edited into the full text (as streaming bots do), split at 4,000 characters.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import aiohttp

from adapters.reference.agent import ReferenceAgent

CHUNK = 4000


class BotAPIFailure(RuntimeError):
    pass


async def call(http: aiohttp.ClientSession, base: str, method: str, **params: Any) -> Any:
    async with http.post(f"{base}/{method}", json=params) as response:
        data = await response.json()
    if not data.get("ok"):
        raise BotAPIFailure(f"{method}: {data.get('description')}")
    return data["result"]


async def run_bot(
    agent: ReferenceAgent, api_root: str, token: str, stop: asyncio.Event, preview: bool = True
) -> None:
    base = f"{api_root.rstrip('/')}/bot{token}"
    sessions: dict[int, int] = {}
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as http:
        await call(http, base, "getMe")
        await call(http, base, "deleteWebhook", drop_pending_updates=False)
        await call(
            http, base, "setMyCommands", commands=[{"command": "new", "description": "Start a new session"}]
        )
        offset = 0
        while not stop.is_set():
            poll = asyncio.ensure_future(
                call(http, base, "getUpdates", offset=offset, timeout=1, allowed_updates=["message"])
            )
            done, _ = await asyncio.wait(
                {poll, asyncio.ensure_future(stop.wait())}, return_when=asyncio.FIRST_COMPLETED
            )
            if poll not in done:
                poll.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
                    await poll
                break
            try:
                updates = poll.result()
            except (aiohttp.ClientError, BotAPIFailure):
                await asyncio.sleep(0.2)  # the API went away or refused: retry, as bots do
                continue
            for update in updates:
                offset = update["update_id"] + 1
                message = update.get("message") or {}
                if "text" in message:
                    await _answer(http, base, agent, sessions, message, preview)


async def _answer(
    http: aiohttp.ClientSession,
    base: str,
    agent: ReferenceAgent,
    sessions: dict[int, int],
    message: dict[str, Any],
    preview: bool,
) -> None:
    chat = int(message["chat"]["id"])
    text = str(message["text"])
    if text.strip() == "/new":
        sessions[chat] = sessions.get(chat, 0) + 1
        await call(http, base, "sendMessage", chat_id=chat, text="New session started.")
        return
    await call(http, base, "sendChatAction", chat_id=chat, action="typing")
    reply = await agent.chat(f"tg-{chat}-{sessions.get(chat, 0)}", text) or "…"
    chunks = [reply[i : i + CHUNK] for i in range(0, len(reply), CHUNK)]
    for n, chunk in enumerate(chunks):
        if preview and n == 0 and len(chunk) > 12:
            sent = await call(http, base, "sendMessage", chat_id=chat, text=chunk[: len(chunk) // 2] + " …")
            await call(http, base, "editMessageText", chat_id=chat, message_id=sent["message_id"], text=chunk)
        else:
            await call(http, base, "sendMessage", chat_id=chat, text=chunk)
