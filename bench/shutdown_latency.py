"""Seconds from a run's last answer to the run's end, per surface: a Telegram bot written with
python-telegram-bot (a process on our emulated Bot API with 30 s long polls, stopped while it
long-polls), the
reference agent's in-process Telegram bot, and the reference agent over WebSocket and HTTP.
Target: ≤ 2 s each (issue 14, item 8). Usage: `.venv/bin/python bench/shutdown_latency.py [repeats]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.log.events import Replied
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "demo-en"
PTB_BOT = ROOT / "tests" / "adapters" / "bots" / "ptb_memory_bot.py"

SURFACES: dict[str, dict[str, object]] = {
    "telegram (python-telegram-bot process)": {
        "adapter": "telegram",
        "quiet": 0.3,
        "timeout": 30,
        "process": {
            "command": [sys.executable, str(PTB_BOT)],
            "env": {
                "TELEGRAM_API_ROOT": "${TELEGRAM_API_ROOT}",
                "TELEGRAM_BOT_TOKEN": "${TELEGRAM_BOT_TOKEN}",
                "POLL_TIMEOUT": "30",  # long polls as real bots make them (aiogram, grammY: 10-30 s)
            },
            "ready_timeout": 60,
        },
    },
    "telegram (reference bot)": {"adapter": "reference", "surface": "telegram"},
    "websocket (reference agent)": {"adapter": "reference", "surface": "websocket"},
    "http (reference agent)": {"adapter": "reference"},
}


async def one(name: str, agent: dict[str, object], folder: Path) -> float:
    run_id = "".join(c if c.isalnum() else "-" for c in name)
    await run_spec(RunSpec(run_id, BENCH, agent), folder, fresh=True)
    ended = time.time()
    log = read_log(folder / run_id / EVENTS_FILE)
    last_answer = max(e.ts for e in log.events if isinstance(e, Replied))
    return ended - last_answer


async def main(repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, agent in SURFACES.items():
            figures = [await one(name, agent, Path(tmp)) for _ in range(repeats)]
            print(
                f"{name:<40} last answer → run ended: median {statistics.median(figures):.2f} s "
                f"(max {max(figures):.2f} s over {repeats})"
            )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 3))
