"""Telegram, with us as Telegram: a Bot API server the bot under test points its API root at.

The persona is a user in a private chat with a fixed id. `TelegramEmulator` serves the methods
bot libraries call (long-polling `getUpdates` with offsets, webhooks, `sendMessage` and edits,
chat actions, commands, reactions...), reading parameters from the query string, a form, JSON
or multipart, checking the token and answering unknown methods `{"ok": false}` (and noting
them). `TelegramAdapter` is the chat surface: it posts the persona's message as an update and
returns the bot's reply once it **settles** — at least one message arrived, and the bot has
been quiet (no message, edit or typing) for the quiet period; preview edits and split
messages are followed, so the reply is the final text of everything the bot sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from adapters.base import AdapterConfigError, AgentExited, AgentTimeout, SessionState
from adapters.http import expand_env
from adapters.http_server import ServedApp, serve

MAX_TEXT = 4096
TYPING_SECONDS = 5.0  # how long a "typing" action shows in Telegram clients
_JSON_FIELDS = {
    "reply_markup",
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


@dataclass
class TelegramEmulator:
    """The Bot API server's state. One private chat; the user id doubles as the chat id."""

    token: str
    user_id: int = 424242
    user_first_name: str = "Alex"
    bot_id: int = 777000111
    bot_username: str = "marathon_agent_bot"
    updates: list[dict[str, Any]] = field(default_factory=list)
    next_update_id: int = 1
    next_message_id: int = 1
    webhook: str = ""
    webhook_secret: str = ""
    commands: list[dict[str, Any]] = field(default_factory=list)
    sent: list[SentMessage] = field(default_factory=list)
    last_activity: float = 0.0  # monotonic time of the bot's last message, edit, delete or chat action
    last_message: float = 0.0  # ... of its last message, edit or delete
    last_typing: float = 0.0
    polls: int = 0
    unknown_methods: list[str] = field(default_factory=list)
    version: int = 0  # bumped on every change; waiters poll it (see `wait_change`)
    released: bool = False  # the run is ending: long polls return at once

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
        self.next_update_id += 1
        if self.webhook:
            await self._push(update)
        else:
            self.updates.append(update)
            self.version += 1
        return message_id

    async def _push(self, update: dict[str, Any]) -> None:
        headers = {"X-Telegram-Bot-Api-Secret-Token": self.webhook_secret} if self.webhook_secret else {}
        async with (
            aiohttp.ClientSession() as http,
            http.post(self.webhook, json=update, headers=headers) as response,
        ):
            await response.read()

    # -- the bot's side --------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/file/bot{token}/{path:.*}", self._file)
        return app

    async def _file(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"ok": False, "error_code": 404, "description": "Not Found: file not found"}, status=404
        )

    async def _handle(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.json_response(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401
            )
        method = request.match_info["method"].lower()
        try:
            params = await read_params(request)
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
        return self.updates[:limit]

    async def _m_setwebhook(self, params: dict[str, Any]) -> bool:
        url = str(params.get("url", ""))
        if url and not url.startswith(("http://", "https://")):
            raise BotAPIError(400, "Bad Request: bad webhook: an HTTPS URL must be provided for webhook")
        self.webhook, self.webhook_secret = url, str(params.get("secret_token", ""))
        pending, self.updates = self.updates, []
        for update in pending if url else []:
            await self._push(update)
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
        sent = SentMessage(
            self.next_message_id, text, time.time(), parse_mode=str(params.get("parse_mode") or "")
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
            if isinstance(body, dict):
                params.update(body)
        elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            form = await request.post()
            params.update({k: v for k, v in form.items() if isinstance(v, str)})
    for key in _JSON_FIELDS & params.keys():
        if isinstance(params[key], str):
            with contextlib.suppress(ValueError):
                params[key] = json.loads(params[key])
    return params


class TelegramAdapter:
    """Settings: `token` (may be `${ENV}`), `user_id`, `host`/`port` of the emulated API (port 0:
    a free one; the API root is `api_root` after `open`), `quiet` (s, default 2), `timeout` (s,
    default 300), `new_session_commands` (default ["/new"]), `ignore` (regexes of status
    messages to leave out of replies)."""

    def __init__(self, settings: dict[str, Any]) -> None:
        token = expand_env(str(settings.get("token", "123456789:MARATHON-test-token-000000000000")))
        if not re.fullmatch(r"\d+:[A-Za-z0-9_-]{20,}", token):
            raise AdapterConfigError("telegram `token` must look like a bot token: <digits>:<secret>")
        self.emulator = TelegramEmulator(token=token, user_id=int(settings.get("user_id", 424242)))
        self.host = str(settings.get("host", "127.0.0.1"))
        self.port = int(settings.get("port", 0))
        self.quiet = float(settings.get("quiet", 2.0))
        self.timeout = float(settings.get("timeout", 300))
        self.new_session_commands = [str(c) for c in settings.get("new_session_commands", ["/new"])]
        self.ignore = [re.compile(p) for p in settings.get("ignore", [])]
        self.served: ServedApp | None = None
        self.sessions = 0
        self.session_reply = ""  # the bot's answer to the last new-session commands

    @property
    def api_root(self) -> str:
        """What the bot's library takes as its API root (the token is appended by the library)."""
        assert self.served is not None, "open() first"
        return self.served.url

    async def start(self) -> str:
        """Serve the emulated API (before the bot starts); returns the API root."""
        if self.served is None:
            self.served = await serve(self.emulator.app(), self.host, self.port)
        return self.api_root

    async def wait_for_bot(self, timeout: float, exited: Callable[[], str | None] | None = None) -> None:
        """Ready when the bot is polling (or has set a webhook). `exited` tells when the bot's
        process is gone (a wrong token: it exits at `getMe`) — noticed at once, not after
        `timeout`."""
        deadline = time.monotonic() + timeout
        while not (self.emulator.polls or self.emulator.webhook):
            gone = exited() if exited else None
            if gone is not None:
                raise AgentExited(f"{gone} — before it polled for updates")
            if time.monotonic() > deadline:
                raise AgentTimeout(f"the bot did not call getUpdates or setWebhook within {timeout:g} s")
            await asyncio.sleep(0.05)

    def release_polls(self) -> None:
        """The run is ending: answer the bot's pending long poll now (empty), so a bot being
        stopped is not left waiting up to 50 s for it."""
        self.emulator.released = True
        self.emulator.version += 1

    async def open(self, resume: SessionState | None = None) -> str:
        await self.start()
        if resume is not None:
            self.sessions = int(resume.id.rsplit("-", 1)[-1]) if resume.id.rsplit("-", 1)[-1].isdigit() else 0
        return self._session_id()

    def _session_id(self) -> str:
        return f"telegram-{self.emulator.user_id}-{self.sessions}"

    async def send(self, text: str) -> str:
        before = len(self.emulator.sent)
        await self.emulator.post_user_message(text)
        return await self._settle(before)

    async def _settle(self, before: int) -> str:
        em = self.emulator
        start = time.monotonic()
        while True:
            now = time.monotonic()
            fresh = [m for m in em.sent[before:] if not m.deleted]
            quiet_since = max(em.last_activity, start)
            still_typing = em.last_typing > em.last_message and now - em.last_typing < TYPING_SECONDS
            if fresh and now - quiet_since >= self.quiet and not still_typing:
                texts = [m.plain for m in fresh if not any(p.search(m.plain) for p in self.ignore)]
                return "\n".join(texts)
            if now - start > self.timeout:
                raise AgentTimeout(f"the bot sent no settled reply within {self.timeout:g} s")
            await em.wait_change(em.version, 0.05)

    async def new_session(self) -> str:
        """Send the new-session commands; what the bot answered them is `session_reply` (the
        run logs it, so a user can see the command reached the bot's handler)."""
        replies = [await self.send(command) for command in self.new_session_commands]
        self.session_reply = "\n".join(r for r in replies if r)
        self.sessions += 1
        return self._session_id()

    async def close(self) -> None:
        if self.served is not None:
            await self.served.stop()
            self.served = None
