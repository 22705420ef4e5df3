"""What agents and benchmarks say is shown, never obeyed: every class of terminal control fed
through every printing command (`check`, `run`'s why line, `inspect`, report.md) comes out as
visible text — no ESC, C1, NUL, BEL, CR or bidi control reaches the terminal or the file, and no
field poses as a line of its own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from aiohttp import web

from adapters.http_server import serve
from tests.conftest import TINY, BenchFactory
from tests.marathon_cli import marathon

CONTROLS = {
    "CSI clear screen": "\x1b[2J",
    "OSC window title": "\x1b]0;pwned\x07",
    "OSC 52 clipboard": "\x1b]52;c;ZXZpbA==\x07",
    "OSC 8 link": "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "C1 CSI": "\x9b2J",
    "NUL": "a\x00b",
    "DEL": "\x7f",
    "carriage return": "\rcompleted: mean 10.00/10",
    "bidi override": "\u202egnp.exe",
}
HOSTILE = "".join(CONTROLS.values())
# a benchmark's line can't hold a line break (CR splits it): its names and titles get the rest
IN_A_LINE = "".join(v for k, v in CONTROLS.items() if k != "carriage return")
RAW = ("\x1b", "\x9b", "\x00", "\x07", "\x7f", "\r", "\u202e")


def assert_inert(text: str, where: str) -> None:
    for name, raw in zip(CONTROLS, RAW, strict=False):
        assert raw not in text, f"{where}: a raw {raw!r} ({name}) got through"
    assert "\ncompleted: mean 10.00/10" not in text, f"{where}: a field posed as a line of its own"


def test_check_prints_a_hostile_benchmark_s_name_and_titles_inert(make_benchmark: BenchFactory) -> None:
    name = json.dumps(f"tiny {IN_A_LINE}")
    config = TINY["benchmark.json"].replace('name: "tiny"', f"name: {name}")
    ch2 = TINY["ch2.md"].replace("## Exam", f"## Exam {IN_A_LINE}")
    bench = make_benchmark(benchmark__json=config, ch2__md=ch2)
    result = marathon("check", str(bench), cwd=bench)
    assert result.returncode == 0, result.stderr
    assert "\\x1b" in result.stdout  # shown, as text
    assert_inert(result.stdout + result.stderr, "check")


async def test_an_agent_s_controls_reach_no_terminal_and_no_report(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    async def handler(request: web.Request) -> web.Response:
        body = await request.json()
        if "cat" in body["message"]:  # an error whose body is the attack: the run's why line
            return web.Response(status=500, text=f"oops {HOSTILE}\ncompleted: mean 10.00/10")
        return web.json_response({"reply": f"Noted {HOSTILE}"})  # answers: inspect and the report

    app = web.Application()
    app.router.add_post("/chat", handler)
    served = await serve(app)
    config = tmp_path / "config.jsonc"
    agent = {"adapter": "http", "url": f"{served.url}/chat", "retries": 0}
    config.write_text(json.dumps({"runs": [{"id": "h", "benchmark": str(make_benchmark()), "agent": agent}]}))
    try:
        ran = await asyncio.to_thread(marathon, "run", str(config), cwd=tmp_path)
    finally:
        await served.stop()
    assert "why:" in ran.stdout and "\\x1b" in ran.stdout
    assert_inert(ran.stdout + ran.stderr, "run")
    inspected = await asyncio.to_thread(marathon, "inspect", str(tmp_path / "recordings" / "h"), cwd=tmp_path)
    assert inspected.returncode == 0 and "Noted" in inspected.stdout
    assert_inert(inspected.stdout, "inspect")
    for report in (tmp_path / "recordings" / "h" / "report.md", tmp_path / "recordings" / "report.md"):
        assert_inert(report.read_text(encoding="utf-8"), str(report))
