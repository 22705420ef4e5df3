"""A small memory bot written with python-telegram-bot, as anyone would write one — the only
marathonbench-specific thing is where its API base URL points (TELEGRAM_API_ROOT).

It remembers every statement and answers a question with the remembered line sharing the most
words with it; `/new` starts a new session (memory stays). Replies come as a typing action, a
short preview, then an edit to the full text; anything longer than 4,000 characters is split.

For the fault tests, as real agents do: SLOW_FIRST=S answers the first message only after S
seconds (past the run's timeout); HEARTBEAT=TEXT sends TEXT on its own right after each answer
to a question (like OpenClaw's heartbeat alerts); GREETING=TEXT greets chat CHAT_ID at start;
DROP_PENDING=1 drops the updates waiting when it starts, as Hermes' Telegram gateway does.
"""

from __future__ import annotations

import asyncio
import os
import re

from telegram import Update
from telegram.ext import Application, CommandHandler, ContextTypes, MessageHandler, filters

NOTES: list[str] = []
ANSWERED = 0


def words(text: str) -> set[str]:
    return {
        w[:5]
        for w in re.findall(r"\w+", text.lower())
        if len(w) > 2 and w not in {"what", "which", "the", "how", "who", "does"}
    }


async def new(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    assert update.message is not None
    await update.message.reply_text("Okay, new session.")


async def talk(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    global ANSWERED
    message = update.message
    assert message is not None and message.text is not None
    ANSWERED += 1
    if ANSWERED == 1 and os.environ.get("SLOW_FIRST"):
        await asyncio.sleep(float(os.environ["SLOW_FIRST"]))
    await context.bot.send_chat_action(message.chat_id, "typing")
    text = message.text
    if text.startswith("LONG "):
        reply = "x" * int(text.split()[1])
    elif text.rstrip().endswith("?"):
        best = max(NOTES, key=lambda n: len(words(n) & words(text)), default="")
        reply = f"You told me: {best}" if best and words(best) & words(text) else "You never told me that."
    else:
        NOTES.extend(
            line.strip("- ") for line in text.splitlines() if line.strip() and not line.endswith(":")
        )
        reply = "Got it, I'll remember."
    for start in range(0, len(reply), 4000):
        chunk = reply[start : start + 4000]
        preview = await message.reply_text(chunk[:8] + "…")
        await preview.edit_text(chunk)
    if text.rstrip().endswith("?") and os.environ.get("HEARTBEAT"):
        await context.bot.send_message(message.chat_id, os.environ["HEARTBEAT"])


async def greet(app: Application) -> None:  # type: ignore[type-arg]
    if os.environ.get("GREETING"):
        await app.bot.send_message(int(os.environ["CHAT_ID"]), os.environ["GREETING"])


def main() -> None:
    app = (
        Application.builder()
        .token(os.environ["TELEGRAM_BOT_TOKEN"])
        .base_url(os.environ["TELEGRAM_API_ROOT"].rstrip("/") + "/bot")
        .post_init(greet)
        .build()
    )
    app.add_handler(CommandHandler("new", new))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, talk))
    app.run_polling(
        poll_interval=0.0,
        timeout=int(os.environ.get("POLL_TIMEOUT", "1")),  # long-poll seconds
        drop_pending_updates=os.environ.get("DROP_PENDING") == "1" or None,
    )


if __name__ == "__main__":
    main()
