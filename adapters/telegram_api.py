"""The emulated Bot API: a Telegram server the bot under test points its API root at.

The persona is a user in a private chat with a fixed id. `TelegramEmulator` serves the methods
bot libraries call (long-polling `getUpdates` with offsets, webhooks, `sendMessage` and edits,
chat actions, commands, reactions...), reading parameters from the query string, a form, JSON
or multipart, checking the token and answering unknown methods `{"ok": false}` (and noting
them). It records what the bot sent and which updates it had received when it sent it; the
chat surface on top of it is `adapters/telegram.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web

MAX_TEXT = 4096
TYPING_SECONDS = 5.0  # how long a "typing" action shows in Telegram clients
_JSON_FIELDS = {
    "reply_markup",
    "reply_parameters",
    "entities",
    "commands",
    "allowed_updates",
    "reaction",
    "link_preview_options",
    "scope",
}


class BotAPIError(Exception):
    def __init__(self, code: int, description: str) -> None:
        super().__init__(description)
        self.code = code
        self.description = description


@dataclass
class SentMessage:
    message_id: int
    text: str
    sent_at: float
    edits: int = 0
    deleted: bool = False
    parse_mode: str = ""
    seen: int = 0  # the last user message the bot had received when it sent this (0: none)
    reply_to: int = 0  # the user message it quotes (reply_to_message_id / reply_parameters), if any

    @property
    def plain(self) -> str:
        """The text as the user reads it: MarkdownV2 escapes and HTML tags removed."""
        return plain_text(self.text, self.parse_mode)


_MDV2_ESCAPE = re.compile(r"\\([_*\[\]()~`>#+\-=|{}.!\\])")


def plain_text(text: str, parse_mode: str) -> str:
    mode = parse_mode.lower()
    if mode == "markdownv2":
        return _MDV2_ESCAPE.sub(r"\1", text)
    if mode == "html":
        return html.unescape(re.sub(r"<[^>]+>", "", text))
    return text


ID_EPOCH = 1_704_067_200  # 2024-01-01 UTC: update and message ids count microseconds from here


def fresh_id_base() -> int:
    """Where a new emulator's update and message ids start: the microseconds since 2024. A bot
    keeps the ids it has handled in its state, and its state outlives our emulator — a resumed
    run, a fork restored from a checkpoint — so ids that started at 1 again were taken for updates
    already handled and dropped (OpenClaw 2026.9.6 keeps each update id it completed in its
    SQLite store: a fork over Telegram never answered). Ids from the clock only grow, run after
    run; they stay below 2^53, which a JavaScript number holds exactly."""
    return int((time.time() - ID_EPOCH) * 1_000_000)


@dataclass
class TelegramEmulator:
    """The Bot API server's state. One private chat; the user id doubles as the chat id."""

    token: str
    user_id: int = 424242
    user_first_name: str = "Alex"
    bot_id: int = 777000111
    bot_username: str = "marathon_agent_bot"
    updates: list[dict[str, Any]] = field(default_factory=list)
    next_update_id: int = field(default_factory=fresh_id_base)
    next_message_id: int = field(default_factory=fresh_id_base)
    webhook: str = ""
    delivered: int = 0  # the last user message (message_id) the bot has received, polled or pushed
    user_messages: dict[int, str] = field(default_factory=dict)  # message_id → text
    webhook_secret: str = ""
    commands: list[dict[str, Any]] = field(default_factory=list)
    sent: list[SentMessage] = field(default_factory=list)
    last_activity: float = 0.0  # monotonic time of the bot's last message, edit, delete or chat action
    last_message: float = 0.0  # ... of its last message, edit or delete
    last_typing: float = 0.0
    polls: int = 0
    unknown_methods: list[str] = field(default_factory=list)
    rejected: int = 0  # requests with a token that is not the bot's (answered 401)
    max_bytes: int = 1 << 20  # a request body past it is refused (413), unread — the adapter's `max_reply_bytes`
    oversized: int = 0  # requests refused so
    oversized_bytes: int = 0  # the size of the last (its Content-Length, else "past the limit")
    version: int = 0  # bumped on every change; waiters poll it (see `wait_change`)
    released: bool = False  # the run is ending: long polls return at once
    _redeliveries: set[asyncio.Task[None]] = field(default_factory=set)

    async def wait_change(self, seen: int, timeout: float) -> int:
        """Wait until `version` moves past `seen` or `timeout` passes; returns the version.

        A short poll (10 ms) keeps every waiter — long polls, reply settling — simple and
        cancellation-safe; Bot API traffic is far too slow for its cost to matter."""
        deadline = time.monotonic() + timeout
        while self.version == seen and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return self.version

    # -- the persona's side ----------------------------------------------------------------

    async def post_user_message(self, text: str) -> int:
        message_id = self.next_message_id
        self.next_message_id += 1
        message: dict[str, Any] = {
            "message_id": message_id,
            "date": int(time.time()),
            "chat": {"id": self.user_id, "type": "private", "first_name": self.user_first_name},
            "from": {
                "id": self.user_id,
                "is_bot": False,
                "first_name": self.user_first_name,
                "language_code": "en",
            },
            "text": text,
        }
        command = re.match(r"^/[A-Za-z0-9_]+(@\w+)?", text)
        if command:
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command.group(0))}]
        update = {"update_id": self.next_update_id, "message": message}
        self.user_messages[message_id] = text
        self.next_update_id += 1
        if self.webhook:
            await self._push(update)
        else:
            self.updates.append(update)
            self.version += 1
        return message_id

    async def _push(self, update: dict[str, Any]) -> None:
        """Deliver an update to the webhook; when the bot's server can't be reached, try again
        in the background (as Telegram does), never failing the caller."""
        if not await self._post_webhook(update):
            task = asyncio.ensure_future(self._redeliver(update))
            self._redeliveries.add(task)
            task.add_done_callback(self._redeliveries.discard)

    async def _post_webhook(self, update: dict[str, Any]) -> bool:
        headers = {"X-Telegram-Bot-Api-Secret-Token": self.webhook_secret} if self.webhook_secret else {}
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http,
                http.post(self.webhook, json=update, headers=headers) as response,
            ):
                await response.read()
                ok = response.status < 400
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            logging.getLogger(__name__).warning("the bot's webhook %s can't be reached: %s", self.webhook, exc)
            return False
        if ok:
            self._received(update)
        return ok

    def _received(self, update: dict[str, Any]) -> None:
        """The bot has this update (and every one before it)."""
        message = update.get("message")
        if isinstance(message, dict):
            self.delivered = max(self.delivered, int(message.get("message_id", 0)))

    async def _redeliver(self, update: dict[str, Any], attempts: int = 20) -> None:
        for _ in range(attempts):
            await asyncio.sleep(0.5)
            if not self.webhook or self.released or await self._post_webhook(update):
                return

    # -- the bot's side --------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.max_bytes)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/file/bot{token}/{path:.*}", self._file)
        return app

    async def _file(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"ok": False, "error_code": 404, "description": "Not Found: file not found"}, status=404
        )

    async def _handle(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            self.rejected += 1
            return web.json_response(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401
            )
        method = request.match_info["method"].lower()
        try:
            try:
                params = await read_params(request)
            except web.HTTPRequestEntityTooLarge:
                self.oversized += 1
                self.oversized_bytes = request.content_length or self.max_bytes + 1
                await self._activity()  # the bot answered, too big: the turn settles on it
                raise BotAPIError(413, "Request Entity Too Large") from None
            handler = getattr(self, f"_m_{method}", None)
            if handler is None:
                self.unknown_methods.append(request.match_info["method"])
                logging.getLogger(__name__).warning(
                    "the bot called an unknown Bot API method: %s", request.match_info["method"]
                )
                raise BotAPIError(404, "Not Found: method not found")
            try:
                result = await handler(params)
            except (ValueError, TypeError, AttributeError) as exc:  # a parameter of the wrong type
                raise BotAPIError(400, f"Bad Request: {exc}") from None
        except BotAPIError as exc:
            return web.json_response(
                {"ok": False, "error_code": exc.code, "description": exc.description}, status=exc.code
            )
        return web.json_response({"ok": True, "result": result})

    def _chat(self, params: dict[str, Any]) -> None:
        chat = str(params.get("chat_id", ""))
        if chat not in (str(self.user_id), f"@{self.user_first_name}"):
            raise BotAPIError(400, "Bad Request: chat not found")

    def _message(self, sent: SentMessage) -> dict[str, Any]:
        return {
            "message_id": sent.message_id,
            "date": int(sent.sent_at),
            "chat": {"id": self.user_id, "type": "private", "first_name": self.user_first_name},
            "from": {"id": self.bot_id, "is_bot": True, "first_name": "Agent", "username": self.bot_username},
            "text": sent.text,
            **({"edit_date": int(time.time())} if sent.edits else {}),
        }

    async def _activity(self, typing: bool = False) -> None:
        now = time.monotonic()
        self.last_activity = now
        if typing:
            self.last_typing = now
        else:
            self.last_message = now
        self.version += 1

    async def _m_getme(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": "Agent",
            "username": self.bot_username,
            "can_join_groups": False,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    async def _m_getupdates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        if self.webhook:
            raise BotAPIError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
            )
        offset = int(params.get("offset") or 0)
        limit = min(100, max(1, int(params.get("limit") or 100)))
        timeout = min(50.0, max(0.0, float(params.get("timeout") or 0)))
        self.polls += 1
        if offset:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        deadline = time.monotonic() + timeout
        while not self.updates and not self.released and time.monotonic() < deadline:
            await self.wait_change(self.version, deadline - time.monotonic())
        handed = self.updates[:limit]
        if handed:
            self._received(handed[-1])
        return handed

    async def _m_setwebhook(self, params: dict[str, Any]) -> bool:
        url = str(params.get("url", ""))
        if url and not url.startswith(("http://", "https://")):
            raise BotAPIError(400, "Bad Request: bad webhook: an HTTPS URL must be provided for webhook")
        if url and not urlsplit(url).hostname:
            raise BotAPIError(400, "Bad Request: bad webhook: Failed to resolve host: the URL has no host")
        self.webhook, self.webhook_secret = url, str(params.get("secret_token", ""))
        pending, self.updates = self.updates, []
        for update in pending if url else []:  # delivered in the background: its server may not be up yet
            task = asyncio.ensure_future(self._push(update))
            self._redeliveries.add(task)
            task.add_done_callback(self._redeliveries.discard)
        return True

    async def _m_deletewebhook(self, params: dict[str, Any]) -> bool:
        self.webhook = ""
        if str(params.get("drop_pending_updates", "")).lower() in ("true", "1"):
            self.updates = []
        return True

    async def _m_getwebhookinfo(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": self.webhook,
            "has_custom_certificate": False,
            "pending_update_count": len(self.updates),
        }

    async def _m_sendmessage(self, params: dict[str, Any]) -> dict[str, Any]:
        self._chat(params)
        text = str(params.get("text", ""))
        if not text.strip():
            raise BotAPIError(400, "Bad Request: message text is empty")
        if len(text) > MAX_TEXT:
            raise BotAPIError(400, "Bad Request: message is too long")
        quoted = params.get("reply_parameters")
        reply_to = quoted.get("message_id") if isinstance(quoted, dict) else params.get("reply_to_message_id")
        sent = SentMessage(
            self.next_message_id,
            text,
            time.time(),
            parse_mode=str(params.get("parse_mode") or ""),
            seen=self.delivered,
            reply_to=int(reply_to or 0),
        )
        self.next_message_id += 1
        self.sent.append(sent)
        await self._activity()
        return self._message(sent)

    def _find(self, params: dict[str, Any]) -> SentMessage:
        self._chat(params)
        wanted = int(params.get("message_id") or 0)
        found = next((m for m in self.sent if m.message_id == wanted and not m.deleted), None)
        if found is None:
            raise BotAPIError(400, "Bad Request: message to edit not found")
        return found

    async def _m_editmessagetext(self, params: dict[str, Any]) -> dict[str, Any]:
        sent = self._find(params)
        text = str(params.get("text", ""))
        if not text.strip() or len(text) > MAX_TEXT:
            raise BotAPIError(
                400,
                "Bad Request: message text is empty"
                if not text.strip()
                else "Bad Request: message is too long",
            )
        if text == sent.text:
            raise BotAPIError(400, "Bad Request: message is not modified")
        sent.text, sent.edits = text, sent.edits + 1
        sent.parse_mode = str(params.get("parse_mode") or "")
        await self._activity()
        return self._message(sent)

    async def _m_deletemessage(self, params: dict[str, Any]) -> bool:
        self._find(params).deleted = True
        await self._activity()
        return True

    async def _m_sendchataction(self, params: dict[str, Any]) -> bool:
        self._chat(params)
        await self._activity(typing=params.get("action") == "typing")
        return True

    async def _m_setmycommands(self, params: dict[str, Any]) -> bool:
        commands = params.get("commands") or []
        if not isinstance(commands, list):
            raise BotAPIError(400, "Bad Request: can't parse commands JSON object")
        self.commands = commands
        return True

    async def _m_deletemycommands(self, params: dict[str, Any]) -> bool:
        self.commands = []
        return True

    async def _m_getmycommands(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.commands

    async def _m_setmessagereaction(self, params: dict[str, Any]) -> bool:
        self._chat(params)
        return True

    async def _m_answercallbackquery(self, params: dict[str, Any]) -> bool:
        return True

    async def _m_logout(self, params: dict[str, Any]) -> bool:
        return True

    async def _m_close(self, params: dict[str, Any]) -> bool:
        return True


async def read_params(request: web.Request) -> dict[str, Any]:
    """Bot API parameters from the query string, a urlencoded or multipart form, or JSON;
    nested objects sent as JSON strings in forms are decoded."""
    params: dict[str, Any] = dict(request.query)
    if request.can_read_body:
        ctype = request.content_type
        if ctype == "application/json":
            try:
                body = await request.json()
            except ValueError:
                raise BotAPIError(400, "Bad Request: can't parse JSON") from None
            except RecursionError:  # nested past Python's stack: refused as Telegram refuses junk
                raise BotAPIError(400, "Bad Request: can't parse JSON (nested too deeply)") from None
            if isinstance(body, dict):
                params.update(body)
        elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form = await request.post()
            params.update({k: v for k, v in form.items() if isinstance(v, str)})
    for key in _JSON_FIELDS & params.keys():
        if isinstance(params[key], str):
            with contextlib.suppress(ValueError, RecursionError):
                params[key] = json.loads(params[key])
    return params
