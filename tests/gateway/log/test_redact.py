from __future__ import annotations

from pathlib import Path

from aiohttp import web

from adapters.http_server import serve
from gateway.log.redact import REDACTED, redact
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import BenchFactory

CANARY = "sk-canary-5f0e1d2c3b4a"


def test_secret_keys_and_tokens_are_redacted() -> None:
    settings = {
        "url": "http://127.0.0.1:1/bot123456:AAEhBOweik9ai2o4sdfksdfOBKzxcvbnm12/getMe",
        "headers": {"Authorization": f"Bearer {CANARY}", "X-Api-Key": CANARY, "X-Trace": "ok"},
        "api_key_env": "${ANTHROPIC_API_KEY}",
        "nested": [{"password": "hunter2"}],
        "note": f"Bearer {CANARY}",
    }
    out = redact(settings)
    assert CANARY not in repr(out) and "hunter2" not in repr(out) and "AAEhBOweik" not in repr(out)
    assert out["headers"]["X-Trace"] == "ok" and out["headers"]["X-Api-Key"] == REDACTED
    assert out["api_key_env"] == "${ANTHROPIC_API_KEY}"  # where the secret lives, not the secret


async def test_no_secret_reaches_any_file_a_run_writes(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    async def handler(request: web.Request) -> web.Response:
        assert request.headers["Authorization"] == f"Bearer {CANARY}"
        return web.json_response({"reply": "ok"})

    app = web.Application()
    app.router.add_post("/chat", handler)
    served = await serve(app)
    agent = {"adapter": "http", "url": f"{served.url}/chat", "headers": {"Authorization": f"Bearer {CANARY}"}}
    try:
        await run_spec(RunSpec("r1", make_benchmark(), agent), tmp_path / "rec")
    finally:
        await served.stop()
    written = [p for p in (tmp_path / "rec").rglob("*") if p.is_file()]
    assert len(written) >= 3
    for path in written:
        assert CANARY.encode() not in path.read_bytes(), path


async def test_no_secret_of_a_recorded_agent_reaches_any_file(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """An HTTP agent whose own LLM calls (with its API key) go through the recorder at a fixed
    port, and whose chat needs a bot-token URL and a cookie: none of it may be written."""
    import anthropic

    from adapters.reference.standin import standin_app
    from gateway.traffic.hub import free_port

    llm_key = "sk-ant-api03-CANARYKEY-abcdef"
    bot_token = "123456789:AAF-canarycanarycanarycanary12345"
    upstream = await serve(standin_app())
    port = free_port()
    model = anthropic.AsyncAnthropic(api_key=llm_key, base_url=f"http://127.0.0.1:{port}", max_retries=0)

    async def handler(request: web.Request) -> web.Response:
        body = await request.json()
        answer = await model.messages.create(
            model="m",
            max_tokens=20,
            messages=[{"role": "user", "content": body["message"]}],
            extra_headers={"Cookie": f"session={CANARY}"},
        )
        return web.json_response(
            {"reply": "".join(b.text for b in answer.content if b.type == "text") or "ok"}
        )

    app = web.Application()
    app.router.add_post(f"/bot{bot_token}/chat", handler)
    agent_server = await serve(app)
    agent = {
        "adapter": "http",
        "url": f"{agent_server.url}/bot{bot_token}/chat",
        "headers": {"Authorization": f"Bearer {CANARY}"},
        "llm": {"upstream": upstream.url, "port": port},
    }
    try:
        outcome = await run_spec(RunSpec("r1", make_benchmark(), agent), tmp_path / "rec")
    finally:
        await model.close()
        await agent_server.stop()
        await upstream.stop()
    assert outcome.reason == "completed"
    written = [p for p in (tmp_path / "rec").rglob("*") if p.is_file()]
    assert any(p.name == "events.msgpack" for p in written)
    for path in written:
        data = path.read_bytes()
        for secret in (CANARY, llm_key, bot_token):
            assert secret.encode() not in data, (path, secret)
    assert b"llm_exchange" in (tmp_path / "rec" / "r1" / "events.msgpack").read_bytes()


# unique markers, each shaped like the secret it stands for
OPENAI = "sk-canaryOPENAI1234567890abcd"
ANTHROPIC = "sk-ant-canaryANTHROPIC12345678"
GOOGLE = "AIzaSyCanaryGOOGLE0123456789abcdefghijk"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.canarySIGNATUREabc123"
CUSTOM = "custom-auth-canary-value-77"
QUERY = "query-canary-value-88"
BODY = "body-field-canary-99"


def test_secrets_in_every_place_of_a_recorded_call_reach_no_byte_of_the_log(tmp_path: Path) -> None:
    """Query keys, JSON body fields, custom auth headers, keys an upstream echoes in its error
    body, bearer JWTs — by name and by shape, in headers, URLs, bodies and blobs."""
    import json

    from gateway.log.events import Header
    from gateway.log.runlog import RunLogWriter
    from gateway.traffic.profile import load_profile
    from gateway.traffic.recorder import RawExchange, RunRecorder

    request = {
        "model": "m",
        "max_tokens": 10,
        "api_key": BODY,
        "messages": [{"role": "user", "content": f"my key is {OPENAI}, use it"}],
    }
    echo = {"error": {"message": f"Incorrect API key provided: {ANTHROPIC}; token {JWT}", "key": GOOGLE}}
    path = tmp_path / "events.msgpack"
    settings = {"url": f"http://x/v1?key={GOOGLE}", "note": OPENAI, "headers": {"X-Auth": CUSTOM}}
    with RunLogWriter.create(path, Header(run_id="r", agent=redact(settings))) as w:  # as describe_agent does
        recorder = RunRecorder(w.append, load_profile(None))
        recorder.record(
            RawExchange(
                "POST",
                f"/v1/chat/completions?key={QUERY}&api_key={QUERY}&access_token={QUERY}",
                {"X-Custom-Auth": CUSTOM, "X-Auth": CUSTOM, "Authorization": f"Bearer {JWT}"},
                json.dumps(request).encode(),
                401,
                {"content-type": "application/json"},
                json.dumps(echo).encode(),
            )
        )
    raw = path.read_bytes()
    for marker in (OPENAI, ANTHROPIC, GOOGLE, JWT, CUSTOM, QUERY, BODY):
        assert marker.encode() not in raw, marker
    assert b"max_tokens" in raw  # a field that merely contains 'token' is kept


def test_a_run_names_its_own_secret_fields_in_its_llm_settings(tmp_path: Path) -> None:
    """A header, body field and query parameter whose names say nothing of a secret are kept
    as they are — until the run's `llm.secret_names` names them; the header of the log too."""
    import json

    from gateway.log.events import Header
    from gateway.log.runlog import RunLogWriter
    from gateway.run.agents import describe_agent
    from gateway.traffic.profile import load_profile
    from gateway.traffic.recorder import RawExchange, RunRecorder

    marker = "tenant-canary-4242"
    names = ["X-Tenant-Sig", "tenant_blob", "tenant"]

    def record(path: Path, secret_names: list[str]) -> bytes:
        agent = {"adapter": "http", "url": "http://127.0.0.1:1/chat", "tenant": marker}
        agent["llm"] = {"upstream": "http://127.0.0.1:2", "secret_names": secret_names}
        with RunLogWriter.create(path, Header(run_id="r", agent=describe_agent(agent))) as w:
            recorder = RunRecorder(w.append, load_profile(None, {"secret_names": secret_names}))
            body = {"model": "m", "tenant_blob": marker, "messages": [{"role": "user", "content": "hi"}]}
            recorder.record(
                RawExchange(
                    "POST",
                    f"/v1/messages?tenant={marker}",
                    {"X-Tenant-Sig": marker},
                    json.dumps(body).encode(),
                    200,
                    {"content-type": "application/json"},
                    b'{"type": "message", "content": []}',
                )
            )
        return path.read_bytes()

    assert record(tmp_path / "plain.msgpack", []).count(marker.encode()) >= 4  # the control: kept
    assert marker.encode() not in record(tmp_path / "named.msgpack", names)
