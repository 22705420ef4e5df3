"""What the LLM persona's input costs: the billed share of uncached input under each
provider's caching rules, model calls per message to the agent, and the persona's cost per
run — for demo-en and marathon-en, and for an Anthropic model of each minimum cacheable length
(1,024, 2,048 and 4,096 tokens), side by side with the breakpoints we used to set.

Each run is real — reference agent, recorder, LLM persona through the official Anthropic SDK
— with the scripted fake persona model (`fakes/persona_model.py`) as the provider, which keeps
the exact request bodies and reports cache reads and writes by the documented rules
(`fakes/prompt_cache.py`: Anthropic's breakpoints, 20-block lookback, the model's own minimum;
OpenAI's automatic prefix cache in 128-token steps from 1,024). The persona plays the same
whatever the caching, so each benchmark runs once and its bodies are billed again for each
model with the breakpoints placed three ways: "system + tools" (every system part and the last
tool, none in the conversation: before issue 28), "fixed four" (the last tool, the stable
system part, the last two messages: issue 28 to issue 45) and "by minimum" (today:
`persona.llm.cache_breakpoints`). Prices: a Sonnet-class $3 / M input, cache writes ×1.25,
reads ×0.1; OpenAI cached input ×0.5. Targets (issue 28): Anthropic ≤ 0.15× on marathon-en,
≤ 1.3 calls a message. Usage: `.venv/bin/python bench/persona_prefix.py [--combine]`
(`--combine`: the fake model logs a grade and asks the next question in one response, as
capable models do).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapters.http_server import serve  # noqa: E402
from fakes.persona_model import FakePersonaModel  # noqa: E402
from fakes.prompt_cache import AnthropicCache, OpenAICache  # noqa: E402
from gateway.log.events import Asked, Said  # noqa: E402
from gateway.log.runlog import EVENTS_FILE, read_log  # noqa: E402
from gateway.run.config import RunSpec  # noqa: E402
from gateway.run.runner import run_spec  # noqa: E402
from persona.drivers.llm import PROFILE_HEADING  # noqa: E402
from persona.llm.cache_breakpoints import min_cacheable_tokens, place_breakpoints, with_breakpoint  # noqa: E402

PRICE_INPUT = 3.0 / 1_000_000
WRITE, READ, OPENAI_CACHED = 1.25, 0.1, 0.5


def billed_anthropic(bodies: list[dict[str, Any]]) -> tuple[float, int]:
    cache, billed, total = AnthropicCache(), 0.0, 0
    for body in bodies:
        uncached, read, written = cache.usage(body)
        billed += uncached + WRITE * written + READ * read
        total += uncached + written + read
    return billed / total, total


def billed_openai(bodies: list[dict[str, Any]]) -> float:
    cache, billed, total = OpenAICache(), 0.0, 0
    for body in bodies:
        system = {"role": "system", "content": body.get("system")}
        as_openai = {"tools": body.get("tools"), "messages": [system, *body["messages"]]}
        size, cached = cache.usage(as_openai)
        billed += size - cached + OPENAI_CACHED * cached
        total += size
    return billed / total


MODELS = (("claude-sonnet-4-5", 1024), ("claude-3-5-haiku", 2048), ("claude-opus-4-5", 4096))
MARK = {"type": "ephemeral"}


def _plain(body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], int]:
    """The body's tools, system parts and messages without breakpoints, and how many system
    parts are stable (all but the live profile)."""
    body = copy.deepcopy(body)
    for part in [*body.get("tools", []), *body.get("system", [])]:
        part.pop("cache_control", None)
    for message in body["messages"]:
        if isinstance(message.get("content"), list):
            for block in message["content"]:
                block.pop("cache_control", None)
    system = body.get("system", [])
    stable = len(system) - bool(system and system[-1]["text"].startswith(PROFILE_HEADING))
    return body.get("tools", []), system, body["messages"], stable


def placed(body: dict[str, Any], model: str, how: str) -> dict[str, Any]:
    """The body for `model` with its breakpoints placed `how`."""
    tools, system, messages, stable = _plain(body)
    if how == "by minimum":
        tools, system, messages = place_breakpoints(tools, system, messages, stable, min_cacheable_tokens(model))
    elif how == "fixed four":
        if tools:
            tools[-1]["cache_control"] = MARK
        if stable:
            system[stable - 1]["cache_control"] = MARK
        messages = [*messages[:-2], *(with_breakpoint(m) for m in messages[-2:])]
    else:  # system + tools
        for part in system:
            part["cache_control"] = MARK
        if tools:
            tools[-1]["cache_control"] = MARK
    return {**body, "model": model, "tools": tools, "system": system, "messages": messages}


async def measure(benchmark: str, combine: bool) -> list[str]:
    model = FakePersonaModel(combine=combine)
    served = await serve(model.app())
    try:
        with tempfile.TemporaryDirectory() as tmp:
            persona = {"driver": "anthropic:fake-persona", "base_url": served.url}
            spec = RunSpec("bench", ROOT / "benchmarks" / benchmark, {"adapter": "reference"}, persona)
            await run_spec(spec, Path(tmp))
            log = read_log(Path(tmp) / "bench" / EVENTS_FILE)
    finally:
        await served.stop()
    bodies = [b for b in model.requests if "You are grading" not in json.dumps(b.get("system"))]
    messages = sum(1 for e in log.events if isinstance(e, (Said, Asked)))
    _, tokens = billed_anthropic(bodies)
    rows = [
        f"| {benchmark} | {len(bodies)} | {tokens:,} | {len(bodies) / messages:.2f} | {billed_openai(bodies):.2f}× |",
    ]
    for name, minimum in MODELS:
        ratios = {how: billed_anthropic([placed(b, name, how) for b in bodies])[0] for how in HOW}
        cost = " → ".join(f"${tokens * PRICE_INPUT * ratios[how]:.2f}" for how in HOW)
        rows.append(
            f"| {benchmark} | {name} ({minimum:,}) | "
            + " | ".join(f"{ratios[how]:.3f}×" for how in HOW)
            + f" | {cost} |"
        )
    return rows


HOW = ("system + tools", "fixed four", "by minimum")


async def main() -> None:
    combine = "--combine" in sys.argv
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench")
    print(f"fake persona model {'combining a grade and the next question' if combine else 'one step a response'}")
    results = [await measure(benchmark, combine) for benchmark in ("demo-en", "marathon-en")]
    print("| benchmark | persona calls | input tokens | calls per message | OpenAI (automatic) |")
    print("|---|---|---|---|---|")
    for rows in results:
        print(rows[0])
    print()
    print("Anthropic, billed share of uncached input by where the breakpoints sit:")
    print("| benchmark | model (minimum) | " + " | ".join(HOW) + " | persona input cost |")
    print("|---|---|---|---|---|---|")
    for rows in results:
        print("\n".join(rows[1:]))


if __name__ == "__main__":
    asyncio.run(main())
