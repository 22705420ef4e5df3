"""The agent's own model, seen through the recorder: down, or bypassed. Neither may turn into a
confident number — an agent whose model failed did not forget, and a recorder that saw no
call observed nothing (not zero calls).

The agent is `fakes.agents.llm_agent` (it answers over HTTP 200 with the failure as its text,
as Hermes does); the user's side is the real `marathon run` command.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from adapters.http_server import serve
from fakes.agents import http_agent_settings, llm_agent
from fakes.llm_provider import openai_app
from gateway.log.events import (
    ErrorEvent,
    Evaluation,
    FactTold,
    LLMExchange,
    Replied,
    RunEnded,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.recordings import load_run
from gateway.traffic.hub import free_port
from tests.conftest import BenchFactory
from tests.marathon_cli import marathon


def write_config(tmp_path: Path, bench: Path, agent: dict[str, object]) -> Path:
    config = tmp_path / "config.jsonc"
    config.write_text(
        repr({"recordings": "out", "runs": [{"id": "r", "benchmark": str(bench), "agent": agent}]})
        .replace("'", '"')
        .replace("True", "true")
        .replace("False", "false")
    )
    return config


async def test_the_agents_llm_down_is_not_scored_and_the_run_pauses_until_it_is_back(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    recorder_port, provider_port = free_port(), free_port()  # nothing listens at the provider yet
    agent = await llm_agent(f"http://127.0.0.1:{recorder_port}")
    llm = {"upstream": f"http://127.0.0.1:{provider_port}", "port": recorder_port, "profile": "hermes"}
    config = write_config(tmp_path, make_benchmark(), http_agent_settings(agent, llm=llm))
    try:
        down = await asyncio.to_thread(marathon, "run", str(config), cwd=tmp_path)
        log = read_log(tmp_path / "out" / "r" / EVENTS_FILE)
        assert down.returncode == 1, down.stdout + down.stderr
        assert "[r] agent_llm_failed" in down.stdout
        assert "why: agent-llm failed_answer: the agent's answer came out of a failed model call" in down.stdout
        assert "run the same command again to resume" in down.stdout
        # the agent did answer — over HTTP 200, with its model's failure as text ...
        assert any("API call failed after 3 retries" in e.text for e in log.events if isinstance(e, Replied))
        # ... and none of it counts: nothing told, nothing graded (no 0 for a model that was down)
        assert not [e for e in log.events if isinstance(e, (FactTold, Evaluation))]
        llm_errors = [e for e in log.events if isinstance(e, ErrorEvent) and e.source == "agent-llm"]
        assert {e.kind for e in llm_errors} == {"no_connection", "failed_answer"}
        assert sum(e.kind == "no_connection" for e in llm_errors) == 9  # 3 sends × the agent's 3 tries
        assert [e.reason for e in log.events if isinstance(e, RunEnded)] == ["agent_llm_failed"]
        report = (tmp_path / "out" / "r" / "report.md").read_text()
        assert "- agent-llm failed_answer:" in report and "- agent-llm no_connection:" in report

        provider = await serve(openai_app(), port=provider_port)  # the model is back
        try:
            back = await asyncio.to_thread(marathon, "run", str(config), cwd=tmp_path)
        finally:
            await provider.stop()
    finally:
        await agent.stop()
    assert back.returncode == 0, back.stdout + back.stderr
    assert "[r] completed" in back.stdout and "resumed" in back.stdout
    log = read_log(tmp_path / "out" / "r" / EVENTS_FILE)
    assert sorted(e.question_id for e in log.events if isinstance(e, Evaluation)) == ["q1", "q2", "q3"]
    # the report names the model the recorder saw the agent call, not a configured name
    assert "— r: tiny @ fake-model" in (tmp_path / "out" / "r" / "report.md").read_text()
    # issue 58: re-derived from its exchanges (OpenAI chat, failed calls, a resume), the same readings
    from gateway.report.recordings import benchmark_of
    from gateway.report.traffic_figures import TrafficFigures
    from gateway.report.traffic_overlay import rederive_run

    again = rederive_run(tmp_path / "out" / "r", log, benchmark_of(log.header))
    assert TrafficFigures.of(again.events).as_json() == TrafficFigures.of(log.events).as_json()
    errors = [e for e in log.events if isinstance(e, ErrorEvent)]
    assert [e for e in again.events if isinstance(e, ErrorEvent)] == errors


async def test_an_agent_that_bypasses_the_recorder_is_told_at_once_and_nothing_reads_zero(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    provider = await serve(openai_app())
    recorder_port = free_port()
    agent = await llm_agent(provider.url)  # its base URL points straight at the provider
    llm = {"upstream": provider.url, "port": recorder_port}
    config = write_config(tmp_path, make_benchmark(), http_agent_settings(agent, llm=llm))
    try:
        result = await asyncio.to_thread(marathon, "run", str(config), cwd=tmp_path)
    finally:
        await agent.stop()
        await provider.stop()
    assert result.returncode == 0, result.stdout + result.stderr
    url = f"http://127.0.0.1:{recorder_port}"
    assert f"none of its LLM calls reached the recorder: point the agent's LLM base URL at {url}" in result.stderr
    log = read_log(tmp_path / "out" / "r" / EVENTS_FILE)
    assert not [e for e in log.events if isinstance(e, LLMExchange)]
    warned = [e for e in log.events if isinstance(e, ErrorEvent) and e.kind == "recorder_bypassed"]
    assert len(warned) == 1 and warned[0].seq < [e.seq for e in log.events if isinstance(e, Replied)][1]
    report = (tmp_path / "out" / "r" / "report.md").read_text()
    assert f"Not observable: the recorder listened at {url}" in report
    assert "LLM calls recorded" not in report and "compactions seen" not in report
    assert "— r: tiny @ unknown (not observed)" in report
    assert not load_run(tmp_path / "out" / "r").observed  # budget tables say "not observable"


async def test_an_agent_that_answers_an_error_when_its_model_is_down_ends_agent_llm_failed(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """Found running Letta through the faults (issue 46 item 5): its model unreachable, Letta
    answers HTTP 500 "An internal server error occurred", and the run ended `agent_failed` —
    the agent blamed for its model. The recorder saw the turn's model calls fail: the run ends
    `agent_llm_failed`, naming them, and resumes once the model is back."""
    recorder_port, provider_port = free_port(), free_port()  # nothing listens at the provider yet
    agent = await llm_agent(f"http://127.0.0.1:{recorder_port}", fail_status=500)
    llm = {"upstream": f"http://127.0.0.1:{provider_port}", "port": recorder_port, "profile": "letta"}
    config = write_config(tmp_path, make_benchmark(), http_agent_settings(agent, llm=llm))
    try:
        down = await asyncio.to_thread(marathon, "run", str(config), cwd=tmp_path)
        provider = await serve(openai_app(), port=provider_port)  # the model is back
        try:
            back = await asyncio.to_thread(marathon, "run", str(config), cwd=tmp_path)
        finally:
            await provider.stop()
    finally:
        await agent.stop()
    assert down.returncode == 1 and "[r] agent_llm_failed" in down.stdout, down.stdout + down.stderr
    assert "HTTP 500" in down.stdout and "failed model call" in down.stdout
    assert back.returncode == 0, back.stdout + back.stderr
    log = read_log(tmp_path / "out" / "r" / EVENTS_FILE)
    assert sorted(e.question_id for e in log.events if isinstance(e, Evaluation)) == ["q1", "q2", "q3"]
