"""What the LLM persona's input costs: the billed share of uncached input under each
provider's caching rules, model calls per message to the agent, and the persona's cost per
run — for demo-en and marathon-en, side by side with the breakpoints we used to set.

Each run is real — reference agent, recorder, LLM persona through the official Anthropic SDK
— with the scripted fake persona model (`fakes/persona_model.py`) as the provider, which keeps
the exact request bodies and reports cache reads and writes by the documented rules
(`fakes/prompt_cache.py`: Anthropic's breakpoints, 20-block lookback, 1,024-token minimum;
OpenAI's automatic prefix cache in 128-token steps from 1,024). "Before" replays the same
bodies with the breakpoints of before (every system part and the last tool, none in the
conversation). Prices: a Sonnet-class $3 / M input, cache writes ×1.25, reads ×0.1; OpenAI
cached input ×0.5. Targets (issue 28): Anthropic ≤ 0.15× on marathon-en, ≤ 1.3 calls a message.
Usage: `.venv/bin/python bench/persona_prefix.py [--combine]` (`--combine`: the fake model
logs a grade and asks the next question in one response, as capable models do).
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


def as_before(body: dict[str, Any]) -> dict[str, Any]:
    """The body with the breakpoints of before: every system part and the last tool."""
    body = copy.deepcopy(body)
    for message in body["messages"]:
        if isinstance(message.get("content"), list):
            for block in message["content"]:
                block.pop("cache_control", None)
    for block in body.get("system", []):
        block["cache_control"] = {"type": "ephemeral"}
    return body


async def measure(benchmark: str, combine: bool) -> str:
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
    now, tokens = billed_anthropic(bodies)
    before, _ = billed_anthropic([as_before(b) for b in bodies])
    return (
        f"| {benchmark} | {len(bodies)} | {tokens:,} | {before:.2f}× | {now:.2f}× | {billed_openai(bodies):.2f}× "
        f"| {len(bodies) / messages:.2f} | ${tokens * PRICE_INPUT * before:.2f} → ${tokens * PRICE_INPUT * now:.2f} |"
    )


async def main() -> None:
    combine = "--combine" in sys.argv
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench")
    print(f"fake persona model {'combining a grade and the next question' if combine else 'one step a response'}")
    print("| benchmark | persona calls | input tokens | Anthropic before | Anthropic now | OpenAI (automatic) "
          "| calls per message | persona input cost |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for benchmark in ("demo-en", "marathon-en"):
        print(await measure(benchmark, combine))


if __name__ == "__main__":
    asyncio.run(main())
