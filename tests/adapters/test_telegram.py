"""The Bot API emulation: real clients (aiohttp here; python-telegram-bot in a process) against it."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from adapters.base import AgentReplyTooLarge
from adapters.http_server import serve
from adapters.telegram import TelegramAdapter
from gateway.log.events import (
    Evaluation,
    SessionChanged,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import BenchFactory

BOT = Path(__file__).parent / "bots" / "ptb_memory_bot.py"


@pytest.fixture
async def telegram() -> AsyncIterator[TelegramAdapter]:
    adapter = TelegramAdapter({"quiet": 0.2, "timeout": 10})
    await adapter.start()
    yield adapter
    await adapter.close()


def encoded(params: dict[str, Any]) -> dict[str, str]:
    """Form and query values: nested objects as JSON strings, as the Bot API expects."""
    return {k: json.dumps(v) if isinstance(v, (list, dict)) else str(v) for k, v in params.items()}


async def api(
    adapter: TelegramAdapter, method: str, how: str = "json", token: str | None = None, **params: Any
) -> tuple[int, Any]:
    url = f"{adapter.api_root}/bot{token or adapter.emulator.token}/{method}"
    async with aiohttp.ClientSession() as http:
        if how == "json":
            request = http.post(url, json=params)
        elif how == "form":
            request = http.post(
                url,
                data={k: json.dumps(v) if isinstance(v, (list, dict)) else str(v) for k, v in params.items()},
            )
        elif how == "multipart":
            form = aiohttp.FormData()
            for k, v in encoded(params).items():
                form.add_field(k, v)
            form.add_field("document", b"bytes", filename="a.txt")
            request = http.post(url, data=form)
        else:
            request = http.get(url, params=encoded(params))
        async with request as response:
            return response.status, await response.json()


@pytest.mark.parametrize("how", ["json", "form", "multipart", "query"])
async def test_parameters_arrive_every_way_bots_send_them(telegram: TelegramAdapter, how: str) -> None:
    chat = telegram.emulator.user_id
    status, body = await api(telegram, "sendMessage", how, chat_id=chat, text="hello", parse_mode="HTML")
    assert status == 200 and body["result"]["text"] == "hello" and body["result"]["chat"]["id"] == chat
    status, body = await api(
        telegram, "setMyCommands", how, commands=[{"command": "new", "description": "new session"}]
    )
    assert body == {"ok": True, "result": True}
    assert (await api(telegram, "getMyCommands", how))[1]["result"] == [
        {"command": "new", "description": "new session"}
    ]


async def test_the_token_is_checked_and_method_names_are_case_insensitive(telegram: TelegramAdapter) -> None:
    status, body = await api(telegram, "getMe", token="123:wrong-token-wrong-token-wrong")
    assert status == 401 and body["ok"] is False
    status, body = await api(telegram, "GETME")
    assert status == 200 and body["result"]["is_bot"] is True


async def test_unknown_methods_and_bad_messages_are_refused_and_noted(telegram: TelegramAdapter) -> None:
    status, body = await api(telegram, "sendRocket", chat_id=1)
    assert status == 404 and body["ok"] is False and telegram.emulator.unknown_methods == ["sendRocket"]
    assert (await api(telegram, "sendMessage", chat_id=telegram.emulator.user_id, text="x" * 4097))[1][
        "description"
    ] == "Bad Request: message is too long"
    assert (await api(telegram, "sendMessage", chat_id=999, text="hi"))[1][
        "description"
    ] == "Bad Request: chat not found"


async def test_long_polling_offsets_and_commands(telegram: TelegramAdapter) -> None:
    em = telegram.emulator
    poll = asyncio.create_task(api(telegram, "getUpdates", timeout=5))
    await asyncio.sleep(0.2)
    assert not poll.done()  # held open while there is nothing
    await em.post_user_message("/new")
    _, body = await asyncio.wait_for(poll, 5)
    (update,) = body["result"]
    assert update["message"]["entities"] == [{"type": "bot_command", "offset": 0, "length": 4}]
    assert update["message"]["chat"]["id"] == update["message"]["from"]["id"] == em.user_id
    await em.post_user_message("second")
    _, again = await api(telegram, "getUpdates", offset=update["update_id"] + 1, limit=1)
    assert [u["message"]["text"] for u in again["result"]] == [
        "second"
    ]  # the first was confirmed and dropped
    assert "entities" not in again["result"][0]["message"]


async def test_a_webhook_that_cant_be_reached_is_answered_as_the_bot_api_does(telegram: TelegramAdapter) -> None:
    """Its server not up yet (or never): no HTTP 500, no traceback; the update waits for it."""
    await telegram.emulator.post_user_message("queued before the webhook")
    status, body = await api(telegram, "setWebhook", url="http://127.0.0.1:9/hook")
    assert (status, body) == (200, {"ok": True, "result": True})
    await telegram.emulator.post_user_message("while it is unreachable")  # never raises
    status, body = await api(telegram, "setWebhook", url="http:///no-host")
    assert status == 400 and body["ok"] is False and body["description"].startswith("Bad Request: bad webhook")
    received: list[str] = []

    async def hook(request: web.Request) -> web.Response:
        received.append((await request.json())["message"]["text"])
        return web.Response()

    app = web.Application()
    app.router.add_post("/hook", hook)
    served = await serve(app)
    try:  # the webhook comes up: what waited is delivered
        await api(telegram, "setWebhook", url=f"{served.url}/hook")
        await telegram.emulator.post_user_message("once it is up")
        for _ in range(60):
            if "while it is unreachable" in received:
                break
            await asyncio.sleep(0.1)
        assert {"once it is up", "while it is unreachable"} <= set(received)
    finally:
        await served.stop()


async def test_a_webhook_gets_pushed_updates_and_blocks_polling(telegram: TelegramAdapter) -> None:
    received: list[Any] = []

    async def hook(request: web.Request) -> web.Response:
        received.append((await request.json(), request.headers.get("X-Telegram-Bot-Api-Secret-Token")))
        return web.Response()

    app = web.Application()
    app.router.add_post("/hook", hook)
    served = await serve(app)
    try:
        await api(telegram, "setWebhook", url=f"{served.url}/hook", secret_token="s3")
        status, body = await api(telegram, "getUpdates")
        assert status == 409 and "webhook is active" in body["description"]
        await telegram.emulator.post_user_message("hi via webhook")
        assert received[0][0]["message"]["text"] == "hi via webhook" and received[0][1] == "s3"
        await api(telegram, "deleteWebhook")
        assert (await api(telegram, "getUpdates"))[0] == 200
    finally:
        await served.stop()


async def test_a_reply_settles_after_edits_and_split_messages(telegram: TelegramAdapter) -> None:
    em = telegram.emulator

    async def bot() -> None:
        _, _body = await api(telegram, "getUpdates", timeout=5)
        await asyncio.sleep(0.05)
        await api(telegram, "sendChatAction", chat_id=em.user_id, action="typing")
        await asyncio.sleep(0.3)  # thinking, still "typing"
        _, sent = await api(telegram, "sendMessage", chat_id=em.user_id, text="Prev…")
        await asyncio.sleep(0.1)
        await api(
            telegram,
            "editMessageText",
            chat_id=em.user_id,
            message_id=sent["result"]["message_id"],
            text="Part one, final.",
        )
        await api(telegram, "sendMessage", chat_id=em.user_id, text="Part two.")
        _, gone = await api(telegram, "sendMessage", chat_id=em.user_id, text="(status: thinking)")
        await api(telegram, "deleteMessage", chat_id=em.user_id, message_id=gone["result"]["message_id"])

    task = asyncio.create_task(bot())
    reply = await telegram.send("tell me")
    await task
    assert reply == "Part one, final.\nPart two."


async def test_no_reply_is_a_timeout(telegram: TelegramAdapter) -> None:
    telegram.timeout = 0.5
    with pytest.raises(TimeoutError):
        await telegram.send("anyone?")


async def test_a_python_telegram_bot_completes_a_scripted_run(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    agent = {
        "adapter": "telegram",
        "quiet": 0.3,
        "timeout": 30,
        "process": {
            "command": [sys.executable, str(BOT)],
            "env": {
                "TELEGRAM_API_ROOT": "${TELEGRAM_API_ROOT}",
                "TELEGRAM_BOT_TOKEN": "${TELEGRAM_BOT_TOKEN}",
            },
            "ready_timeout": 60,
        },
    }
    outcome = await run_spec(RunSpec("ptb", make_benchmark(), agent), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "ptb" / EVENTS_FILE)
    scores = {e.question_id: e.score for e in log.events if isinstance(e, Evaluation)}
    assert scores["q1"] == 10  # "What is my cat called?" → "You told me: My cat is called Miso"
    assert set(scores) == {"q1", "q2", "q3"}
    # the bot's answer to /new is kept with the session change: the command reached its handler
    sessions = [e for e in log.events if isinstance(e, SessionChanged) and e.action == "new_session"]
    assert [e.reply for e in sessions] == ["Okay, new session."]


async def test_long_replies_are_split_by_the_bot_and_joined_by_us(tmp_path: Path) -> None:
    adapter = TelegramAdapter({"quiet": 0.3, "timeout": 30})
    from adapters.lifecycle import AgentProcess

    root = await adapter.start()
    env = {"TELEGRAM_API_ROOT": root, "TELEGRAM_BOT_TOKEN": adapter.emulator.token}
    process = AgentProcess({"command": [sys.executable, str(BOT)], "env": env}, tmp_path, {})
    await process.start()
    try:
        await adapter.wait_for_bot(30)
        reply = await adapter.send("LONG 9000")
    finally:
        await process.stop()
        await adapter.close()
    assert reply == "x" * 4000 + "\n" + "x" * 4000 + "\n" + "x" * 1000


async def test_replies_are_read_as_the_user_sees_them(telegram: TelegramAdapter) -> None:
    em = telegram.emulator

    async def bot() -> None:
        await api(telegram, "getUpdates", timeout=5)
        await api(telegram, "sendMessage", chat_id=em.user_id, text="📬 status note", parse_mode="MarkdownV2")
        await api(
            telegram,
            "sendMessage",
            chat_id=em.user_id,
            text="Noted, rent is 1,915 \\(since March\\)\\.",
            parse_mode="MarkdownV2",
        )
        await api(telegram, "sendMessage", chat_id=em.user_id, text="<b>Tom &amp; Lia</b>", parse_mode="HTML")

    telegram.ignore = [__import__("re").compile("^📬")]
    task = asyncio.create_task(bot())
    reply = await telegram.send("hi")
    await task
    assert reply == "Noted, rent is 1,915 (since March).\nTom & Lia"


async def test_a_pending_long_poll_is_answered_at_once_when_the_run_ends(telegram: TelegramAdapter) -> None:
    """The bot is stopped while it long-polls; its poll must not hold the shutdown for 30 s."""
    poll = asyncio.create_task(api(telegram, "getUpdates", timeout=30))
    await asyncio.sleep(0.3)
    assert not poll.done()
    telegram.release_polls()
    status, body = await asyncio.wait_for(poll, 5)
    assert status == 200 and body == {"ok": True, "result": []}


async def test_a_bot_with_a_wrong_token_is_named_within_seconds(telegram: TelegramAdapter) -> None:
    """Real bots log "token rejected" and retry for minutes; the run used to wait its whole
    ready timeout and say only "did not call getUpdates". The wrong token is never printed."""
    import time

    from adapters.base import AgentAuthError

    wrong = "987654321:WRONG-token-for-this-bot-000000000000"

    async def retrying_bot() -> None:
        while True:
            await api(telegram, "getMe", token=wrong)
            await asyncio.sleep(0.5)

    bot = asyncio.create_task(retrying_bot())
    started = time.monotonic()
    try:
        with pytest.raises(AgentAuthError, match="another token than the run's") as raised:
            await telegram.wait_for_bot(60)
    finally:
        bot.cancel()
    assert time.monotonic() - started < 10 and wrong not in str(raised.value)
    assert "WRONG" not in str(raised.value)


def test_the_bot_api_port_is_not_the_agent_s_port() -> None:
    """openclaw-telegram's `port` is OpenClaw's gateway (`--port ${PORT}`, its health check);
    the emulated Bot API took it too, and the start was refused ("something already answers")."""
    adapter = TelegramAdapter({"port": 18789})
    assert adapter.port == 0
    assert TelegramAdapter({"api_port": 18800}).port == 18800


async def test_a_reply_refused_for_its_size_is_reply_too_large_not_a_timeout() -> None:
    """A bot whose answer passes `max_reply_bytes` gets Telegram's 413; the turn ends at once as
    `reply_too_large` with the size (it waited out the whole timeout, then said "no reply")."""
    telegram = TelegramAdapter({"quiet": 0.2, "timeout": 30, "max_reply_bytes": 64 * 1024})
    await telegram.start()
    em = telegram.emulator

    async def bot() -> int:
        await api(telegram, "getUpdates", timeout=5)
        status, _ = await api(telegram, "sendMessage", chat_id=em.user_id, text="x" * 200_000)
        return status

    task = asyncio.create_task(bot())
    started = time.monotonic()
    try:
        with pytest.raises(AgentReplyTooLarge, match=r"Bot API request was (more than )?[\d,]+ bytes, past the limit of 65,536"):
            await telegram.send("tell me everything")
        assert await task == 413 and time.monotonic() - started < 10
    finally:
        await telegram.close()


async def test_a_new_emulator_s_update_ids_follow_every_earlier_one_s() -> None:
    """A bot's state outlives the emulator (a resumed run, a fork from a checkpoint): a new
    emulator's first update id is past every id an earlier one gave, so no new message is
    taken for one the bot already handled."""
    from adapters.telegram_api import TelegramEmulator

    first = TelegramEmulator(token="1:a")
    for n in range(50):
        await first.post_user_message(f"message {n}")
    seen = max(u["update_id"] for u in first.updates)
    second = TelegramEmulator(token="1:a")
    assert second.next_update_id > seen and second.next_message_id > first.next_message_id - 1
    assert second.next_update_id < 2**53  # a JavaScript number holds it exactly
