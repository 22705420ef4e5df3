"""Starting, checking, resetting and stopping an agent process for a run.

A profile's `process` settings: `command` (list, or a string run by the shell), `cwd`, `env`
(values may use `${RUN_DIR}`, `${STATE_DIR}`, `${LLM_URL}`, `${TELEGRAM_API_ROOT}` and any
environment variable), `health` (`{url}` answering 2xx, or `{tcp: "host:port"}`),
`ready_timeout` (s, default 60), `stop_timeout` (s, default 10), `state_dir` and `snapshot`
(a folder copied over the state folder before each start: the agent's reset).

The agent runs in its own process group; stopping ends the whole group (SIGTERM, then SIGKILL
after `stop_timeout`) — also when our process exits through an exception or Ctrl-C, via
`atexit`. Its output goes to `agent.log` in the run folder.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

from adapters.base import AdapterConfigError, AgentConnectionError, AgentTimeout

_LIVE_GROUPS: set[int] = set()
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _kill_all() -> None:
    for pgid in list(_LIVE_GROUPS):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    _LIVE_GROUPS.clear()


atexit.register(_kill_all)


def fill(value: str, values: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in values:
            return values[name]
        if name in os.environ:
            return os.environ[name]
        raise AdapterConfigError(f"${{{name}}} in the agent's process settings is not known")

    return _PLACEHOLDER.sub(sub, value)


class AgentProcess:
    def __init__(self, settings: dict[str, Any], run_dir: Path, values: dict[str, str]) -> None:
        command = settings.get("command")
        if not command:
            raise AdapterConfigError("the agent's `process` needs a `command`")
        self.run_dir = run_dir
        self.state_dir = Path(
            fill(
                str(settings.get("state_dir", "${RUN_DIR}/agent-state")), {"RUN_DIR": str(run_dir), **values}
            )
        )
        self.values = {"RUN_DIR": str(run_dir), "STATE_DIR": str(self.state_dir), **values}
        self.command: list[str] | str = (
            [fill(str(c), self.values) for c in command]
            if isinstance(command, list)
            else fill(str(command), self.values)
        )
        self.cwd = fill(str(settings.get("cwd", str(run_dir))), self.values)
        self.env = {
            **os.environ,
            **{str(k): fill(str(v), self.values) for k, v in dict(settings.get("env", {})).items()},
        }
        self.health: dict[str, Any] = dict(settings.get("health", {}))
        self.ready_timeout = float(settings.get("ready_timeout", 60))
        self.stop_timeout = float(settings.get("stop_timeout", 10))
        self.snapshot = settings.get("snapshot")
        self.process: subprocess.Popen[bytes] | None = None

    def reset(self) -> None:
        """Put the snapshot in place of the state folder (no snapshot: keep what is there)."""
        if not self.snapshot:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            return
        source = Path(fill(str(self.snapshot), self.values))
        if not source.is_dir():
            raise AdapterConfigError(f"snapshot folder {source} does not exist")
        shutil.rmtree(self.state_dir, ignore_errors=True)
        shutil.copytree(source, self.state_dir)

    async def start(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.run_dir / "agent.log", "ab")  # noqa: SIM115 - handed to the child
        try:
            self.process = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                shell=isinstance(self.command, str),
            )
        except OSError as exc:
            raise AgentConnectionError(f"can't start the agent ({self.command}): {exc.strerror}") from exc
        finally:
            log.close()
        _LIVE_GROUPS.add(self.process.pid)
        await self.wait_ready()

    async def wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise AgentConnectionError(
                    f"the agent exited with code {self.process.returncode} before it was ready (see {self.run_dir / 'agent.log'})"
                )
            if await self._healthy():
                return
            if time.monotonic() > deadline:
                raise AgentTimeout(f"the agent was not ready within {self.ready_timeout:g} s")
            await asyncio.sleep(0.1)

    async def _healthy(self) -> bool:
        if "url" in self.health:
            try:
                async with (
                    aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as http,
                    http.get(fill(str(self.health["url"]), self.values)) as r,
                ):
                    return 200 <= r.status < 300
            except (aiohttp.ClientError, TimeoutError):
                return False
        if "tcp" in self.health:
            host, _, port = fill(str(self.health["tcp"]), self.values).rpartition(":")
            try:
                _, writer = await asyncio.wait_for(asyncio.open_connection(host or "127.0.0.1", int(port)), 2)
            except (OSError, TimeoutError):
                return False
            writer.close()
            return True
        return True  # no health check configured: started is ready

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    async def stop(self) -> None:
        process = self.process
        if process is None:
            return
        pgid = process.pid
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + self.stop_timeout
        while process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)  # the whole group, also children that ignored SIGTERM
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)
        _LIVE_GROUPS.discard(pgid)
        self.process = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()
