"""Agent processes: start with environment, health, stop (also when SIGTERM is ignored), reset."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from adapters.base import AdapterConfigError, AgentConnectionError, AgentTimeout
from adapters.lifecycle import AgentProcess
from gateway.traffic.hub import free_port

SERVER = textwrap.dedent(
    """
    import http.server, os, signal, sys
    if os.environ.get("IGNORE_TERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    open(os.path.join(os.environ["STATE"], "pid"), "w").write(str(os.getpid()))
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(os.environ["GREETING"].encode())
        def log_message(self, *a): pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def fake_agent(tmp_path: Path, port: int, **extra: object) -> AgentProcess:
    script = tmp_path / "agent.py"
    script.write_text(SERVER)
    settings = {
        "command": [sys.executable, str(script), str(port)],
        "env": {"GREETING": "hi from ${RUN_DIR}", "STATE": "${STATE_DIR}"},
        "health": {"url": f"http://127.0.0.1:{port}/health"},
        "ready_timeout": 20,
        "stop_timeout": 1,
        **extra,
    }
    return AgentProcess(settings, tmp_path / "run", {})


async def test_start_health_and_stop(tmp_path: Path) -> None:
    port = free_port()
    agent = fake_agent(tmp_path, port)
    agent.reset()
    await agent.start()
    pid = int((agent.state_dir / "pid").read_text())
    assert agent.running and alive(pid)
    await agent.stop()
    assert not agent.running and not alive(pid)


async def test_a_process_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    port = free_port()
    agent = fake_agent(tmp_path, port, env={"GREETING": "x", "STATE": "${STATE_DIR}", "IGNORE_TERM": "1"})
    agent.reset()
    await agent.start()
    pid = int((agent.state_dir / "pid").read_text())
    started = time.monotonic()
    await agent.stop()
    assert not alive(pid) and time.monotonic() - started < 5


async def test_reset_restores_the_snapshot(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot"
    (snapshot / "memory").mkdir(parents=True)
    (snapshot / "memory" / "MEMORY.md").write_text("clean")
    agent = fake_agent(tmp_path, free_port(), snapshot=str(snapshot))
    agent.state_dir.mkdir(parents=True)
    (agent.state_dir / "left-over").write_text("from an earlier run")
    agent.reset()
    assert (agent.state_dir / "memory" / "MEMORY.md").read_text() == "clean"
    assert not (agent.state_dir / "left-over").exists()


async def test_an_agent_that_dies_at_start_is_reported_with_its_log(tmp_path: Path) -> None:
    agent = AgentProcess(
        {
            "command": [sys.executable, "-c", "import sys; print('boom'); sys.exit(3)"],
            "health": {"tcp": "127.0.0.1:9"},
        },
        tmp_path,
        {},
    )
    with pytest.raises(AgentConnectionError, match="exited with code 3"):
        await agent.start()
    assert "boom" in (tmp_path / "agent.log").read_text()


async def test_an_agent_never_ready_times_out_and_is_stopped(tmp_path: Path) -> None:
    agent = AgentProcess(
        {
            "command": [
                sys.executable,
                "-c",
                "import time; print('refusing to serve: the key is too short', flush=True); time.sleep(60)",
            ],
            "health": {"tcp": "127.0.0.1:9"},
            "ready_timeout": 1,
        },
        tmp_path,
        {},
    )
    with pytest.raises(AgentTimeout, match=r"agent\.log ends: refusing to serve: the key is too short"):
        await agent.start()  # an agent that refuses and runs on: its own words are in the error
    await agent.stop()
    assert not agent.running


async def test_restart_gives_a_new_process(tmp_path: Path) -> None:
    agent = fake_agent(tmp_path, free_port())
    agent.reset()
    await agent.start()
    first = int((agent.state_dir / "pid").read_text())
    await agent.restart()
    second = int((agent.state_dir / "pid").read_text())
    await agent.stop()
    assert first != second and not alive(first)


def test_an_agent_binary_is_found_through_its_marathon_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    from adapters.lifecycle import binary_for

    monkeypatch.setenv("MARATHON_HERMES_BIN", "/opt/agents/hermes/bin/hermes")
    assert binary_for("hermes") == "/opt/agents/hermes/bin/hermes"
    assert binary_for("openclaw") == "openclaw"  # not set: found on PATH
    assert binary_for("./bin/hermes") == "./bin/hermes"  # a path is taken as written


def test_an_agent_does_not_outlive_a_killed_runner(tmp_path: Path) -> None:
    """SIGKILL leaves no atexit and no finally (a killed `marathon run`, a cluster node's worker
    killed with its node): the guard still ends the agent, and its child, at once."""
    port = free_port()
    script = tmp_path / "agent.py"
    script.write_text(
        SERVER.replace(
            "open(os.path",
            "import subprocess; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
            "d = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)\n"
            "open(os.path.join(os.environ['STATE'], 'detached'), 'w').write(str(d.pid))\nopen(os.path",
        )
    )
    runner = tmp_path / "runner.py"
    runner.write_text(
        textwrap.dedent(
            f"""
            import asyncio, sys, time
            sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
            from pathlib import Path
            from adapters.lifecycle import AgentProcess
            agent = AgentProcess({{"command": [sys.executable, {str(script)!r}, "{port}"],
                                   "env": {{"GREETING": "x", "STATE": "${{STATE_DIR}}"}},
                                   "health": {{"url": "http://127.0.0.1:{port}/"}}, "ready_timeout": 20}},
                                  Path({str(tmp_path / "run")!r}), {{}})
            agent.reset()
            asyncio.run(agent.start())
            print(agent.process.pid, flush=True)
            time.sleep(600)
            """
        )
    )
    proc = subprocess.Popen([sys.executable, str(runner)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        group = int(proc.stdout.readline())
        pid = int((tmp_path / "run" / "agent-state" / "pid").read_text())
        members = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _group_of(p) == group]
        assert alive(pid) and len(members) >= 2  # the agent and its own child
        detached = int((tmp_path / "run" / "agent-state" / "detached").read_text())
        assert _group_of(Path(f"/proc/{detached}")) == detached and alive(detached)  # a session of its own
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(p) for p in [*members, detached]):
            time.sleep(0.05)
        assert not any(alive(p) for p in [*members, detached])
    finally:
        proc.kill()


async def test_a_worker_that_left_the_agents_group_is_ended_with_the_agent(tmp_path: Path) -> None:
    """Issue 59: a detached worker (a daemon's double fork into a session of its own) outlived
    the agent's stop — 16 were left after one run. Its inherited mark finds it."""
    port = free_port()
    agent = fake_agent(tmp_path, port)
    script = tmp_path / "agent.py"
    script.write_text(
        SERVER.replace(
            "open(os.path",
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            "        open(os.path.join(os.environ['STATE'], 'worker'), 'w').write(str(os.getpid()))\n"
            "        import time; time.sleep(600)\n"
            "    os._exit(0)\n"
            "open(os.path",
            1,
        )
    )
    agent.reset()
    await agent.start()
    deadline = time.monotonic() + 10
    while not (agent.state_dir / "worker").exists() or not (agent.state_dir / "worker").read_text():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    worker = int((agent.state_dir / "worker").read_text())
    assert agent.process is not None
    assert alive(worker) and _group_of(Path(f"/proc/{worker}")) != agent.process.pid  # not in the agent's group
    await agent.stop()
    assert not alive(worker) and agent.notes == []


def _group_of(proc: Path) -> int:
    try:
        return int((proc / "stat").read_text().rsplit(")", 1)[1].split()[2])
    except (OSError, IndexError, ValueError):
        return -1


async def test_fill_renders_the_run_s_own_values_into_snapshot_files_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent whose config can't read its environment (Hermes' Telegram base_url) gets this
    start's port written in; a secret of the environment named in the file stays a placeholder."""
    monkeypatch.setenv("SECRET_KEY", "sk-must-not-land-in-the-run-folder")
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    (snapshot / "config.yaml").write_text(
        "base_url: ${TELEGRAM_API_ROOT}/bot\nport: ${PORT}\nkey: ${SECRET_KEY}\n"
    )
    (snapshot / "notes.md").write_text("left as is: ${PORT}\n")
    port = free_port()
    agent = fake_agent(tmp_path, port, snapshot=str(snapshot), fill=["config.yaml"])
    agent.values.update({"PORT": str(port), "TELEGRAM_API_ROOT": "http://127.0.0.1:5555"})
    agent.reset()
    await agent.start()
    try:
        rendered = (agent.state_dir / "config.yaml").read_text()
        assert rendered == f"base_url: http://127.0.0.1:5555/bot\nport: {port}\nkey: ${{SECRET_KEY}}\n"
        assert (agent.state_dir / "notes.md").read_text() == "left as is: ${PORT}\n"
    finally:
        await agent.stop()


@pytest.mark.parametrize("name", ["/etc/passwd", "../outside.yaml", "x/../../snapshot/config.yaml"])
async def test_fill_names_only_files_inside_the_snapshot(tmp_path: Path, name: str) -> None:
    snapshot = tmp_path / "snapshot"
    (snapshot / "x").mkdir(parents=True)
    (snapshot / "config.yaml").write_text("port: ${PORT}\n")
    agent = fake_agent(tmp_path, free_port(), snapshot=str(snapshot), fill=[name])
    agent.reset()
    with pytest.raises(AdapterConfigError, match="not a file inside the snapshot"):
        await agent.start()  # refused before anything starts or is written
    assert not (tmp_path / "run" / "snapshot").exists()  # nothing written outside the state folder


def test_a_fresh_state_without_a_snapshot_is_empty_when_it_is_the_run_s_own(tmp_path: Path) -> None:
    """`--fresh` must not keep an earlier run's memory: a run-owned state folder starts empty,
    and the hash it started from is the same every time."""
    agent = fake_agent(tmp_path, free_port())
    agent.state_dir.mkdir(parents=True)
    (agent.state_dir / "notes.md").write_text("an earlier run's notes")
    first = agent.reset()
    assert not any(agent.state_dir.iterdir())
    (agent.state_dir / "notes.md").write_text("this run's notes")
    assert agent.reset() == first and len(first) == 64


def test_a_state_folder_outside_the_run_is_kept_and_said_unknown(tmp_path: Path) -> None:
    outside = tmp_path / "home-of-the-agent"
    outside.mkdir()
    (outside / "db.sqlite").write_text("the user's own")
    agent = fake_agent(tmp_path, free_port(), state_dir=str(outside))
    said = agent.reset()
    assert said.startswith("unknown (") and (outside / "db.sqlite").read_text() == "the user's own"


async def test_a_temp_folder_in_the_run_s_state_is_made_before_the_agent_starts(tmp_path: Path) -> None:
    """OpenClaw wrote its log, gateway locks and compile cache to the shared /tmp: its profiles
    give it TMPDIR in the run's state folder, which must exist when it starts."""
    port = free_port()
    env = {"GREETING": "x", "STATE": "${STATE_DIR}", "TMPDIR": "${STATE_DIR}/tmp"}
    agent = fake_agent(tmp_path, port, env=env)
    agent.reset()
    await agent.start()
    try:
        assert (agent.state_dir / "tmp").is_dir() and agent.env["TMPDIR"] == str(agent.state_dir / "tmp")
    finally:
        await agent.stop()


@pytest.mark.parametrize("name", ["openclaw-http", "openclaw-ws", "openclaw-telegram"])
def test_openclaw_profiles_keep_its_temp_files_in_the_run(name: str) -> None:
    from adapters.profiles import read_profile

    assert read_profile(name)["process"]["env"]["TMPDIR"] == "${STATE_DIR}/tmp"
