"""The reference agent: a small, real memory agent served over HTTP on loopback.

It is an agent under test like any other (it imports nothing of `gateway` or `persona`). It
keeps a context window of recent turns per session, a Markdown memory folder with the tools
`memory_write` and `memory_search`, and compacts its own context past a token threshold with a
summarisation call. Every model call goes through the official `anthropic` SDK at a
configurable base URL: the offline stand-in (`standin.py`) or, with a key, a real model.

HTTP surface: `POST /chat {"message", "session_id"}` → `{"reply"}`; `GET /health`;
`GET /stats` (compactions and memory calls so far, for humans — the gateway does not use it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
from aiohttp import web

from adapters.reference.faults import IGNORED_ANSWER, REFUSED_WRITE, MemoryFaults
from adapters.reference.memory import MemoryFolder

PROMPTS = Path(__file__).parent / "prompts"
TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_write",
        "description": "Save one fact to long-term memory.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "memory_search",
        "description": "Search long-term memory; returns the best matching notes, newest first among equals.",
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
]
MAX_TOOL_ROUNDS = 6


@dataclass
class AgentConfig:
    base_url: str
    memory_dir: Path
    api_key: str = "offline-stand-in"
    model: str = "standin-1"
    max_tokens: int = 1024
    context_tokens: int = 2000
    keep_turns: int = 2
    stream: bool = True
    llm_timeout: float = 120.0
    # the memory add-on: False gives the same agent without memory tools (the B side of a
    # with/without-memory A/B); its compactions still summarise, so only the add-on differs
    memory: bool = True
    # stages of memory broken on purpose (adapters/reference/faults.py): the autopsy's known truth
    faults: MemoryFaults = field(default_factory=MemoryFaults)


@dataclass
class Stats:
    compactions: int = 0
    memory_writes: int = 0
    memory_searches: int = 0
    model_calls: int = 0


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """About four characters per token: only used to decide when to compact."""
    return sum(len(str(m.get("content", ""))) for m in messages) // 4


@dataclass
class Session:
    messages: list[dict[str, Any]] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


COMPACT_COMMAND = "/compact"  # a chat message that makes the agent compact its context now


class ReferenceAgent:
    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.memory = MemoryFolder(config.memory_dir)
        self.client = anthropic.AsyncAnthropic(
            api_key=config.api_key, base_url=config.base_url, max_retries=2, timeout=config.llm_timeout
        )
        self.system = (PROMPTS / ("system.md" if config.memory else "system-no-memory.md")).read_text(
            encoding="utf-8"
        )
        self.summary_prompt = (PROMPTS / "summary.md").read_text(encoding="utf-8")
        self.sessions: dict[str, Session] = {}
        self.stats = Stats()

    async def chat(self, session_id: str, text: str) -> str:
        session = self.sessions.setdefault(session_id, Session())
        if text.strip() == COMPACT_COMMAND:  # as OpenClaw's /compact: summarise the context now
            async with session.lock:
                compacted = await self._compact(session)
            return "Context compacted." if compacted else "Nothing to compact yet."
        async with session.lock:
            session.messages.append({"role": "user", "content": text})
            reply = await self._tool_loop(session)
            session.messages.append({"role": "assistant", "content": reply})
            if estimate_tokens(session.messages) > self.config.context_tokens:
                await self._compact(session)
            return reply

    async def _call(
        self, system: str, messages: list[dict[str, Any]], tools: bool
    ) -> anthropic.types.Message:
        self.stats.model_calls += 1
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "system": system,
            "messages": messages,
        }
        if tools:
            # the no_search fault: the search tool is not offered (stored, never retrieved)
            kwargs["tools"] = [t for t in TOOLS if not (self.config.faults.no_search and t["name"] == "memory_search")]
        if self.config.stream:
            async with self.client.messages.stream(**kwargs) as stream:
                return await stream.get_final_message()
        message: anthropic.types.Message = await self.client.messages.create(**kwargs)
        return message

    async def _tool_loop(self, session: Session) -> str:
        working = list(session.messages)
        searched = False
        for _ in range(MAX_TOOL_ROUNDS):
            message = await self._call(self.system, working, tools=self.config.memory)
            blocks = [b.model_dump(exclude_none=True) for b in message.content]
            working.append({"role": "assistant", "content": blocks})
            if message.stop_reason != "tool_use":
                if searched and self.config.faults.ignore_results:  # found, then not used
                    return IGNORED_ANSWER
                return "".join(b.text for b in message.content if b.type == "text").strip()
            searched = searched or any(b.type == "tool_use" and b.name == "memory_search" for b in message.content)
            results = [self._run_tool(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]
            working.append({"role": "user", "content": results})
        return "(I could not finish this answer.)"

    def _run_tool(self, tool_use_id: str, name: str, args: object) -> dict[str, Any]:
        params = args if isinstance(args, dict) else {}
        if name == "memory_write":
            self.stats.memory_writes += 1
            text = str(params.get("text", ""))
            if self.config.faults.refuses(text):  # never stored
                return {"type": "tool_result", "tool_use_id": tool_use_id, "content": REFUSED_WRITE, "is_error": True}
            silent = self.config.faults.silent_answer(text)  # refused or deduped, said only in words
            # the acknowledgement a stored note gets, and nothing written (the fault: never stored)
            content = silent or ("saved" if self.config.faults.acks_without_writing(text) else self.memory.write(text))
        elif name == "memory_search":
            self.stats.memory_searches += 1
            found = self.memory.search(str(params.get("query", "")))
            content = "\n".join(f"- {f}" for f in found) if found else "no matching notes"
        else:
            return {
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": f"unknown tool {name}",
                "is_error": True,
            }
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}

    async def _compact(self, session: Session) -> bool:
        """Summarise all but the last `keep_turns` exchanges; the summary replaces them.
        False when there is nothing older to summarise."""
        keep = 2 * self.config.keep_turns
        old, recent = session.messages[:-keep], session.messages[-keep:]
        if not old:
            return False
        transcript = "\n".join(f"{m['role']}: {m['content']}" for m in old if isinstance(m["content"], str))
        message = await self._call(
            self.summary_prompt,
            [{"role": "user", "content": f"<conversation>\n{transcript}\n</conversation>"}],
            tools=False,
        )
        summary = "".join(b.text for b in message.content if b.type == "text")
        self.stats.compactions += 1
        if self.config.faults.lose:  # stored, then lost
            self.memory.drop(self.config.faults.loses)
        session.messages = [
            {"role": "user", "content": f"Summary of our earlier conversation:\n{summary}"},
            {"role": "assistant", "content": "Understood."},
            *recent,
        ]
        return True

    async def close(self) -> None:
        """Release the model client's connections (call before the event loop ends)."""
        await self.client.close()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/chat", self._handle_chat)
        app.router.add_get("/health", self._handle_health)
        app.router.add_get("/stats", self._handle_stats)
        return app

    async def _handle_chat(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
            text = body["message"]
            session_id = str(body.get("session_id") or "default")
        except (ValueError, KeyError, TypeError):
            return web.json_response(
                {"error": 'expected JSON {"message": str, "session_id": str}'}, status=400
            )
        try:
            reply = await self.chat(session_id, str(text))
        except Exception as exc:  # a model that fails or stalls must not crash the agent's turn
            return web.json_response({"error": f"model call failed: {type(exc).__name__}: {exc}"}, status=502)
        return web.json_response({"reply": reply})

    async def _handle_health(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True, "model": self.config.model})

    async def _handle_stats(self, request: web.Request) -> web.Response:
        return web.json_response(vars(self.stats))
