"""The offline model stand-in: a rule-based server that speaks the Anthropic Messages API.

It is **not** a language model. It lets the reference agent (and the whole platform) run
offline, with the same wire format a real provider uses — `POST /v1/messages`, streamed
(server-sent events) or not, with `tool_use`, `tool_result` and usage — so that every path
the agent takes against a real model is exercised. Its rules:

- a user statement → one memory write per line stated, in the shape of the memory tool the
  agent offers (`memory_write {text}` of the reference agent; Hermes' `memory {action: add,
  target: memory, content}`);
- a user question → `memory_search`, then an answer from the best note found (or "you
  haven't told me" when nothing matched); an agent without a search tool (Hermes puts its
  memory into the system prompt) is answered from the best matching line of its context;
- a summarisation request (its system prompt mentions summarizing) → a lossy summary;
- after a `memory_write` result → a short acknowledgement;
- an agent that must always call a tool and replies through `send_message` (Letta) is played
  by its rules: statements → one memory-block insert (`memory_insert` / `core_memory_append`,
  with a heartbeat), then `send_message` with the acknowledgement; a question → `send_message`
  with the best line of its memory blocks or its conversation.

Reports name it as the stand-in wherever it was used.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from adapters.reference.memory import stems

STANDIN_NAME = "offline rule-based stand-in (not an LLM)"
_QUESTION_START = re.compile(
    r"^(what|how|when|where|who|whom|which|why|did|do|does|is|are|was|were|can|could|have|has|list|"
    r"какой|какая|какое|какие|сколько|когда|где|кто|что|как|почему|зачем|чей|чья|куда|откуда|"
    r"помнишь|назови|перечисли)\b",
    re.IGNORECASE,
)


def is_question(text: str) -> bool:
    t = text.strip()
    return t.endswith("?") or bool(_QUESTION_START.match(t))


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _system_text(system: Any) -> str:
    return _text_of(system) if not isinstance(system, str) else system


def _estimate(value: Any) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


SEARCH_TOOLS = (
    "memory_search",
    "tool_call",
)  # the reference agent's; OpenClaw's deferred one via its wrapper


def decide(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The rules: request body → (content blocks, stop_reason)."""
    messages = body.get("messages") or []
    system = _system_text(body.get("system", ""))
    if re.search(r"summari[sz]", system[:300], re.IGNORECASE):
        return [{"type": "text", "text": _summary(messages)}], "end_turn"
    # what came after the model's last turn: tool results and/or the user's words (agents such as
    # OpenClaw add pseudo-user context messages after the real one)
    start = max((i + 1 for i, m in enumerate(messages) if m.get("role") == "assistant"), default=0)
    tail = messages[start:]
    blocks = [b for m in tail for b in (m.get("content") if isinstance(m.get("content"), list) else [])]
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    if results and not any(t.get("name") == "send_message" for t in body.get("tools") or []):
        calls = _tool_calls(messages[start - 1]) if start else {}
        searched = [r for r in results if calls.get(str(r.get("tool_use_id"))) in SEARCH_TOOLS]
        if searched:
            found = _text_of(searched[0].get("content")) or str(searched[0].get("content", ""))
            asked = [w for m in messages[: max(0, start - 1)] if (w := _user_words(m))]
            return [{"type": "text", "text": _answer(found, asked[-1] if asked else "")}], "end_turn"
        return [{"type": "text", "text": "Noted, I saved that."}], "end_turn"
    tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if "send_message" in tools:
        return _letta_step(body, messages, system, start), "tool_use"
    text = "\n".join(w for m in tail if (w := _user_words(m)))
    for prompt, answer in _BACKGROUND:
        if prompt.search(text):
            return [{"type": "text", "text": answer}], "end_turn"
    if is_question(text):
        if "memory_search" in tools:
            return [_tool_use("memory_search", {"query": text})], "tool_use"
        if "tool_call" in tools:
            return [_tool_use("tool_call", {"id": "memory_search", "args": {"query": text}})], "tool_use"
        context = [system, *(_text_of(m.get("content")) for m in messages[:start])]
        return [{"type": "text", "text": _answer_from_context(text, context)}], "end_turn"
    statements = [
        ln.strip(" -•\t") for ln in text.splitlines() if ln.strip(" -•\t") and not ln.rstrip().endswith(":")
    ]
    if statements and "memory_write" in tools:
        return [_tool_use("memory_write", {"text": s}) for s in statements], "tool_use"
    if statements and "memory" in tools:
        return [
            _tool_use("memory", {"action": "add", "target": "memory", "content": s}) for s in statements
        ], "tool_use"
    if statements and "write" in tools:  # OpenClaw: Markdown files under memory/, one per fact
        return [
            _tool_use(
                "write",
                {"path": f"memory/fact-{uuid.uuid5(uuid.NAMESPACE_OID, s).hex[:10]}.md", "content": s + "\n"},
            )
            for s in statements
        ], "tool_use"
    return [{"type": "text", "text": "OK."}], "end_turn"


_LETTA_EVENTS = ("login", "heartbeat", "system_alert")
_LETTA_VALUE = re.compile(r"<value>\n(.*?)</value>", re.S)


def _letta_step(
    body: dict[str, Any], messages: list[dict[str, Any]], system: str, start: int
) -> list[dict[str, Any]]:
    """One step of a Letta agent: always exactly one tool call; the user reads `send_message`."""
    schemas = {
        str(t.get("name")): set((t.get("input_schema") or {}).get("properties") or {})
        for t in body.get("tools") or []
        if isinstance(t, dict)
    }

    def call(name: str, args: dict[str, Any]) -> list[dict[str, Any]]:
        props = schemas.get(name, set())
        if "thinking" in props:
            args = {"thinking": f"The rule-based stand-in calls {name}.", **args}
        if "request_heartbeat" in props:
            args["request_heartbeat"] = name != "send_message"  # continue after a memory edit
        return [_tool_use(name, args)]

    said = [w for m in messages[start:] for w in _letta_user_words(m)]
    text = "\n".join(said)
    if not text:  # a step after a tool's result (the heartbeat): say what was done
        return call("send_message", {"message": "Noted, I saved that."})
    if is_question(text):
        memory = [
            ln for v in _LETTA_VALUE.findall(system) for ln in v.splitlines() if not ln.startswith("# NOTE")
        ]
        memory = [re.sub(r"^Line \d+: ", "", ln) for ln in memory]
        earlier = [w for m in messages[:start] for w in _letta_user_words(m)]
        return call("send_message", {"message": _answer_from_context(text, [*earlier, "\n".join(memory)])})
    statements = [
        ln.strip(" -•\t") for ln in text.splitlines() if ln.strip(" -•\t") and not ln.rstrip().endswith(":")
    ]
    if statements and "memory_insert" in schemas:
        return call("memory_insert", {"label": "human", "new_str": "\n".join(statements), "insert_line": -1})
    if statements and "core_memory_append" in schemas:
        return call("core_memory_append", {"label": "human", "content": "\n".join(statements)})
    return call("send_message", {"message": "OK."})


def _letta_user_words(message: dict[str, Any]) -> list[str]:
    """The user's own words in a Letta request: its text blocks, without the JSON events Letta
    sends as user turns (login, heartbeat, system alerts)."""
    if message.get("role") != "user":
        return []
    content = message.get("content")
    texts = (
        [content]
        if isinstance(content, str)
        else [
            str(b.get("text", "")) for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
        ]
    )
    words = []
    for text in texts:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("type") in _LETTA_EVENTS:
            continue
        if text.strip():
            words.append(text.strip())
    return words


_AGENT_NOISE = [
    re.compile(r"<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>.*?<<<END_OPENCLAW_INTERNAL_CONTEXT>>>", re.S),
    re.compile(r"^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d\d-\d\d \d\d:\d\d [A-Z]+\]\s*", re.M),
    re.compile(r"^Runtime: .*$", re.M),
    # OpenClaw on Telegram: "Conversation info: ⟦openclaw:ctx⟧" and a JSON block before each turn
    re.compile(r"Conversation info: ⟦openclaw:ctx⟧\s*(?:```json\s*.*?```)?", re.S),
    # Hermes' onboarding on a user's first message: "[System note: This is the user's very first
    # message ever. … 1. Ask for … 4. Save each confirmed, durable fact …]" — its instructions
    re.compile(r"^\[System note:.*?\]\s*$", re.S | re.M),
    # OpenClaw's replayed summary after a compaction, sent as a user message: its own words, not the user's
    re.compile(
        r"The conversation history before this point was compacted into the following summary:\s*<summary>.*?</summary>",
        re.S,
    ),
]
# the agent's own background prompts (a heartbeat, a review of the conversation): answered as a
# model that has nothing to do answers them — never stored as the user's facts
_BACKGROUND = (
    # every wording of Hermes' review (memory, skills, both at once: "…update two things: **Memory**
    # … **Skills** …") opens "Review the conversation above": none of its lines is the user's
    (re.compile(r"^Review the conversation above\b|update the skill library", re.I | re.M), "Nothing to save."),
    (re.compile(r"heartbeat monitor scratch context|reply NO_REPLY", re.I), "NO_REPLY"),
    (re.compile(r"HEARTBEAT\.md|HEARTBEAT_OK"), "HEARTBEAT_OK"),
)


def _user_words(message: dict[str, Any]) -> str:
    """What the user wrote in a message, without the context agents wrap around it."""
    if message.get("role") != "user":
        return ""
    text = _text_of(message.get("content"))
    for pattern in _AGENT_NOISE:
        text = pattern.sub("", text)
    return text.strip()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _answer_from_context(question: str, texts: list[str]) -> str:
    """The line of the agent's context sharing most words with the question (newest first)."""
    wanted = stems(question)
    lines = [ln.strip(" -•§\t") for t in texts for ln in re.split(r"\n|§", t) if ln.strip(" -•§\t")]
    best, best_score = "", 0
    for line in reversed(lines):
        score = len(wanted & stems(line))
        if score > best_score and not is_question(line):
            best, best_score = line, score
    if not best_score:
        return "I have no notes about that — you haven't told me."
    return f"From what I know: {best}" + ("" if best.endswith((".", "!", "?")) else ".")


def _tool_use(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": args}


def _tool_calls(message: dict[str, Any]) -> dict[str, str]:
    content = message.get("content")
    if not isinstance(content, list):
        return {}
    return {b["id"]: b["name"] for b in content if isinstance(b, dict) and b.get("type") == "tool_use"}


def _answer(found: str, question: str = "") -> str:
    try:
        parsed = json.loads(found)
    except ValueError:
        parsed = None
    if parsed is not None and question:  # a JSON search result (OpenClaw's): its best matching string
        return _answer_from_context(question, _strings(parsed))
    notes = list(dict.fromkeys(ln[2:].strip() for ln in found.splitlines() if ln.startswith("- ")))
    if not notes and question and found.strip() and "no matching notes" not in found:
        return _answer_from_context(question, [found])  # another agent's search result format
    if not notes:
        return "I have no notes about that — you haven't told me."
    best = notes[0]
    return f"From my notes: {best}" + ("" if best.endswith((".", "!", "?")) else ".")


_CONVERSATION = re.compile(r"<conversation>(.*?)</conversation>", re.S)
_HEADING = re.compile(r"^## .+$", re.M)
# what an agent that checks its summaries may count as an identifier to keep (OpenClaw 2026.9.6
# audits paths, URLs, file names, hashes and dotted numbers): kept literally, as a model asked to would
_IDENTIFIER = re.compile(r"https?://\S+|[\w.-]*/[\w./-]+|\b[\w-]+\.[A-Za-z0-9]{1,5}\b|\b[0-9a-f]{8,}\b|\b\d+(?:\.\d+)+\b")


def _summary(messages: list[dict[str, Any]]) -> str:
    """Lossy on purpose (the first 400 characters of what was said: a memory test needs a summary
    that forgets). When the request names the sections it wants (`## Decisions` …: OpenClaw's
    summariser audits them), the same text in that shape: what was said under the first, the
    last user line under a pending-asks section, the conversation's identifiers kept literally."""
    said = " ".join(_text_of(m.get("content")) for m in messages if m.get("role") == "user")
    said = re.sub(r"\s+", " ", said)
    gist = "The user talked about: " + (said[:400] + "…" if len(said) > 400 else said)
    request = _text_of(messages[-1].get("content")) if messages else ""
    headings = _HEADING.findall(_CONVERSATION.sub("", request))
    if not headings:
        return gist
    conversation = " ".join(_CONVERSATION.findall(request))
    users = re.findall(r"^\[User[^\]]*\]: (.*)$", conversation, re.M)
    identifiers = list(dict.fromkeys(_IDENTIFIER.findall(conversation)))
    sections = []
    for n, heading in enumerate(dict.fromkeys(headings)):
        if n == 0:
            body = gist
        elif "identifier" in heading.lower():
            body = "\n".join(f"- {i}" for i in identifiers) or "- none"
        elif "ask" in heading.lower() or "request" in heading.lower():
            body = f"- {users[-1][:200]}" if users else "- none"
        else:
            body = "- none"
        sections.append(f"{heading}\n{body}")
    return "\n\n".join(sections)


def message_json(body: dict[str, Any], blocks: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model", "standin-1")),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": _estimate(body.get("messages")) + _estimate(body.get("system", "")),
            "output_tokens": _estimate(blocks),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


async def stream_events(message: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """The message as Anthropic's streaming events, text and tool input split into deltas."""
    usage = message["usage"]
    start = dict(message, content=[], stop_reason=None, usage=dict(usage, output_tokens=1))
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            text = block["text"]
            for i in range(0, len(text), 24):
                delta = {"type": "text_delta", "text": text[i : i + 24]}
                yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        else:
            head = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": head},
            )
            raw = json.dumps(block["input"], ensure_ascii=False)
            for i in range(0, len(raw), 16):
                delta = {"type": "input_json_delta", "partial_json": raw[i : i + 16]}
                yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield (
        "message_delta",
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}},
    )
    yield "message_stop", {"type": "message_stop"}


def _error(status: int, kind: str, message: str) -> web.Response:
    return web.json_response({"type": "error", "error": {"type": kind, "message": message}}, status=status)


async def handle_messages(request: web.Request) -> web.StreamResponse:
    if not request.headers.get("x-api-key") and not request.headers.get("authorization"):
        return _error(401, "authentication_error", "x-api-key header is required")
    try:
        body = await request.json()
    except ValueError:
        return _error(400, "invalid_request_error", "body is not JSON")
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or "max_tokens" not in body:
        return _error(400, "invalid_request_error", "messages and max_tokens are required")
    blocks, stop = decide(body)
    message = message_json(body, blocks, stop)
    if not body.get("stream"):
        return web.json_response(message)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    async for name, data in stream_events(message):
        await response.write(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
    await response.write_eof()
    return response


async def handle_models(request: web.Request) -> web.Response:
    """Agents probe `<base_url>/models` before they start; list the stand-in."""
    return web.json_response(
        {
            "data": [
                {
                    "type": "model",
                    "id": "standin-1",
                    "display_name": STANDIN_NAME,
                    "created_at": "2026-01-01T00:00:00Z",
                }
            ],
            "has_more": False,
            "first_id": "standin-1",
            "last_id": "standin-1",
            "object": "list",
        }
    )


def standin_app() -> web.Application:
    app = web.Application()
    app.router.add_post("/v1/messages", handle_messages)
    app.router.add_get("/v1/models", handle_models)
    app.router.add_get("/models", handle_models)
    return app
