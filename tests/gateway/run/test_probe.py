"""`marathon probe` against fake agents: a healthy one passes every check; an agent whose
model bypasses the recorder, one that ignores new sessions and one that never answers each
fail the check that names them, with the fix."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from adapters.http_server import ServedApp, serve
from fakes.agents import http_agent, http_agent_settings, llm_agent
from fakes.llm_provider import openai_app
from gateway.run.probe import Check, probe
from gateway.traffic.hub import free_port
from tests.conftest import BenchFactory
from tests.marathon_cli import marathon


def by_name(checks: list[Check]) -> dict[str, Check]:
    return {c.name: c for c in checks}


@pytest.fixture
async def provider() -> AsyncIterator[ServedApp]:
    served = await serve(openai_app())
    yield served
    await served.stop()


async def test_a_healthy_agent_passes_every_check(tmp_path: Path) -> None:
    run_dir, checks = await probe({"adapter": "reference"}, tmp_path, out=lambda _: None)
    assert all(c.ok for c in checks), [c.line() for c in checks]
    named = by_name(checks)
    assert "memory_search" in named["memory tools are offered"].detail
    assert "anthropic-messages" in named["the agent's model calls reach the recorder"].detail
    assert "archived, restored and started again" in named["a checkpoint round trip (forks)"].detail
    assert (run_dir / "checkpoints" / "probe.tar.gz").is_file()
    assert (run_dir / "events.msgpack").is_file()
    from adapters.profiles.verification import verifications  # what the reference profile claims

    assert {c.name: c.line().split(" ", 1)[0] for c in checks} == verifications()["reference"].probe


async def test_a_model_that_bypasses_the_recorder_is_named_with_the_fix(
    provider: ServedApp, tmp_path: Path
) -> None:
    agent = await llm_agent(provider.url)  # talks to its provider directly
    try:
        settings = http_agent_settings(agent, llm={"upstream": provider.url})
        _, checks = await probe(settings, tmp_path, out=lambda _: None)
    finally:
        await agent.stop()
    check = by_name(checks)["the agent's model calls reach the recorder"]
    assert check.ok is False and check.fix.startswith("point the agent's LLM base URL at http://127.0.0.1:")


@pytest.mark.parametrize("keeps_sessions", [True, False])
async def test_an_agent_that_ignores_new_sessions_fails_that_check(
    provider: ServedApp, tmp_path: Path, keeps_sessions: bool
) -> None:
    port = free_port()
    agent = await llm_agent(f"http://127.0.0.1:{port}")  # through the recorder, on the port we give it
    body = {"message": "{message}", "session_id": "{session}"} if keeps_sessions else {"message": "{message}"}
    try:
        settings = http_agent_settings(agent, body=body, llm={"upstream": provider.url, "port": port})
        _, checks = await probe(settings, tmp_path, out=lambda _: None)
    finally:
        await agent.stop()
    session = by_name(checks)["a new session starts"]
    assert by_name(checks)["the agent's model calls reach the recorder"].ok is True
    assert session.ok is keeps_sessions, session.line()
    if not keeps_sessions:
        assert "given the first session's messages again" in session.detail and "session id" in session.fix
    else:  # no compaction command: only some benchmarks need one, so it is no failure of the probe
        compact = by_name(checks)["compact() is possible"]
        assert compact.ok is False and compact.line().startswith("– ") and "refused" in compact.detail
        fork = by_name(checks)["a checkpoint round trip (forks)"]  # an agent we don't start: its state is its own
        assert fork.ok is False and fork.line().startswith("– ") and "can't be checkpointed" in fork.detail
        assert not any(c.failed for c in checks), [c.line() for c in checks]


async def test_an_agent_that_never_answers_fails_the_reply_check(tmp_path: Path) -> None:
    async def hang(n: int, request: web.Request) -> web.StreamResponse | None:
        await asyncio.sleep(3)
        return None

    agent = await http_agent(hang)
    try:
        _, checks = await probe(http_agent_settings(agent, timeout=1), tmp_path, out=lambda _: None)
    finally:
        await agent.stop()
    reply = by_name(checks)["a reply arrives and settles"]
    assert reply.ok is False and "timeout" in reply.fix


def test_the_command_prints_the_checklist_and_exits_by_its_result(tmp_path: Path) -> None:
    result = marathon("probe", "--agent", "reference", "--recordings", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (
        "✓ a new session starts" in result.stdout and "✓ compact() is possible: by /compact" in result.stdout
    )
    assert marathon("probe", cwd=tmp_path).returncode == 2


def test_a_profile_tried_with_overrides_from_the_command_line(tmp_path: Path) -> None:
    from gateway.log.runlog import read_log

    result = marathon(
        "probe",
        "--agent",
        "reference",
        "--set",
        "surface=websocket",
        "--recordings",
        str(tmp_path),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (log,) = tmp_path.glob("probe-*/events.msgpack")
    assert read_log(log).header.agent["surface"] == "websocket"
    bad = marathon("probe", "--agent", "reference", "--set", "nonsense", cwd=tmp_path)
    assert bad.returncode == 2 and "expected KEY=VALUE" in bad.stderr


async def test_auto_ports_are_free_ports_filled_in_everywhere_the_profile_names_them(tmp_path: Path) -> None:
    from gateway.run.agents import assign_ports

    settings = assign_ports(
        {
            "adapter": "http",
            "url": "http://127.0.0.1:${PORT}/chat",
            "port": "auto",
            "llm": {"upstream": "https://api.example", "port": "auto"},
            "process": {
                "command": ["agent", "--port", "${PORT}"],
                "env": {"LLM_BASE_URL": "http://127.0.0.1:${LLM_PORT}"},
            },
        }
    )
    port, llm_port = settings["port"], settings["llm"]["port"]
    assert isinstance(port, int) and isinstance(llm_port, int) and port != llm_port
    assert settings["url"] == f"http://127.0.0.1:{port}/chat"
    assert settings["process"]["command"] == ["agent", "--port", str(port)]
    assert settings["process"]["env"]["LLM_BASE_URL"] == f"http://127.0.0.1:{llm_port}"
    # a fixed port fills the same placeholders: a fake agent reached through ${PORT}
    agent = await http_agent(lambda n, request: asyncio.sleep(0))  # type: ignore[arg-type,return-value]
    try:
        fixed = {
            **http_agent_settings(agent),
            "url": "http://127.0.0.1:${PORT}/chat",
            "port": int(agent.url.rsplit(":", 1)[1]),
        }
        _, checks = await probe(fixed, tmp_path, out=lambda _: None)
    finally:
        await agent.stop()
    assert by_name(checks)["a reply arrives and settles"].ok is True


async def test_an_agent_that_is_not_installed_says_so_and_nothing_is_judged_from_its_silence(
    tmp_path: Path,
) -> None:
    settings = {
        "adapter": "http",
        "url": "http://127.0.0.1:${PORT}/chat",
        "port": "auto",
        "llm": {"upstream": "https://api.example", "port": "auto"},
        "process": {"command": ["no-such-agent-xyz", "serve"]},
    }
    _, checks = await probe(settings, tmp_path, out=lambda _: None)
    named = by_name(checks)
    assert named["the agent starts"].ok is False
    assert "`no-such-agent-xyz` is not installed here" in named["the agent starts"].fix
    assert "MARATHON_NO_SUCH_AGENT_XYZ_BIN" in named["the agent starts"].fix
    assert named["the agent's model calls reach the recorder"].ok is None  # it never answered


def test_a_run_s_probe_says_when_its_benchmark_does_not_load_and_no_table_counts_it(tmp_path: Path) -> None:
    """A probe passes only when the run can start: a benchmark path that doesn't resolve is a ✗
    now, not a failure of `marathon run` later; and the probe's recording is no broken run to
    the cross-run tables."""
    from gateway.report.matrix import write_matrix_report

    config = tmp_path / "c.jsonc"
    config.write_text(
        '{ recordings: "rec", runs: [{ id: "r", benchmark: "benchmarks/demo-en", agent: { adapter: "reference" } }] }'
    )
    result = marathon("probe", str(config), "--only", "r", cwd=tmp_path)
    assert result.returncode == 1
    assert (
        "✗ the run's benchmark loads:" in result.stdout
        and f"relative to {tmp_path.resolve()}" in result.stdout
    )
    assert "✓ a reply arrives and settles" in result.stdout  # the agent itself was probed all the same
    assert write_matrix_report(tmp_path / "rec").problems == []


async def test_a_bot_that_drops_waiting_updates_at_start_answers_after_the_checkpoint_round_trip(
    tmp_path: Path,
) -> None:
    """Found checking the profiles' claims (issue 46 item 4): Hermes' Telegram bot drops the
    updates waiting when it starts, and after a checkpoint's restart the next message was sent
    before it polled again — dropped, and the round trip timed out. A restarted bot is ready
    when it polls again, as at its first start."""
    import sys

    bot = Path(__file__).parents[2] / "adapters" / "bots" / "ptb_memory_bot.py"
    settings = {
        "adapter": "telegram",
        "quiet": 0.3,
        "timeout": 20,
        "process": {
            "command": [sys.executable, str(bot)],
            "env": {
                "TELEGRAM_API_ROOT": "${TELEGRAM_API_ROOT}",
                "TELEGRAM_BOT_TOKEN": "${TELEGRAM_BOT_TOKEN}",
                "DROP_PENDING": "1",
            },
            "ready_timeout": 60,
        },
    }
    _, checks = await probe(settings, tmp_path, out=lambda _: None)
    fork = by_name(checks)["a checkpoint round trip (forks)"]
    assert fork.ok is True, fork.line()


def test_the_probe_of_a_run_that_teaches_until_a_checkpoint_counts_the_benchmark_s_questions(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    """Issue 58: "tiny: 0 questions" for a 3-question benchmark whose run teaches until its exam
    checkpoint (isolated exams fork from it): the whole benchmark is counted, and what the run plays."""
    bench = make_benchmark()
    config = tmp_path / "c.jsonc"
    config.write_text(
        f'{{ recordings: "rec", runs: [{{ id: "m", benchmark: "{bench}", agent: {{ adapter: "reference" }},'
        ' checkpoint_at: "exam", exam: ["isolated"] }] }'
    )
    result = marathon("probe", str(config), "--only", "m", cwd=tmp_path)
    assert "✓ the run's benchmark loads: tiny: 3 questions, " in result.stdout, result.stdout
    assert "this run plays 0 of the questions" in result.stdout and "its forks ask the questions" in result.stdout
