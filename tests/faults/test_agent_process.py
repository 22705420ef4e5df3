"""An agent process we start, when it goes wrong: it exits at start or mid-run, a killed
runner leaves it behind, or the runner itself is told to stop (SIGTERM, SIGHUP). Each is
found at once, named (exit code, the end of agent.log), and never confused with an agent
that still answers on the same port.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapters.lifecycle import PID_FILE, remember_agent
from gateway.log.events import (
    ErrorEvent,
    RunEnded,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from gateway.traffic.hub import free_port
from tests.conftest import REPO, BenchFactory
from tests.marathon_cli import count_records, explain, marathon, spawn_marathon
from tests.process_agent import http_process_agent

BOT = REPO / "tests" / "adapters" / "bots" / "ptb_memory_bot.py"
WRONG_TOKEN = "987654321:WRONG-token-for-this-bot-000000000000"



def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


async def test_a_bot_that_exits_at_start_is_named_at_once_without_its_token(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    agent = {
        "adapter": "telegram",
        "process": {
            "command": [sys.executable, str(BOT)],
            "env": {"TELEGRAM_API_ROOT": "${TELEGRAM_API_ROOT}", "TELEGRAM_BOT_TOKEN": WRONG_TOKEN},
            "ready_timeout": 60,
        },
    }
    started = time.monotonic()
    outcome = await run_spec(RunSpec("bot", make_benchmark(), agent), tmp_path)
    took = time.monotonic() - started
    assert outcome.reason == TerminationReason.AGENT_FAILED
    assert took < 30, f"{took:.1f} s: the exit was noticed late (ready_timeout is 60 s)"
    assert "the agent exited with code" in outcome.detail and "before it polled for updates" in outcome.detail
    assert "agent.log ends:" in outcome.detail and "reject" in outcome.detail.lower()  # PTB: token rejected
    written = (tmp_path / "bot" / EVENTS_FILE).read_bytes() + (tmp_path / "bot" / "report.md").read_bytes()
    assert WRONG_TOKEN.encode() not in written and b"WRONG-token" not in written


async def test_an_agent_that_dies_mid_run_is_named_within_a_second_not_after_its_timeouts(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    agent = http_process_agent(tmp_path, free_port(), DIE_AFTER="3")
    agent["timeout"] = 60  # were the exit not noticed, this run would take 3 × 60 s
    started = time.monotonic()
    outcome = await run_spec(RunSpec("r", make_benchmark(), agent), tmp_path)
    assert time.monotonic() - started < 20
    assert outcome.reason == TerminationReason.AGENT_FAILED
    log = read_log(tmp_path / "r" / EVENTS_FILE)
    exited = [e for e in log.events if isinstance(e, ErrorEvent) and e.kind == "agent_exited"]
    assert len(exited) == 1  # fatal: not sent again twice more
    assert "exited with code 3" in exited[0].message and "the agent's database is gone" in exited[0].message


async def test_a_port_that_answers_before_the_agent_starts_is_refused(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    from aiohttp import web

    from adapters.http_server import serve

    port = free_port()
    async def health(request: web.Request) -> web.Response:
        return web.Response(text="an old instance")

    app = web.Application()
    app.router.add_get("/health", health)
    squatter = await serve(app, port=port)
    try:
        outcome = await run_spec(RunSpec("r", make_benchmark(), http_process_agent(tmp_path, port)), tmp_path)
    finally:
        await squatter.stop()
    assert outcome.reason == TerminationReason.AGENT_FAILED
    assert "something already answers at the agent's health check" in outcome.detail


def run_until(config: Path, tmp_path: Path, log_path: Path, records: int) -> subprocess.Popen[str]:
    """`marathon run CONFIG` started; returns once its log holds `records` records."""
    proc = spawn_marathon("run", str(config), cwd=tmp_path)
    deadline = time.monotonic() + 60
    while count_records(log_path) < records and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return proc


def config_for(tmp_path: Path, bench: Path, agent: dict[str, object]) -> Path:
    config = tmp_path / "config.jsonc"
    runs = [{"id": "r", "benchmark": str(bench), "agent": agent}]
    config.write_text(json.dumps({"recordings": "out", "runs": runs}))
    return config


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_end_a_run_like_ctrl_c(
    make_benchmark: BenchFactory, tmp_path: Path, sig: signal.Signals
) -> None:
    config = config_for(tmp_path, make_benchmark(), http_process_agent(tmp_path, free_port()))
    log_path = tmp_path / "out" / "r" / EVENTS_FILE
    proc = run_until(config, tmp_path, log_path, records=6)
    assert proc.poll() is None, f"the run ended before the signal: {proc.communicate()}"
    agent_pid = json.loads((tmp_path / "out" / "r" / PID_FILE).read_text())["pid"]
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err
    assert not alive(agent_pid), "the agent outlived the run"
    log = read_log(log_path)
    assert [e.reason for e in log.events if isinstance(e, RunEnded)] == ["interrupted"]
    again = marathon("run", str(config), cwd=tmp_path)
    assert again.returncode == 0 and "[r] completed" in again.stdout, again.stdout + again.stderr


def test_a_leftover_agent_of_a_killed_run_is_ended_before_a_new_start(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """What a SIGKILLed marathon leaves behind: its agent still running, its pid noted in the
    run folder (made here directly, so the test does not depend on how the kill lands)."""
    port = free_port()
    agent = http_process_agent(tmp_path, port)
    config = config_for(tmp_path, make_benchmark(), agent)
    run_dir = tmp_path / "out" / "r"
    run_dir.mkdir(parents=True)
    command = agent["process"]["command"]  # type: ignore[index]
    orphan = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        remember_agent(run_dir, orphan.pid)
        deadline = time.monotonic() + 20
        while not _answers(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        again = marathon("run", str(config), cwd=tmp_path)
        log_path = run_dir / EVENTS_FILE
        why = explain(again, log_path) + "\n--- agent.log\n" + (run_dir / "agent.log").read_text()
        assert again.returncode == 0 and "[r] completed" in again.stdout, why
        assert orphan.wait(timeout=10) is not None  # ended by the new start
    finally:
        if orphan.poll() is None:
            orphan.kill()
    log = read_log(log_path)
    notes = [e.message for e in log.events if isinstance(e, ErrorEvent) and e.kind == "agent_start"]
    expected = f"ended a leftover agent (process group {orphan.pid}) that an earlier, killed run had started"
    assert notes == [expected], why


def _answers(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


async def test_a_start_that_failed_before_the_agent_was_up_is_counted_among_the_starts(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """Issue 47: the report said "starts: 2" after three starts — the one that stopped before
    its agent was up logged an end but no start."""
    flag = tmp_path / "locked"
    agent = http_process_agent(tmp_path, free_port(), START_FAILS=str(flag), DIE_AFTER="3")
    spec = RunSpec("r", make_benchmark(), agent)
    first = await run_spec(spec, tmp_path)  # the agent dies on its third message
    flag.touch()
    second = await run_spec(spec, tmp_path)  # it can't start at all
    flag.unlink()
    assert (first.reason, second.reason) == (TerminationReason.AGENT_FAILED,) * 2
    assert "exited with code 4" in second.detail
    report = (tmp_path / "r" / "report.md").read_text()
    assert "starts: 2 (1 stopped before the agent was up);" in report, report
