"""The run's own secrets never reach its folder: not in a retried error's message (it used to
bypass the redactor), not as a URL's userinfo password, not where the agent or its upstream
echoes a key back — in the log, report.md or report.html."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp import web

from adapters.http_server import serve
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import BenchFactory
from tests.marathon_cli import marathon

TOKEN = "gw-Token-for-this-run-0123456789"  # no shape a pattern knows: only its value gives it away
PASSWORD = "hunter2-password-of-bob"


async def test_a_run_s_secrets_are_redacted_wherever_they_appear(
    make_benchmark: BenchFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        heard = request.headers.get("X-Agent-Token", "")
        if calls == 1:  # a failure whose body quotes what it was sent: retried, logged
            return web.Response(status=500, text=f"bad gateway for token {heard} at {request.url}")
        body = await request.json()
        return web.json_response({"reply": f"Noted ({heard}): {body['message'][:40]}"})

    app = web.Application()
    app.router.add_post("/chat", handler)
    served = await serve(app)
    host = served.url.removeprefix("http://")
    agent = {
        "adapter": "http",
        "url": f"http://bob:{PASSWORD}@{host}/chat",
        "headers": {"X-Agent-Token": "${AGENT_TOKEN}"},
        "retries": 2,
        "backoff": 0.01,
    }
    try:
        await run_spec(RunSpec("s", make_benchmark(), agent), tmp_path)
    finally:
        await served.stop()
    assert calls > 1
    assert marathon("report", str(tmp_path), cwd=tmp_path).returncode in (0, 1)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    written = {str(p.relative_to(tmp_path)): p.read_bytes() for p in files}
    assert {"s/events.msgpack", "s/report.md", "report.html"} <= set(written)
    for name, data in written.items():
        assert TOKEN.encode() not in data, f"{name} holds the agent's token"
        assert PASSWORD.encode() not in data, f"{name} holds the URL's password"
