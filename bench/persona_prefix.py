"""Prefix stability of the LLM persona's requests: the share of each request's input that is
identical to the previous request (its cacheable prefix), over a whole demo-en run.

The run is real — reference agent, recorder, LLM persona through the official Anthropic SDK —
with the scripted fake persona model (`fakes/persona_model.py`) as the provider, which keeps the exact
request bodies. Input is serialised in the order the provider caches it (tools, system,
messages). Pairs across a persona compaction are counted apart. Target: ≥ 90 % between
compactions. Usage: `.venv/bin/python bench/persona_prefix.py [max_tokens trim_to_tokens]`.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.http_server import serve
from fakes.persona_model import FakePersonaModel
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec

DEMO = Path(__file__).resolve().parents[1] / "benchmarks" / "demo-en"


def serialised(body: dict[str, object]) -> str:
    return json.dumps([body.get("tools"), body.get("system"), body.get("messages")], ensure_ascii=False)


async def main() -> None:
    limits = [int(a) for a in sys.argv[1:3]] if len(sys.argv) > 2 else [6000, 2500]
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench")
    model = FakePersonaModel()
    served = await serve(model.app())
    with tempfile.TemporaryDirectory() as tmp:
        persona = {
            "driver": "anthropic:fake-persona",
            "base_url": served.url,
            "compaction": {"max_tokens": limits[0], "trim_to_tokens": limits[1]},
        }
        await run_spec(RunSpec("bench", DEMO, {"adapter": "reference"}, persona), Path(tmp))
    await served.stop()
    within, across = [], []
    for before, after in zip(model.requests, model.requests[1:], strict=False):
        a, b = serialised(before), serialised(after)
        shared = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            shared += 1
        share = shared / len(b)
        (within if before["messages"][0] == after["messages"][0] else across).append(share)
    print(
        f"persona requests: {len(model.requests)}; compaction limits max {limits[0]} / trim to {limits[1]} tokens (estimated)"
    )
    print(
        f"between compactions ({len(within)} pairs): mean {statistics.mean(within):.1%}, "
        f"median {statistics.median(within):.1%}, min {min(within):.1%}  (target ≥ 90%)"
    )
    if across:
        print(f"across a compaction ({len(across)} pairs): mean {statistics.mean(across):.1%}")


if __name__ == "__main__":
    asyncio.run(main())
