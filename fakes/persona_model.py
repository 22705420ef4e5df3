"""A scripted fake model that plays the persona, served as a real provider on 127.0.0.1:
Anthropic Messages (JSON or SSE, with `tool_use` and usage incl. cache fields) and OpenAI chat
completions (with `tool_calls`, JSON or streamed).

It reads only what a real model would — the request's messages — finds the current phase's
text, and works through it with the persona tools: get untold facts, tell a batch, mark it
told; say `>` lines; apply `✎` updates with `facts_edit` and tell them; ask each `❓` verbatim,
nudge once on "never told" (through `ask_again`), grade; then `next_phase`. It replays its own plan against the
conversation to find the next step, so it is stateless like a model. Every request is kept in
`requests` for assertions.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from fakes.prompt_cache import AnthropicCache, OpenAICache
from persona.grading.exact import contains_expected
from persona.grading.never_told import says_never_told

Step = (
    tuple[str, ...]
    | tuple[str, str, dict[str, Any]]
    | tuple[str, str, dict[str, Any], list[str]]
    | tuple[str, str, list[tuple[str, dict[str, Any]]]]  # ("beside", text, tool calls): a mistake mode's
)


@dataclass
class Item:
    kind: str  # phase | said | reply | call | result
    text: str = ""
    name: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    id: str = ""


def items_of(messages: list[dict[str, Any]], openai: bool) -> list[Item]:
    out: list[Item] = []
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if openai:
            if role == "assistant":  # tool calls run before the text beside them is sent
                for c in m.get("tool_calls") or []:
                    out.append(
                        Item(
                            "call",
                            name=c["function"]["name"],
                            args=json.loads(c["function"]["arguments"] or "{}"),
                            id=c["id"],
                        )
                    )
                if content:
                    out.append(Item("said", str(content)))
            elif role == "tool":
                out.append(Item("result", str(content), id=m["tool_call_id"]))
                if re.match(r"^Phase \d+ of \d+:", str(content)):
                    out.append(Item("phase", str(content)))
            elif role == "user":
                out.append(_user_text(str(content)))
            continue
        blocks: list[dict[str, Any]] = (
            [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        )
        if role == "assistant":  # tool calls run before the text beside them is sent
            blocks = sorted(blocks, key=lambda b: b.get("type") != "tool_use")
        for b in blocks:
            if b.get("type") == "text":
                out.append(Item("said", b["text"]) if role == "assistant" else _user_text(b["text"]))
            elif b.get("type") == "tool_use":
                out.append(Item("call", name=b["name"], args=b.get("input") or {}, id=b["id"]))
            elif b.get("type") == "tool_result":
                raw = b.get("content")
                text = raw if isinstance(raw, str) else json.dumps(raw)
                out.append(
                    Item(
                        "phase" if "Phase " in text and " of " in text.split("\n", 1)[0] else "result",
                        text,
                        id=b["tool_use_id"],
                    )
                )
                if out[-1].kind == "phase":
                    out.append(Item("result", text, id=b["tool_use_id"]))
    return out


# what the driver writes when a message beside tool calls was not sent (persona/drivers/llm.py)
NOT_SENT = "(Your message beside these tool calls was not sent"


def _user_text(text: str) -> Item:
    if re.search(r"^Phase \d+ of \d+:", text, re.M):
        return Item("phase", text)
    if text.startswith(NOT_SENT):
        return Item("note", text)
    return Item("reply", text.removeprefix("The assistant replied:\n"))


def _question_text(line: str) -> str:
    """`❓ q4 [tag] What …? Correct answer: …` → `What …?`."""
    _, rest = line[1:].strip().split(" ", 1)
    question = re.split(r"\s*(?:Correct answer|Правильный ответ)\s*:", rest, maxsplit=1)[0]
    return re.sub(r"\[\w+\]\s*", "", question).strip()


def plan(
    phase: str, combine: bool = False, skip_files: bool = False, skip_updates: bool = False
) -> Generator[Step, str, None]:
    """The persona's steps through `phase`. `combine`: the untold facts are listed once per
    file (not again after each batch), so marking a batch told and telling the next can be
    one response. `skip_files`: the facts files are never told; `skip_updates`: a `✎` update is
    recorded with `facts_edit` but never told (mistake modes)."""
    required = re.search(r"tell every fact of: (.+)\.$", phase, re.M)
    for file in required.group(1).split(", ") if required and not skip_files else []:
        facts: list[list[str]] = []
        while True:
            if not (combine and facts):
                untold = yield ("call", "facts_get_untold", {"file": file})
                facts = [line.split(" ", 1) for line in untold.splitlines() if re.match(r"^\d+\.\d+ ", line)]
            if not facts:
                break
            batch, facts = facts[:3], facts[3:]
            told = {"file": file, "ids": [fid for fid, _ in batch]}  # for the mistake modes only
            yield ("say", "Some things about me: " + " ".join(text.rstrip(".") + "." for _, text in batch), told)
            # the fourth element is for the mistake modes only: the facts still untold
            yield ("call", "facts_mark_told", {"file": file, "ids": [fid for fid, _ in batch]}, [f for f, _ in facts])
            if combine and not facts:
                break
    asked = [ln.strip() for ln in phase.splitlines() if ln.strip().startswith("❓")]
    for line in phase.splitlines():
        line = line.strip()
        if line.startswith(">"):
            yield ("say", line[1:].strip())
        elif line.startswith("✎"):
            _, file, fid, text = line.split(" ", 3)
            yield ("call", "facts_edit", {"file": file, "id": fid, "text": text})
            if text.strip() != "—" and not skip_updates:
                yield ("say", f"By the way, an update: {text}")
        elif line.startswith("❓"):
            qid, rest = line[1:].strip().split(" ", 1)
            question, expected = re.split(r"\s*(?:Correct answer|Правильный ответ)\s*:\s*", rest, maxsplit=1)
            question = re.sub(r"\[\w+\]\s*", "", question).strip()
            abstain = "[abstain]" in rest
            later = asked[asked.index(line) + 1 :] if line in asked else []
            following = _question_text(later[0]) if later else ""  # for the mistake modes only
            reply = yield ("say", question, {"question_id": qid, "expected": expected, "next": following})
            if says_never_told(reply) and not abstain:  # its own decision, told through `ask_again`
                message = "Please search your memory and answer again."
                reply = yield ("ask", "ask_again", {"question_id": qid, "message": message})
            ok = (
                says_never_told(reply)
                if abstain
                else contains_expected(re.sub(r"\[\w+\]\s*", "", expected), reply)
            )
            yield (
                "call",
                "log_evaluation",
                {"question_id": qid, "score": 10 if ok else 0, "comment": "checked"},
            )
    while (yield ("call", "next_phase", {})).startswith("Error"):  # refused: a model that skipped a file asks again
        pass


def next_step(
    messages: list[dict[str, Any]],
    openai: bool = False,
    combine: bool = False,
    skip_files: bool = False,
    skip_updates: bool = False,
) -> Step:
    try:
        return _next_step(messages, openai, combine, skip_files, skip_updates)
    except (
        StopIteration,
        RuntimeError,
    ) as exc:  # the plan ran out: show where, for the test's failure message
        last = items_of(messages, openai)[-1]
        raise AssertionError(f"fake persona has no next step after {last.kind}: {last.text[:300]!r}") from exc


def _next_step(
    messages: list[dict[str, Any]],
    openai: bool = False,
    combine: bool = False,
    skip_files: bool = False,
    skip_updates: bool = False,
) -> Step:
    items = items_of(messages, openai)
    start = max(i for i, it in enumerate(items) if it.kind == "phase")
    steps = plan(items[start].text, combine, skip_files, skip_updates)
    step = next(steps)
    rest = items[start + 1 :]
    results = {it.id: it.text for it in rest if it.kind == "result"}
    i = 0
    while i < len(rest):
        it = rest[i]
        if step[0] == "call" and it.kind == "call" and it.name == step[1]:
            if it.id not in results:
                break
            step = steps.send(results[it.id])
        elif (step[0] == "ask" and it.kind == "call" and it.name == step[1]) or (
            step[0] == "say" and it.kind == "said"
        ):  # the agent's reply to what was said (`ask`: said through a tool)
            reply = next((r.text for r in rest[i + 1 :] if r.kind == "reply"), None)
            if reply is None:
                break
            step = steps.send(reply)
        i += 1
    return step


CHATTER = (
    "My week was busy with work and long meetings.",
    "Yesterday I cooked pasta for some friends.",
    "The weather in town is lovely these days.",
    "I watched a film about the ocean last night.",
    "My neighbour's dog barked all morning.",
    "I am thinking of learning to play the guitar.",
)


# How the fake judge reads never-told: plain words, unlike the offline detector's rules, so a
# test can tell whose reading decided ("a mystery to me" is a claim only the fake reads).
NEVER_TOLD_WORDS = re.compile(r"never told|a mystery to me|no record|не говорил|не помню", re.I)


@dataclass
class FakePersonaModel:
    requests: list[dict[str, Any]] = field(default_factory=list)
    garble_judge: bool = False
    garble_never_told: bool = False  # only the never-told readings garbled: verdicts still given
    # a model that can't play, as real small models were seen to: "loop" sends one paragraph
    # again and again, "chatty" talks on and never calls a tool, "tools_only" calls
    # `next_phase` again and again and never writes a message
    mistake: str = ""
    # the model's window: a request estimated past it is refused as each provider refuses it
    context_tokens: int = 0
    says_window: bool = True  # in its model list, as vLLM does (llama.cpp's server does not)
    # a grade and the next question, or a batch marked told and the next batch, in one
    # response (tool call and text), as capable models do
    combine: bool = False
    # what each provider would have cached, by its documented rules (`fakes.prompt_cache`)
    anthropic_cache: AnthropicCache = field(default_factory=AnthropicCache)
    openai_cache: OpenAICache = field(default_factory=OpenAICache)

    def _combined(self, step: Step, messages: list[dict[str, Any]], openai: bool) -> str:
        """The text to send beside `step` when `combine` is on: the next message, when the
        plan's step after this grade (the next question) or this batch marked told (the next
        batch) is one, known without the tool's result."""
        if not (self.combine and step[0] == "call" and step[1] in ("log_evaluation", "facts_mark_told")):
            return ""
        args = json.dumps(step[2])
        then: list[dict[str, Any]]
        if openai:
            call = {"id": "sim", "type": "function", "function": {"name": step[1], "arguments": args}}
            then = [{"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "sim", "content": "Done."}]  # fmt: skip
        else:
            use: dict[str, Any] = {"type": "tool_use", "id": "sim", "name": step[1], "input": step[2]}
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": "sim", "content": "Done."}
            then = [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
        following = next_step([*messages, *then], openai=openai, combine=True)
        return str(following[1]) if following[0] == "say" else ""

    def _mistaken(self) -> Step | None:
        if self.mistake == "loop":
            return ("say", "Hello! I would like to tell you about my life. My name is Maya and I live in Lisbon.")
        if self.mistake == "chatty":  # a different message each time, none of them progress
            return ("say", CHATTER[len(self.requests) % len(CHATTER)])
        if self.mistake == "tools_only":  # never writes a message: ends the phase it never played
            return ("call", "next_phase", {})
        return None

    def _spoiled(self, step: Step, messages: list[dict[str, Any]], openai: bool) -> Step:
        """`step` with the mistake a weak model makes: `leak` (the answer in the question),
        `lenient` (every answer graded 10), `misnumber` (a number told wrong), `wrong_language`
        (facts told under a Russian preamble in an English story), `reasoning` (its thinking in
        the message), `beside_failing` (a batch of facts written beside its `facts_mark_told`
        and a failing tool call, the first time it is told — the message is never sent)."""
        facts = step[0] == "say" and step[1].startswith("Some things about me:")
        asks = step[0] == "say" and len(step) == 3 and isinstance(step[2], dict) and "question_id" in step[2]
        first_time = facts and not any(it.kind == "said" and it.text == step[1] for it in items_of(messages, openai))
        if self.mistake == "beside_failing" and first_time and isinstance(step[2], dict):
            bogus = ("facts_read", {"file": "diary"})  # no such file: the tool fails
            return ("beside", step[1], [("facts_mark_told", step[2]), bogus])
        if self.mistake == "leak" and asks and isinstance(step[2], dict):
            return ("say", f"{step[1]} Is it {step[2]['expected']}, by any chance", step[2])
        if self.mistake == "lenient" and step[0] == "call" and step[1] == "log_evaluation":
            return ("call", "log_evaluation", {**step[2], "score": 10})  # type: ignore[dict-item]
        if self.mistake == "misnumber" and facts:
            return ("say", re.sub(r"\d+", lambda m: str(int(m.group()) + 1), step[1], count=1))
        if self.mistake == "mark_untold" and step[0] == "call" and step[1] == "facts_mark_told" and len(step) == 4:
            untold = step[3]
            if isinstance(untold, list) and untold and isinstance(step[2], dict):
                return ("call", "facts_mark_told", {**step[2], "ids": [*step[2]["ids"], untold[0]]})
        if self.mistake == "two_questions" and asks and isinstance(step[2], dict) and step[2].get("next"):
            return ("say", f"{step[1]} And {step[2]['next']}", step[2])
        if self.mistake == "reasoning" and step[0] == "say":
            return ("say", f"<thinking>The phase wants facts told; I will say them now.</thinking>{step[1]}", *step[2:])
        if self.mistake == "wrong_language" and facts:
            preamble = "Привет! Сегодня я хочу рассказать тебе очень многое о себе, о семье и о работе, слушай внимательно."
            return ("say", f"{preamble} {preamble} {step[1]}")
        return step

    def _planned(self, messages: list[dict[str, Any]], openai: bool) -> Step:
        """The plan's next step, with the mistake modes that leave steps out (`skip_files`:
        the facts are never told; `untold_update`: an update recorded but never told)."""
        skip_files, skip_updates = self.mistake == "skip_files", self.mistake == "untold_update"
        return next_step(messages, openai, self.combine, skip_files, skip_updates)

    def _parts(
        self, step: Step, messages: list[dict[str, Any]], openai: bool
    ) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
        """A step as a response's text and tool calls."""
        if step[0] in ("say", "text"):
            return str(step[1]), []
        if step[0] == "beside":
            return str(step[1]), list(step[2])  # type: ignore[arg-type]
        assert isinstance(step[2], dict)
        return self._combined(step, messages, openai), [(str(step[1]), step[2])]

    def _too_long(self, body: dict[str, Any], openai: bool) -> web.Response | None:
        size = len(json.dumps(body)) // 4
        if not self.context_tokens or size <= self.context_tokens:
            return None
        if openai:  # llama.cpp's and vLLM's OpenAI-compatible servers
            message = (
                f"This model's maximum context length is {self.context_tokens} tokens. "
                f"However, you requested {size} tokens. Please reduce the length of the messages."
            )
            error = {"code": 400, "message": message, "type": "invalid_request_error"}
            return web.json_response({"error": error}, status=400)
        message = f"prompt is too long: {size} tokens > {self.context_tokens} maximum"
        return web.json_response(
            {"type": "error", "error": {"type": "invalid_request_error", "message": message}}, status=400
        )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/messages", self.anthropic)
        app.router.add_post("/v1/chat/completions", self.openai)
        app.router.add_get("/v1/models", self.models)  # OpenAI-compatible servers' model list
        app.router.add_get("/v1/models/{model}", self.model)  # Anthropic's model description
        return app

    async def models(self, request: web.Request) -> web.Response:
        described: dict[str, Any] = {"id": "fake-persona", "object": "model", "owned_by": "fake"}
        if self.context_tokens and self.says_window:
            described["max_model_len"] = self.context_tokens  # as vLLM says its window
        return web.json_response({"object": "list", "data": [described]})

    async def model(self, request: web.Request) -> web.Response:
        name = request.match_info["model"]
        if name != "fake-persona":
            error = {"type": "not_found_error", "message": f"model: {name}"}
            return web.json_response({"type": "error", "error": error}, status=404)
        return web.json_response(
            {"id": name, "type": "model", "display_name": name, "created_at": "2025-01-01T00:00:00Z"}
        )

    async def anthropic(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        if (refused := self._too_long(body, openai=False)) is not None:
            return refused
        step = (
            self._judge(body)
            or self._mistaken()
            or self._spoiled(self._planned(body["messages"], openai=False), body["messages"], False)
        )
        text, calls = self._parts(step, body["messages"], openai=False)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        content += [
            {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:16]}", "name": name, "input": args}
            for name, args in calls
        ]
        uncached, cached, written = self.anthropic_cache.usage(body)
        message = {
            "id": f"msg_{uuid.uuid4().hex[:16]}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use" if calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": uncached,
                "output_tokens": 20,
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": written,
            },
        }
        if not body.get("stream"):
            return web.json_response(message)
        from adapters.reference.standin import stream_events

        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        async for name, data in stream_events(message):
            await response.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        await response.write_eof()
        return response

    async def openai(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        if (refused := self._too_long(body, openai=True)) is not None:
            return refused
        conversation = [m for m in body["messages"] if m["role"] != "system"]
        step = (
            self._judge(body)
            or self._mistaken()
            or self._spoiled(self._planned(conversation, openai=True), conversation, True)
        )
        text, calls = self._parts(step, conversation, openai=True)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for name, args in calls
            ]
        size, cached = self.openai_cache.usage(body)
        usage = {
            "prompt_tokens": size,
            "completion_tokens": 20,
            "total_tokens": size + 20,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": "tool_calls" if calls else "stop",
        }
        return web.json_response(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 1,
                "model": body["model"],
                "choices": [choice],
                "usage": usage,
            }
        )

    def _judge(self, body: dict[str, Any]) -> Step | None:
        """A judge request (its system prompt says so) gets a verdict from the same rules."""
        system = json.dumps(
            body.get("system") or [m for m in body.get("messages", []) if m.get("role") == "system"]
        )
        if "You are reading one reply" in system:  # rubrics/never_told.md
            if self.garble_judge or self.garble_never_told:
                return ("text", "Hard to say, honestly.")
            reply = re.search(r"Reply: (.*?)(?:\\n|\")", json.dumps(body["messages"][-1]["content"]))
            claim = bool(reply and NEVER_TOLD_WORDS.search(reply.group(1)))
            return ("text", json.dumps({"never_told": claim, "reason": "says so" if claim else "gives a value"}))
        if "You are grading" not in system:
            return None
        if self.garble_judge:
            return ("text", "I think it is probably fine, maybe 7ish?")
        user = json.dumps(body["messages"][-1]["content"])
        expected = re.search(r"Expected answer: (.*?)\\n", user)
        answers = re.findall(r"Answer \d: (.*?)(?:\\n|\")", user)
        ok = bool(expected and answers and contains_expected(expected.group(1), answers[-1]))
        return (
            "text",
            json.dumps({"score": 10 if ok else 0, "reason": "matches" if ok else "does not match"}),
        )
