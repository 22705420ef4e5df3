"""The stand-in model spoken to by the official `anthropic` SDK, streamed and not."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import anthropic
import pytest

from adapters.http_server import serve
from adapters.reference.agent import TOOLS
from adapters.reference.standin import standin_app


@pytest.fixture
async def client() -> AsyncIterator[anthropic.AsyncAnthropic]:
    served = await serve(standin_app())
    sdk = anthropic.AsyncAnthropic(api_key="test-key", base_url=served.url, max_retries=0)
    yield sdk
    await sdk.close()
    await served.stop()


async def test_a_statement_becomes_memory_writes(client: anthropic.AsyncAnthropic) -> None:
    message = await client.messages.create(
        model="standin-1",
        max_tokens=100,
        tools=TOOLS,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": "About me:\n- I live in Porto\n- My cat is Miso"}],
    )
    assert message.stop_reason == "tool_use"
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert calls == [
        ("memory_write", {"text": "I live in Porto"}),
        ("memory_write", {"text": "My cat is Miso"}),
    ]
    assert message.usage.input_tokens > 0 and message.usage.cache_read_input_tokens == 0


async def test_a_question_is_searched_then_answered_from_the_result_streamed(
    client: anthropic.AsyncAnthropic,
) -> None:
    question = {"role": "user", "content": "Where do I live?"}
    async with client.messages.stream(
        model="standin-1", max_tokens=100, tools=TOOLS, messages=[question]
    ) as stream:  # type: ignore[arg-type]
        first = await stream.get_final_message()
    search = next(b for b in first.content if b.type == "tool_use")
    assert search.name == "memory_search" and search.input == {"query": "Where do I live?"}
    followup = [
        question,
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": search.id, "content": "- I live in Porto"}],
        },
    ]
    deltas = []
    async with client.messages.stream(
        model="standin-1", max_tokens=100, tools=TOOLS, messages=followup
    ) as stream:  # type: ignore[arg-type]
        async for text in stream.text_stream:
            deltas.append(text)
        final = await stream.get_final_message()
    assert final.stop_reason == "end_turn"
    assert "".join(deltas) == final.content[0].text == "From my notes: I live in Porto."  # type: ignore[union-attr]
    assert len(deltas) > 1  # really streamed in pieces


async def test_nothing_found_says_never_told(client: anthropic.AsyncAnthropic) -> None:
    msgs = [
        {"role": "user", "content": "What is my dog called?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "memory_search", "input": {"query": "dog"}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "no matching notes"}],
        },
    ]
    message = await client.messages.create(model="m", max_tokens=50, tools=TOOLS, messages=msgs)  # type: ignore[arg-type]
    assert "haven't told me" in message.content[0].text  # type: ignore[union-attr]


async def test_a_summary_request_gets_a_summary(client: anthropic.AsyncAnthropic) -> None:
    message = await client.messages.create(
        model="m",
        max_tokens=50,
        system="You are summarizing a conversation.",
        messages=[{"role": "user", "content": "I live in Porto"}],
    )
    assert message.content[0].text.startswith("The user talked about")  # type: ignore[union-attr]


async def test_a_summary_request_that_names_its_sections_gets_them(client: anthropic.AsyncAnthropic) -> None:
    """OpenClaw 2026.9.6's summariser asks for five sections and audits the answer (each heading,
    the conversation's identifiers kept literally, the latest ask): the stand-in's summary — still
    the same lossy gist — comes in that shape, so `/compact` is applied, not "Compaction failed"."""
    conversation = (
        '<conversation>\n[User sender={"id":"1"}]: My cat is called Miso\n\n'
        '[Assistant tool calls]: write(path="memory/fact-41b96dee52.md", content="My cat is called Miso")\n\n'
        '[User sender={"id":"1"}]: Please keep notes in /srv/notes/cats.md\n</conversation>\n\n'
        "Produce a compact, factual summary with these exact section headings:\n## Decisions\n## Open TODOs\n"
        "## Constraints/Rules\n## Pending user asks\n## Exact identifiers\n"
    )
    message = await client.messages.create(
        model="m",
        max_tokens=500,
        system="You are a context summarization assistant.",
        messages=[{"role": "user", "content": conversation}],
    )
    text = message.content[0].text  # type: ignore[union-attr]
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## Decisions", "## Open TODOs", "## Constraints/Rules", "## Pending user asks", "## Exact identifiers"]
    assert "The user talked about: " in text and "- Please keep notes in /srv/notes/cats.md" in text
    identifiers = text.split("## Exact identifiers\n", 1)[1].splitlines()
    assert "- memory/fact-41b96dee52.md" in identifiers and "- /srv/notes/cats.md" in identifiers


async def test_missing_key_is_refused_like_a_real_provider() -> None:
    served = await serve(standin_app())
    try:
        async with aiohttp.ClientSession() as http:
            body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
            async with http.post(f"{served.url}/v1/messages", json=body) as r:
                assert r.status == 401
                assert (await r.json())["error"]["type"] == "authentication_error"
    finally:
        await served.stop()


# Letta 0.11.7's tools as it sends them (memgpt_v2_agent; descriptions trimmed): every tool has
# `thinking`, all but send_message `request_heartbeat`
def _letta_tool(name: str, *props: str) -> dict[str, object]:
    fields = ("thinking", *props, *(() if name == "send_message" else ("request_heartbeat",)))
    return {
        "name": name,
        "description": name,
        "input_schema": {
            "type": "object",
            "properties": {f: {"type": "string"} for f in fields},
            "required": list(fields),
        },
    }


LETTA_TOOLS = [
    _letta_tool("send_message", "message"),
    _letta_tool("memory_insert", "label", "new_str", "insert_line"),
    _letta_tool("memory_replace", "label", "old_str", "new_str"),
    _letta_tool("conversation_search", "query"),
]
LETTA_SYSTEM = (
    "<base_instructions>You are Letta, a memory-augmented agent.</base_instructions>\n<memory_blocks>\n"
    "<human>\n<description>\nThe human block: key details about the person.\n</description>\n<value>\n"
    "# NOTE: Line numbers shown below are to help during editing.\nLine 1: My cat is called Miso\n"
    "</value>\n</human>\n</memory_blocks>"
)
LOGIN = '{\n  "type": "login",\n  "last_login": "Never (first login)",\n  "time": "2026-12-01 01:24:06 AM UTC+0000"\n}'
BOOTUP = [
    {"role": "user", "content": "User initializing bootup sequence."},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Bootup sequence complete."},
            {"type": "tool_use", "id": "t-boot", "name": "send_message", "input": {"message": "Hi"}},
        ],
    },
]


async def _letta_step(
    client: anthropic.AsyncAnthropic, messages: list[dict[str, object]], system: str = LETTA_SYSTEM
) -> tuple[str, dict[str, object]]:
    message = await client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=4096,
        system=system,
        tools=LETTA_TOOLS,  # type: ignore[arg-type]
        tool_choice={"type": "any", "disable_parallel_tool_use": True},
        messages=messages,  # type: ignore[arg-type]
    )
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    assert message.stop_reason == "tool_use" and len(calls) == 1  # Letta's model must call exactly one tool
    name, args = calls[0]
    return name, dict(args)  # type: ignore[arg-type]


async def test_letta_is_played_by_its_rules_statement_heartbeat_question(
    client: anthropic.AsyncAnthropic,
) -> None:
    """A statement (after Letta's login event) → one memory-block insert with a heartbeat; the
    heartbeat step → send_message; a question → send_message answered from the memory block."""
    first = [
        *BOOTUP,
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t-boot", "content": '{"status": "OK"}'},
                {"type": "text", "text": LOGIN},
                {"type": "text", "text": "My sister Anna lives in Tbilisi"},
            ],
        },
    ]
    name, args = await _letta_step(client, first)
    assert name == "memory_insert" and args["new_str"] == "My sister Anna lives in Tbilisi"
    assert args["label"] == "human" and args["request_heartbeat"] is True and args["thinking"]

    heartbeat = [
        *first,
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t-1", "name": "memory_insert", "input": args}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t-1",
                    "content": '{"status": "OK"}, {"type": "heartbeat", "reason": "[automated] returning control"}',
                }
            ],
        },
    ]
    name, args = await _letta_step(client, heartbeat)
    assert name == "send_message" and args["message"] and "request_heartbeat" not in args

    name, args = await _letta_step(client, [{"role": "user", "content": "What is my cat called?"}])
    assert name == "send_message" and "Miso" in str(args["message"])


def _fixture(name: str) -> dict[str, object]:
    import json
    from pathlib import Path

    path = Path(__file__).parents[2] / "gateway" / "traffic" / "fixtures" / name
    return dict(json.loads(path.read_text()))


async def test_the_agents_own_wrappers_and_background_prompts_are_no_facts(
    client: anthropic.AsyncAnthropic,
) -> None:
    """An offline rehearsal of a Telegram profile measures the wiring: OpenClaw's
    "Conversation info: ⟦openclaw:ctx⟧ {json}" block is no fact of the user's, and the agents'
    own background prompts (OpenClaw's heartbeat, Hermes' review) get a do-nothing answer."""
    tools = [{"name": n, "input_schema": {"type": "object"}} for n in ("read", "write")]
    turn = (
        "[Tue 2026-12-01 09:03 UTC] Conversation info: ⟦openclaw:ctx⟧\n```json\n"
        '{"sender":{"id":"424242","name":"Alex"}}\n```\n\nAbout me:\n- My cat is Miso'
    )
    message = await client.messages.create(
        model="standin-1", max_tokens=100, tools=tools,  # type: ignore[arg-type]
        messages=[{"role": "user", "content": turn}],
    )  # fmt: skip
    written = [b.input["content"] for b in message.content if b.type == "tool_use"]  # type: ignore[index]
    assert written == ["My cat is Miso\n"]
    for name, answer in (
        ("openclaw_2026_9_6_heartbeat_request.json", "NO_REPLY"),
        ("hermes_background_review_request.json", "Nothing to save."),
    ):
        shape = _fixture(name)
        reply = await client.messages.create(
            model="standin-1", max_tokens=100, system=str(shape["system"]), tools=tools,  # type: ignore[arg-type]
            messages=shape["messages"],  # type: ignore[arg-type]
        )  # fmt: skip
        assert [b.text for b in reply.content if b.type == "text"] == [answer]


def test_the_stand_in_stores_what_the_user_said_not_the_agent_s_own_prompts() -> None:
    """Issue 58: on Hermes 0.19.0 the stand-in stored its combined review prompt ("Review the
    conversation above and update two things: **Memory** … **Skills** …", 24 lines) and its
    first-message onboarding note as the user's facts — 24 junk `memory add` calls a review filled
    Hermes' 2,200-character memory with, and 10 real writes were refused."""
    from adapters.reference.standin import decide

    tools = [{"name": "memory", "input_schema": {"type": "object"}}]
    first = (
        "Some things to remember, please — Me:\n- My name is Ada and I am 36\n- I live in Porto\n\n"
        "[System note: This is the user's very first message ever. After a one-sentence introduction, OFFER to "
        "build a short profile. If and ONLY IF they accept:\n  1. Ask for whatever they're comfortable sharing.\n"
        "  4. Save each confirmed, durable fact with the memory tool using target=\"user\".\n"
        "If they decline at any point, stop immediately and continue normally.]"
    )
    blocks, _ = decide({"tools": tools, "messages": [{"role": "user", "content": first}]})
    assert [b["input"]["content"] for b in blocks] == ["My name is Ada and I am 36", "I live in Porto"]
    review = (
        "Review the conversation above and update two things:\n\n**Memory**: who the user is. Save facts.\n"
        "**Skills**: how to do this class of task.\n1. UPDATE A CURRENTLY-LOADED SKILL.\n"
        "If genuinely nothing stands out, say 'Nothing to save.' and stop."
    )
    talk = [{"role": "user", "content": "My cat is called Miso"}, {"role": "assistant", "content": "Noted."}]
    blocks, _ = decide({"tools": tools, "messages": [*talk, {"role": "user", "content": review}]})
    assert blocks == [{"type": "text", "text": "Nothing to save."}]
    # OpenClaw after a compaction: its replayed summary is a user message before the user's own
    replayed = (
        "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
        "## Decisions\nThe user talked about: My cat is called Miso\n\n## Open TODOs\n- none\n</summary>"
    )
    tail = [{"role": "user", "content": replayed}, {"role": "user", "content": "I work as a nurse"}]
    blocks, _ = decide({"tools": tools, "messages": tail})
    assert [b["input"]["content"] for b in blocks] == ["I work as a nurse"]
