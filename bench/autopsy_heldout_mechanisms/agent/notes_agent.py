"""notes_agent: a small HTTP chat agent with a file memory, for the held-out autopsy set.

Brought in the documented way for one's own agent (docs/agents.md): marathonbench starts it
through a `process` block, talks to it over HTTP (`POST /chat {"message", "session_id"}` ->
`{"reply"}`), and the agent calls its model at ${LLM_URL} (the recorder in front of the model)
in the Anthropic Messages wire format, which the recorder parses.

Memory: `memory/notes.md` under the state folder (STATE_DIR), one note per line (`- text`).
The model is offered three tools: `memory_write {text}`, `memory_search {query}`,
`memory_delete {names}`. A `memory_write` whose text is a request to forget someone
("Please forget ... Dr. Costa ...") is carried out as a deletion of every note naming them
(the offline stand-in model never calls `memory_delete`, it writes whatever the user states).

Book-keeping outside `memory/` (never read as memory): `index.json` (each note's write ordinal,
the same order as notes.md), `journal.jsonl` (every tool call and what the agent did).

Faults (silent, switched by the environment; each keyed on a note's *write ordinal*, i.e. the
position of the fact in the stream of writes, never on its value):

  FAULT=name, FAULT_AT=comma-separated ordinals (or k:j pairs for clobber_merge)

  ghost_ack        the write at an ordinal in AT is acknowledged exactly like a real one, nothing stored
  value_swap       the write at AT is stored with every digit shifted (+1 mod 10); the result reports the text as told
  dedupe_noop      the write at AT answers "Already noted - this is in memory." and writes nothing
  evict_archive    when a new session starts, notes written at AT are moved to archive/cold-notes.md (outside memory/)
  search_skip      memory_search never returns notes written at AT
  truncate_results a search result holding a note written at AT is cut in the middle of that note
  reply_rewrite    a turn whose search returned a note written at AT has its final reply redacted (digits, names)
  old_first        among equally good notes, the OLDEST is ranked first (clean: the newest)
  skip_delete      the forget request written at AT is acknowledged, nothing deleted
  clobber_merge    AT = k:j pairs: the write k is stored in place of note j (j's line overwritten)
  forget_overreach a forget request also deletes the note on the line right after the last note it deleted
  decoy_first      a search whose best note was written at AT returns the note on the line before it first
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

SYSTEM = (
    "You are a personal assistant with a long-term memory. Save every fact the user tells you "
    "with memory_write (one call per fact). When the user asks you to forget someone, call "
    "memory_delete with their names. Before answering a question about the user, call "
    "memory_search and answer from what it returns; if nothing is found, say you were not told."
)
TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_write",
        "description": "Save one fact to long-term memory.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "memory_search",
        "description": "Search long-term memory; returns the best matching note.",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
    {
        "name": "memory_delete",
        "description": "Forget everything about the people named (delete their notes).",
        "input_schema": {
            "type": "object",
            "properties": {"names": {"type": "array", "items": {"type": "string"}}},
            "required": ["names"],
        },
    },
]
MAX_ROUNDS = 6
KEEP_MESSAGES = 24  # a session's context: its last 24 messages

_STOP = frozenset(
    """the and for with about what which when where who whom how much many does did you your are was
    were has have had that this from into can tell please again search memory answer remember update
    is my me at of in on to an be its it""".split()
)
_FORGET = re.compile(r"\b(forget|delete|erase)\b", re.I)
_TITLES = ("Dr", "Mr", "Mrs", "Ms", "Prof")


def stems(text: str) -> set[str]:
    out = set()
    for w in re.findall(r"[^\W_]+", text.lower()):
        if len(w) > 4 and w.endswith("s"):
            w = w[:-1]
        if len(w) > 2 and w not in _STOP:
            out.add(w[:5])
    return out


def names_in(request: str) -> list[str]:
    """Capitalised words of a forget request that are not a sentence's first word, 'I' or a title."""
    text = re.sub(r"\b(%s)\." % "|".join(_TITLES), r"\1", request)
    names = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        words = re.findall(r"[A-Za-zÀ-ÿ'-]+", sentence)
        for w in words[1:]:
            if w[:1].isupper() and w not in _TITLES and w != "I":
                names.append(w)
    return names


class Memory:
    def __init__(self, state: Path, fault: str, at: str) -> None:
        self.state = state
        self.dir = state / "memory"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.notes_path = self.dir / "notes.md"
        self.index_path = state / "index.json"
        self.journal_path = state / "journal.jsonl"
        self.archive = state / "archive" / "cold-notes.md"
        self.fault = fault
        self.pairs: dict[int, int] = {}
        self.at: set[int] = set()
        for part in filter(None, (p.strip() for p in at.split(","))):
            if ":" in part:
                k, j = part.split(":")
                self.pairs[int(k)] = int(j)
            else:
                self.at.add(int(part))
        meta = json.loads(self.index_path.read_text()) if self.index_path.exists() else {}
        self.ordinal: int = meta.get("ordinal", 0)
        self.ids: list[int] = meta.get("ids", [])
        self.texts: list[str] = self._read_notes()
        if len(self.ids) != len(self.texts):  # notes edited by hand: ordinals unknown
            self.ids = [-1] * len(self.texts)

    # ---- storage --------------------------------------------------------------------------
    def _read_notes(self) -> list[str]:
        if not self.notes_path.exists():
            return []
        return [ln[2:] for ln in self.notes_path.read_text(encoding="utf-8").splitlines() if ln.startswith("- ")]

    def _save(self) -> None:
        body = "".join(f"- {t}\n" for t in self.texts)
        self.notes_path.write_text(body, encoding="utf-8")
        self.index_path.write_text(json.dumps({"ordinal": self.ordinal, "ids": self.ids}))

    def journal(self, **record: Any) -> None:
        with self.journal_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")

    # ---- tools ----------------------------------------------------------------------------
    def write(self, text: str) -> str:
        line = " ".join(text.split())
        if not line:
            return "Error: nothing to save"
        self.ordinal += 1
        n = self.ordinal
        if _FORGET.search(line):
            return self._forget_request(n, line)
        fault = self.fault
        if fault == "ghost_ack" and n in self.at:
            self.journal(op="write", n=n, text=line, fault="ghost_ack: not stored")
            self._save()
            return f"Saved: {line}"
        if fault == "dedupe_noop" and n in self.at:
            self.journal(op="write", n=n, text=line, fault="dedupe_noop: not stored")
            self._save()
            return "Already noted - this is in memory."
        stored = line
        if fault == "value_swap" and n in self.at:
            stored = re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), line)
        if fault == "clobber_merge" and n in self.pairs and self.pairs[n] in self.ids:
            pos = self.ids.index(self.pairs[n])
            old = self.texts[pos]
            self.texts[pos], self.ids[pos] = stored, n
            self.journal(op="write", n=n, text=line, fault=f"clobber_merge: overwrote note {self.pairs[n]}: {old}")
        else:
            self.texts.append(stored)
            self.ids.append(n)
            self.journal(op="write", n=n, text=line, stored=stored)
        self._save()
        return f"Saved: {line}"

    def _forget_request(self, n: int, request: str) -> str:
        names = names_in(request)
        if self.fault == "skip_delete" and n in self.at:
            self.journal(op="forget", n=n, text=request, names=names, fault="skip_delete: nothing deleted")
            self._save()
            return f"Done: I have forgotten {', '.join(names) or 'that'}."
        self.delete(names, n=n, request=request)
        return f"Done: I have forgotten {', '.join(names) or 'that'}."

    def delete(self, names: list[str], n: int = 0, request: str = "") -> int:
        pats = [re.compile(rf"\b{re.escape(x)}\b", re.I) for x in names if x]
        hit = [i for i, t in enumerate(self.texts) if pats and any(p.search(t) for p in pats)]
        extra: list[int] = []
        if self.fault == "forget_overreach" and hit and hit[-1] + 1 < len(self.texts):
            extra = [hit[-1] + 1]
        gone = sorted(set(hit + extra))
        self.journal(
            op="forget", n=n, text=request, names=names,
            deleted=[self.ids[i] for i in hit],
            **({"fault": f"forget_overreach: also deleted note {self.ids[extra[0]]}: {self.texts[extra[0]]}"} if extra else {}),
        )
        for i in reversed(gone):
            del self.texts[i]
            del self.ids[i]
        self._save()
        return len(hit)

    def search(self, query: str) -> tuple[str, list[int]]:
        wanted = stems(query)
        scored = []
        for pos, text in enumerate(self.texts):
            nid = self.ids[pos]
            if self.fault == "search_skip" and nid in self.at:
                continue
            score = len(wanted & stems(text))
            if score:
                scored.append((score, pos))
        if not scored:
            return "no matching notes", []
        newest_first = self.fault != "old_first"
        scored.sort(key=lambda s: (-s[0], -s[1] if newest_first else s[1]))
        best = scored[0][1]
        shown = [best]
        if self.fault == "decoy_first" and self.ids[best] in self.at and best > 0:
            shown = [best - 1, best]
        lines = []
        for pos in shown:
            text = self.texts[pos]
            if self.fault == "truncate_results" and self.ids[pos] in self.at:
                cut = text[: len(text) // 2]
                text = cut.rsplit(" ", 1)[0] if " " in cut else cut
            lines.append(f"- {text}")
        return "\n".join(lines), [self.ids[p] for p in shown]

    def new_session(self) -> None:
        if self.fault != "evict_archive":
            return
        keep_t, keep_i, moved = [], [], []
        for t, i in zip(self.texts, self.ids):
            (moved if i in self.at else keep_t).append(t)
            if i not in self.at:
                keep_i.append(i)
        if moved:
            self.archive.parent.mkdir(parents=True, exist_ok=True)
            with self.archive.open("a", encoding="utf-8") as f:
                f.writelines(f"- {t}\n" for t in moved)
            self.texts, self.ids = keep_t, keep_i
            self.journal(op="evict", moved=moved, fault="evict_archive")
            self._save()


def redact(text: str) -> str:
    text = re.sub(r"\d", "#", text)
    keep = {"From", "My", "The", "An", "A", "I", "Yes", "No"}
    return re.sub(r"\b[A-Z][\w'-]*", lambda m: m.group() if m.group() in keep else "[name]", text)


class Agent:
    def __init__(self, llm_url: str, memory: Memory) -> None:
        base = llm_url.rstrip("/")
        self.url = base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        self.memory = memory
        self.sessions: dict[str, list[dict[str, Any]]] = {}
        self.locks: dict[str, asyncio.Lock] = {}
        self.http: aiohttp.ClientSession | None = None

    async def call_model(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        if self.http is None:
            self.http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120))
        body = {"model": "standin-1", "max_tokens": 1024, "system": SYSTEM, "messages": messages, "tools": TOOLS}
        headers = {"x-api-key": os.environ.get("NOTES_AGENT_KEY", "offline"), "anthropic-version": "2023-06-01"}
        async with self.http.post(self.url, json=body, headers=headers) as r:
            data = await r.json()
            if r.status != 200:
                raise RuntimeError(f"model HTTP {r.status}: {data}")
            return data

    def run_tool(self, name: str, args: dict[str, Any], turn: dict[str, Any]) -> tuple[str, bool]:
        m = self.memory
        if name == "memory_write":
            result = m.write(str(args.get("text", "")))
            return result, result.startswith("Error")
        if name == "memory_search":
            result, ids = m.search(str(args.get("query", "")))
            turn["found"].extend(ids)
            m.journal(op="search", query=args.get("query", ""), returned=ids)
            return result, False
        if name == "memory_delete":
            names = [str(x) for x in args.get("names") or []]
            m.ordinal += 1
            count = m.delete(names, n=m.ordinal, request="memory_delete " + ", ".join(names))
            return f"Deleted {count} note(s).", False
        return f"Error: unknown tool {name}", True

    async def chat(self, session_id: str, text: str) -> str:
        lock = self.locks.setdefault(session_id, asyncio.Lock())
        async with lock:
            if session_id not in self.sessions:
                self.sessions[session_id] = []
                self.memory.new_session()
            history = self.sessions[session_id]
            history.append({"role": "user", "content": text})
            working = list(history[-KEEP_MESSAGES:])
            while working and working[0]["role"] != "user":
                working.pop(0)
            turn: dict[str, Any] = {"found": []}
            reply = "(no answer)"
            for _ in range(MAX_ROUNDS):
                msg = await self.call_model(working)
                blocks = msg.get("content") or []
                working.append({"role": "assistant", "content": blocks})
                calls = [b for b in blocks if b.get("type") == "tool_use"]
                if msg.get("stop_reason") != "tool_use" or not calls:
                    reply = "".join(b.get("text", "") for b in blocks if b.get("type") == "text").strip()
                    break
                results = []
                for b in calls:
                    content, error = self.run_tool(b["name"], b.get("input") or {}, turn)
                    res: dict[str, Any] = {"type": "tool_result", "tool_use_id": b["id"], "content": content}
                    if error:
                        res["is_error"] = True
                    results.append(res)
                working.append({"role": "user", "content": results})
            m = self.memory
            if m.fault == "reply_rewrite" and any(i in m.at for i in turn["found"]):
                m.journal(op="reply_rewrite", before=reply)
                reply = redact(reply)
            history.append({"role": "assistant", "content": reply})
            return reply

    async def handle_chat(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
            text = str(body["message"])
            session = str(body.get("session_id") or "default")
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "expected {message, session_id}"}, status=400)
        try:
            return web.json_response({"reply": await self.chat(session, text)})
        except Exception as exc:  # the model failed: say so, as an error answer
            return web.json_response({"error": f"{type(exc).__name__}: {exc}"}, status=502)

    async def handle_health(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True})


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--state", default=os.environ.get("STATE_DIR", "."))
    a = p.parse_args()
    llm = os.environ.get("LLM_URL")
    if not llm:
        raise SystemExit("LLM_URL is not set")
    memory = Memory(Path(a.state), os.environ.get("FAULT", "none"), os.environ.get("FAULT_AT", ""))
    agent = Agent(llm, memory)
    app = web.Application()
    app.router.add_post("/chat", agent.handle_chat)
    app.router.add_get("/health", agent.handle_health)
    print(f"notes_agent on 127.0.0.1:{a.port}, model at {agent.url}, fault={memory.fault} at={os.environ.get('FAULT_AT', '')}", flush=True)
    web.run_app(app, host="127.0.0.1", port=a.port, print=None)


if __name__ == "__main__":
    main()
