"""Recorder storage: bytes recorded vs raw request bytes for a growing conversation.

A synthetic agent conversation of N calls (default 500) that grows by one turn per call — the
shape of a marathon — is fed through the recorder exactly as the proxy would (request and
response bodies), into a real run log. Raw = the sum of the request bodies; recorded = the
log file. Target: at least 20× smaller. Usage: `.venv/bin/python bench/recorder_storage.py [N]`.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.log.events import Header
from gateway.log.runlog import RunLogWriter
from gateway.traffic.profile import load_profile
from gateway.traffic.recorder import RawExchange, RunRecorder

WORDS = (
    "the rent rose to euros from march my cat pixel eats salmon flavoured food every day and night".split()
)
TOOLS = [
    {"name": f"tool_{i}", "description": "does a thing " * 20, "input_schema": {"type": "object"}}
    for i in range(12)
]
SYSTEM = "You are a personal assistant. " * 60


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    rng = random.Random(5)
    raw_bytes = 0
    messages: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.msgpack"
        with RunLogWriter.create(path, Header(run_id="bench")) as writer:
            recorder = RunRecorder(writer.append, load_profile(None))
            for i in range(n):
                messages.append({"role": "user", "content": " ".join(rng.choice(WORDS) for _ in range(40))})
                body = json.dumps(
                    {"model": "m", "max_tokens": 512, "system": SYSTEM, "tools": TOOLS, "messages": messages}
                ).encode()
                answer = " ".join(rng.choice(WORDS) for _ in range(30))
                response = json.dumps(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "text", "text": answer}],
                        "stop_reason": "end_turn",
                        "usage": {"input_tokens": len(body) // 4, "output_tokens": 40},
                    }
                ).encode()
                recorder.record(
                    RawExchange(
                        "POST",
                        "/v1/messages",
                        {"content-type": "application/json"},
                        body,
                        200,
                        {"content-type": "application/json"},
                        response,
                        float(i),
                        float(i),
                        float(i),
                    )
                )
                raw_bytes += len(body)
                messages.append({"role": "assistant", "content": answer})
        recorded = path.stat().st_size
    print(f"calls: {n}, growing one turn per call")
    print(f"raw request bytes:  {raw_bytes:>14,}")
    print(f"recorded log bytes: {recorded:>14,}  (requests and responses, content-addressed)")
    print(f"ratio: {raw_bytes / recorded:.1f}x smaller than raw (target ≥ 20x)")


if __name__ == "__main__":
    main()
