"""Telegram, with us as Telegram: the chat surface over the emulated Bot API (`telegram_api.py`).

`TelegramAdapter` posts the persona's message as an update and returns the bot's reply once it
**settles** — at least one message arrived, and the bot has been quiet (no message, edit or
typing) for the quiet period; preview edits and split messages are followed, so the reply is
the final text of everything the bot sent in answer.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import Any

from adapters.base import (
    AdapterConfigError,
    AgentAuthError,
    AgentExited,
    AgentReplyTooLarge,
    AgentTimeout,
    OffTurn,
    SessionState,
    compact_commands,
    max_reply_bytes,
    number_setting,
)
from adapters.http import expand_env
from adapters.http_server import ServedApp, serve
from adapters.telegram_api import TYPING_SECONDS, SentMessage, TelegramEmulator

TOKEN_GRACE = 2.0  # s after a first wrong-token request: the bot may still come with the right one


class TelegramAdapter:
    """Settings: `token` (may be `${ENV}`), `user_id`, `host`/`api_port` of the emulated API
    (default 0: a free one; the API root is `api_root` after `open`; `port` is the agent's own,
    e.g. OpenClaw's gateway, never the emulation's), `quiet` (s, default 2), `timeout` (s,
    default 300), `new_session_commands` (default ["/new"]), `ignore` (regexes of status
    messages to leave out of replies), `initiated` (regexes of messages the agent sends on its
    own, e.g. heartbeats), `grace` (s, default 10: after a timeout, how long the next message
    waits for the late reply).

    A reply is tied to the message it answers: a bot message that quotes another user message
    (`reply_to_message_id`) answers that one; one sent before the bot had received the message
    (by `getUpdates` or its webhook) can't answer it. Those, messages sent between turns and
    messages matching `initiated` are off-turn (`take_off_turn`): late replies to their own
    message, or the agent's own initiative — never part of a reply."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.compact_commands = compact_commands(settings)
        self.max_reply_bytes = max_reply_bytes(settings)
        token = expand_env(str(settings.get("token", "123456789:MARATHON-test-token-000000000000")))
        if not re.fullmatch(r"\d+:[A-Za-z0-9_-]{20,}", token):
            raise AdapterConfigError("telegram `token` must look like a bot token: <digits>:<secret>")
        self.emulator = TelegramEmulator(token=token, user_id=int(settings.get("user_id", 424242)))
        self.emulator.max_bytes = self.max_reply_bytes
        self.host = str(settings.get("host", "127.0.0.1"))
        self.port = int(number_setting(settings, "api_port", 0, whole=True))
        self.quiet = number_setting(settings, "quiet", 2.0)
        self.timeout = number_setting(settings, "timeout", 300)
        self.new_session_commands = [str(c) for c in settings.get("new_session_commands", ["/new"])]
        self.ignore = [re.compile(p) for p in settings.get("ignore", [])]
        self.initiated = [re.compile(p) for p in settings.get("initiated", [])]
        self.grace = number_setting(settings, "grace", 10.0)
        self.off_turn: list[OffTurn] = []
        self.classified = 0  # bot messages up to here are a reply or off-turn already
        self.timed_out: int = 0  # the user message whose reply never came (0: none)
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
        first_rejected: float | None = None
        while not (self.emulator.polls or self.emulator.webhook):
            gone = exited() if exited else None
            if gone is not None:
                raise AgentExited(f"{gone} — before it polled for updates")
            if self.emulator.rejected and first_rejected is None:
                first_rejected = time.monotonic()
            if first_rejected is not None and time.monotonic() - first_rejected > TOKEN_GRACE:
                # the agent logs "token rejected" and retries for minutes: name it now
                raise AgentAuthError(
                    401,
                    f"the bot called the Bot API with another token than the run's ({self.emulator.rejected} "
                    "request(s) refused with 401) — its config must take the run's token "
                    "(${TELEGRAM_BOT_TOKEN}, the profile's `token`), not one of its own",
                )
            if time.monotonic() > deadline:
                raise AgentTimeout(f"the bot did not call getUpdates or setWebhook within {timeout:g} s")
            await asyncio.sleep(0.05)

    def bot_stopped(self) -> None:
        """The bot's process was stopped to be started again (a checkpoint): it is ready again
        only when it polls (or sets its webhook) again, as at its first start. A bot that drops
        the updates waiting at start (Hermes) lost a message sent before that."""
        self.emulator.polls = 0
        self.emulator.webhook = ""

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

    def take_off_turn(self) -> list[OffTurn]:
        taken, self.off_turn = self.off_turn, []
        return taken

    async def send(self, text: str) -> str:
        em = self.emulator
        if self.timed_out:
            await self._wait_for_late_reply()
        self._sweep()
        message_id = await em.post_user_message(text)
        try:
            reply = await self._settle(message_id)
        except AgentTimeout:
            self.timed_out = message_id
            raise
        self.timed_out = 0
        return reply

    def _off(self, m: SentMessage, message_id: int) -> OffTurn | None:
        """Why `m` is not part of the reply to `message_id`, or None when it is. It answers the
        message it quotes, else the last one the bot had received when it sent it."""
        if any(p.search(m.plain) for p in self.initiated):
            return OffTurn("initiated", m.plain, why="matches the profile's `initiated` patterns")
        answers = m.reply_to if m.reply_to in self.emulator.user_messages else m.seen
        if answers == message_id:
            return None
        if answers and (answers == self.timed_out or m.reply_to):
            return OffTurn("late", m.plain, answers=self.emulator.user_messages[answers])
        return OffTurn("initiated", m.plain, why="sent before the bot had received the message")

    def _sweep(self) -> None:
        """Classify what the bot sent since the last reply settled (before the next message):
        a late reply to the message that timed out or to the one it quotes, else its own."""
        em = self.emulator
        for m in em.sent[self.classified :]:
            if m.deleted:
                continue
            if self.timed_out and m.reply_to in (0, self.timed_out):
                self.off_turn.append(OffTurn("late", m.plain, answers=em.user_messages[self.timed_out]))
            elif m.reply_to in em.user_messages:
                self.off_turn.append(OffTurn("late", m.plain, answers=em.user_messages[m.reply_to]))
            else:
                self.off_turn.append(OffTurn("initiated", m.plain, why="sent between turns"))
        self.classified = len(em.sent)

    async def _wait_for_late_reply(self) -> None:
        """After a timeout the bot may still answer; wait up to `grace` for that answer (until
        it is quiet) so it is logged as late, not taken for the next message's reply."""
        em = self.emulator
        start = time.monotonic()
        while time.monotonic() - start < self.grace:
            late = [m for m in em.sent[self.classified :] if not m.deleted]
            if late and time.monotonic() - em.last_activity >= self.quiet:
                break
            await em.wait_change(em.version, 0.05)
        self._sweep()
        self.timed_out = 0

    async def _settle(self, message_id: int) -> str:
        em = self.emulator
        before = self.classified
        refused = em.oversized  # requests past `max_reply_bytes`, refused 413 as Telegram does
        start = time.monotonic()
        while True:
            now = time.monotonic()
            judged = [(m, self._off(m, message_id)) for m in em.sent[before:] if not m.deleted]
            mine = [m for m, off in judged if off is None]
            quiet_since = max(em.last_activity, start)
            still_typing = em.last_typing > em.last_message and now - em.last_typing < TYPING_SECONDS
            if not mine and em.oversized > refused and now - quiet_since >= self.quiet and not still_typing:
                # its reply was refused for its size and nothing came instead: cut, not a timeout
                raise AgentReplyTooLarge(em.oversized_bytes, em.max_bytes, "Bot API request")
            if mine and now - quiet_since >= self.quiet and not still_typing:
                self.off_turn += [off for _, off in judged if off is not None]
                self.classified = len(em.sent)
                texts = [m.plain for m in mine if not any(p.search(m.plain) for p in self.ignore)]
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

    async def compact(self) -> str:
        """Send the agent's compaction commands; returns what it answered the last."""
        replies = [await self.send(command) for command in self.compact_commands]
        return replies[-1] if replies else ""

    async def close(self) -> None:
        if self.served is not None:
            await self.served.stop()
            self.served = None
