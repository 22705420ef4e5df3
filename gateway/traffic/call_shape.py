"""Whether a model call is the agent answering the persona, known by its shape.

The gateway knows every message it sent. A model call that answers it carries that message as
its conversation's last user text — followed only by the agent's own tool calls and their
results. A call whose conversation ends in anything else (a review prompt over the chat so far,
a heartbeat, a title request) is the agent working on its own: recorded, never counted against
the question being asked. Phrase lists (`profiles.json5` `background`) fall behind each agent
release — Hermes 0.19.0's combined review prompt matched none and charged 24 memory writes to
one question — so the shape decides, and the phrases only label what they know.

What a caller may rely on: `answers` never raises on a malformed call, and says True when it
can't tell (no message known, no user text in the call): the shape only ever moves a call out
of a question's count when it is sure the persona's message is not what the call answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from gateway.traffic.wire import LLMCall, text_of

# share of the message's words the call's last user text must hold (an agent may wrap them in
# context, a timestamp, a sender's name; it never drops a fifth of them)
WORDS_HELD = 0.8
_WORD = re.compile(r"\w+")


def last_user_text(call: LLMCall, users_words: Callable[[str], str] | None = None) -> str | None:
    """The conversation's last user text, skipping back over tool results, the agent's tool
    calls and user messages that hold only the agent's own context (`users_words`, the
    profile's cleaning, leaves nothing of them: OpenClaw 2026.9.6 sends its internal-context
    block as a user message of its own *after* the persona's); None when there is none. The
    text is returned as sent (uncleaned)."""
    for message in reversed(call.messages):
        role = message.get("role")
        if role == "tool" or _tool_results_only(message.get("content")):
            continue
        if role == "user":
            text = text_of(message.get("content"))
            if not _cleaned(text, users_words).strip():
                continue  # the agent's own context, sent as a user message: not what it answers
            return text
        if role == "assistant" and not calls_a_tool(message):
            return None  # a finished reply after the last user text: the call is not answering it
    return None


def answers(call: LLMCall, message: str, users_words: Callable[[str], str] | None = None) -> bool:
    """Whether `call` answers the persona's `message` — its last user text holds the message's
    words (`users_words`: the profile's cleaning of an agent's wrapping, when given)."""
    wanted = _words(message)
    if not wanted:
        return True
    text = last_user_text(call, users_words)
    if text is None:
        return not call.messages  # no conversation at all: nothing to judge by
    held = _words(_decoded(_cleaned(text, users_words)))
    return len(wanted & held) >= WORDS_HELD * len(wanted)


def _cleaned(text: str, users_words: Callable[[str], str] | None) -> str:
    return users_words(text) if users_words is not None else text


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _decoded(text: str) -> str:
    """`text` with the strings of a JSON object it holds decoded — an agent that sends the
    user's message as JSON (Letta's `{"type": "user_message", "message": …}`) escapes quotes
    and non-ASCII letters."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            return f"{text}\n{text_of(json.loads(stripped))}"
        except ValueError:
            return text
    return text


def _tool_results_only(content: Any) -> bool:
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") in ("tool_result", "function_call_output") for b in content)
    )


def calls_a_tool(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return bool(message.get("tool_calls")) or (
        isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)
    )
