"""Starting, checking, resetting and stopping an agent process for a run.

A profile's `process` settings: `command` (list, or a string run by the shell), `cwd`, `env`
(values may use `${RUN_DIR}`, `${STATE_DIR}`, `${LLM_URL}`, `${TELEGRAM_API_ROOT}` and any
environment variable; `MARATHON_NODE_DIR`, when set, goes first on the agent's PATH),
`health` (`{url}` answering 2xx, or `{tcp: "host:port"}`), `ready_timeout` (s, default 60),
`stop_timeout` (s, default 10), `state_dir`, `snapshot` (a folder copied over the state
folder before a fresh run: the agent's reset) and `fill` (files of the snapshot, e.g.
`["config.yaml"]`, rendered into the state folder at every start with the run's own
`${PORT}`, `${LLM_PORT}`, `${LLM_URL}`, `${TELEGRAM_API_ROOT}`, `${STATE_DIR}` and
`${RUN_DIR}` — for an agent whose config can't read them from its environment; any other
`${NAME}` stays as written, so no secret of ours lands in the file), `not_state` and
`links_into` (what of the state folder a checkpoint leaves out, and where its links may point:
adapters/state_folder.py; `${AGENT_INSTALL}` is the folder the agent's program really is in).

The agent runs in its own process group; stopping ends the whole group (SIGTERM, then SIGKILL
after `stop_timeout`) and then every process carrying the start's mark — a worker that left the
group (adapters/agent_processes.py) — also when our process exits through an exception or
Ctrl-C, via `atexit`. Its output goes to `agent.log` in the run folder.

What a caller may rely on: an agent never outlives the process that started it, nor does a
worker it started in another group or session (unless it also clears its environment) — a guard
process ends the agent's whole group and its marked workers the moment ours is gone, however it went (SIGKILL, or a
cluster node's worker killed with its node); the run folder remembers the agent it started
(`agent.pid`), so a start after our process was killed first ends a leftover all the same; a
start refuses when something already answers at the health check before the agent started
(it would be tested instead of ours); and an agent whose process exited is never "ready" or
"healthy" because a port answers — `exited()` says so, with the end of its `agent.log`.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

from adapters.agent_processes import GUARD_SCRIPT, MARK_VARIABLE, end_agent_processes, new_mark
from adapters.base import AdapterConfigError, AgentConnectionError, AgentExited, AgentTimeout, number_setting
from adapters.state_folder import NO_RULES, StateRules, folder_hash

_LIVE_GROUPS: dict[int, str] = {}  # process group → its start's mark
PID_FILE = "agent.pid"
LOG_FILE = "agent.log"
TAIL_LINES = 6
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FILLED = ("PORT", "LLM_PORT", "LLM_URL", "TELEGRAM_API_ROOT", "STATE_DIR", "RUN_DIR")  # `fill` renders these
# The guard: reads its stdin (a pipe only our process holds open) until it ends. Our process
# writes a byte before a stop of its own (disarmed); an end without one means our process is
# gone, and the guard ends the agent's process group and its marked workers (GUARD_SCRIPT).


def _kill_all() -> None:
    for pgid, mark in list(_LIVE_GROUPS.items()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        end_agent_processes(pgid, mark, within=1.0)
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


TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP")  # where an agent writes its temp files (OpenClaw: logs, locks)


def reset_state(state_dir: Path, run_dir: Path, snapshot: Path | None, rules: StateRules = NO_RULES) -> str:
    """Put a fresh run's agent state in place: the snapshot's copy, or — with none — an empty
    folder when the state folder is the run's own. Returns what the run may promise about its
    initial state: the state folder's hash (equal to the snapshot's), or why it can't."""
    if snapshot is not None:
        if not snapshot.is_dir():
            raise AdapterConfigError(f"snapshot folder {snapshot} does not exist")
        shutil.rmtree(state_dir, ignore_errors=True)
        shutil.copytree(snapshot, state_dir)
    elif state_dir.resolve().is_relative_to(run_dir.resolve()):
        shutil.rmtree(state_dir, ignore_errors=True)  # an earlier run's memory must not leak in
        state_dir.mkdir(parents=True)
    else:
        state_dir.mkdir(parents=True, exist_ok=True)
        return (
            f"unknown (the state folder {state_dir} is outside the run and has no snapshot: kept as it was)"
        )
    return folder_hash(state_dir, rules)


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
        program = binary_for(fill(str(command[0]), self.values)) if isinstance(command, list) else ""
        self.values.setdefault("AGENT_INSTALL", agent_install(program) if program else "")  # "": none known
        self.rules = state_rules(settings, self.values)
        self.command: list[str] | str = (
            [binary_for(fill(str(command[0]), self.values))]
            + [fill(str(c), self.values) for c in command[1:]]
            if isinstance(command, list)
            else fill(str(command), self.values)
        )
        self.cwd = fill(str(settings.get("cwd", str(run_dir))), self.values)
        self.settings_env = {str(k) for k in dict(settings.get("env", {}))}
        self.env = {
            **os.environ,
            **{str(k): fill(str(v), self.values) for k, v in dict(settings.get("env", {})).items()},
        }
        self.env = with_agent_path(self.env)
        self.health: dict[str, Any] = dict(settings.get("health", {}))
        self.ready_timeout = number_setting(settings, "ready_timeout", 60)
        self.stop_timeout = number_setting(settings, "stop_timeout", 10)
        self.snapshot = settings.get("snapshot")
        self.fill_files = [str(f) for f in settings.get("fill") or []]
        if self.fill_files and not self.snapshot:
            raise AdapterConfigError(
                "the agent's `process.fill` names files of its `snapshot`, and there is none"
            )
        self.process: subprocess.Popen[bytes] | None = None
        self._guard: int | None = None  # the write end of the guard's pipe
        self._guard_process: subprocess.Popen[bytes] | None = None
        self.stopping = False
        self.mark = ""  # this start's mark, carried by every process the agent starts
        self.notes: list[str] = []  # what start() found and did (a leftover agent ended)

    def reset(self) -> str:
        """A fresh run's state folder: the snapshot's copy, or empty when the folder is the
        run's own (`reset_state`). Returns the initial state's hash, or why it is unknown."""
        source = Path(fill(str(self.snapshot), self.values)) if self.snapshot else None
        return reset_state(self.state_dir, self.run_dir, source, self.rules)

    @property
    def log_path(self) -> Path:
        return self.run_dir / LOG_FILE

    def tail(self) -> str:
        """The last lines of `agent.log`, for an error message."""
        try:
            lines = self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return ""
        lines = [ln for ln in lines if ln.strip()][-TAIL_LINES:]
        return " | ".join(ln.strip()[:200] for ln in lines)

    def exited(self) -> str | None:
        """Why the agent is gone, when its process exited on its own; None while it runs (or
        while we stop it)."""
        if self.process is None or self.stopping or self.process.poll() is None:
            return None
        tail = self.tail()
        return f"the agent exited with code {self.process.returncode}" + (
            f"; {self.log_path} ends: {tail}" if tail else f" (see {self.log_path})"
        )

    def _render(self) -> None:
        """The `fill` files, from the snapshot, with this start's values (ports change between
        starts of one run when they are "auto")."""
        if not self.fill_files:
            return
        source = Path(fill(str(self.snapshot), self.values))
        ours = {k: v for k, v in self.values.items() if k in _FILLED}
        for name in self.fill_files:
            template, target = source / name, self.state_dir / name
            parts = Path(name).parts
            if (
                Path(name).is_absolute()
                or ".." in parts
                or source.resolve() not in template.resolve().parents
            ):
                raise AdapterConfigError(
                    f"`process.fill`: {name} is not a file inside the snapshot folder {source}"
                )
            try:
                text = template.read_text(encoding="utf-8")
            except OSError as exc:
                raise AdapterConfigError(f"`process.fill`: can't read {template}: {exc.strerror}") from None
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)  # a link the agent left there is replaced, never followed
            target.write_text(
                _PLACEHOLDER.sub(lambda m: ours.get(m.group(1), m.group(0)), text), encoding="utf-8"
            )

    async def start(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._render()
        for name in TEMP_VARIABLES:  # a temp folder given in the run's state folder must exist
            value = self.env.get(name)
            if (
                value
                and name in self.settings_env
                and Path(value).resolve().is_relative_to(self.run_dir.resolve())
            ):
                Path(value).mkdir(parents=True, exist_ok=True)
        await self._end_leftover()
        if self.health and await self._healthy():
            raise AgentConnectionError(
                f"something already answers at the agent's health check ({self._health_target()}) before the "
                "agent was started — another instance of it? Stop it (or give this run other ports): it would "
                "be tested instead of the one marathonbench starts"
            )
        self.stopping = False
        self.mark = new_mark()
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        try:
            self.process = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                env={**self.env, MARK_VARIABLE: self.mark},
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
        _LIVE_GROUPS[self.process.pid] = self.mark
        self._start_guard(self.process.pid)
        remember_agent(self.run_dir, self.process.pid, self.mark)
        await self.wait_ready()

    def _start_guard(self, pgid: int) -> None:
        read, write = os.pipe()  # not inherited by the agent (or any other child): os.pipe fds aren't
        try:
            self._guard_process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", GUARD_SCRIPT, str(pgid), self.mark, MARK_VARIABLE],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # not in the agent's group, and not ours: Ctrl-C doesn't reach it
            )
        except OSError:
            os.close(write)
            return  # no guard: the atexit handler and the leftover check still end the agent
        finally:
            os.close(read)
        self._guard = write

    def _disarm_guard(self) -> None:
        if self._guard is not None:
            with contextlib.suppress(OSError):
                os.write(self._guard, b"x")
            os.close(self._guard)
            self._guard = None
        if self._guard_process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._guard_process.wait(timeout=2)
            self._guard_process = None

    async def _end_leftover(self) -> None:
        """End the agent an earlier run in this folder started and never stopped (its runner was
        killed). The pid is trusted only while it still leads its process group and, where
        /proc tells, started when that agent did — never a reused pid."""
        path = self.run_dir / PID_FILE
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
            pid, started = int(recorded["pid"]), recorded.get("started")
            mark = str(recorded.get("mark") or "")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return
        try:
            leads = os.getpgid(pid) == pid
        except (ProcessLookupError, PermissionError):
            leads = False
        if leads and started == process_start_time(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGTERM)
            deadline = time.monotonic() + self.stop_timeout
            while process_alive(pid) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            while process_alive(pid) and time.monotonic() < deadline + 5:
                await asyncio.sleep(0.05)
            note = f"ended a leftover agent (process group {pid}) that an earlier, killed run had started"
            self.notes.append(note)
            with open(self.log_path, "a", encoding="utf-8") as log:
                log.write(f"marathonbench: {note}\n")
        if mark:  # its workers that left its group (a pid file without a mark: an older run's)
            left = await asyncio.to_thread(end_agent_processes, None, mark)
            if left:
                self.notes.append(f"could not end {', '.join(map(str, left))}, left by an earlier agent")
        path.unlink(missing_ok=True)

    async def wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout
        while True:
            gone = self.exited()
            if gone is not None:
                raise AgentExited(f"{gone} — before it was ready")
            if await self._healthy():
                await asyncio.sleep(0.2)  # an agent that fails at start may answer once, then exit
                gone = self.exited()
                if gone is not None:
                    raise AgentExited(f"{gone} — before it was ready")
                return
            if time.monotonic() > deadline:
                tail = self.tail()  # an agent that refuses to serve often says why, and runs on
                raise AgentTimeout(
                    f"the agent was not ready within {self.ready_timeout:g} s"
                    + (f"; {self.log_path} ends: {tail}" if tail else f" (see {self.log_path})")
                )
            await asyncio.sleep(0.1)

    def _health_target(self) -> str:
        return fill(str(self.health.get("url") or self.health.get("tcp")), self.values)

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
        self.stopping = True
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
        left = await asyncio.to_thread(end_agent_processes, pgid, self.mark)  # workers that left the group
        if left:
            self.notes.append(f"could not end {', '.join(map(str, left))}, started by the agent")
        self._disarm_guard()  # only now: killed while stopping, we'd still leave nothing behind
        _LIVE_GROUPS.pop(pgid, None)
        self.process = None
        (self.run_dir / PID_FILE).unlink(missing_ok=True)

    async def restart(self) -> None:
        await self.stop()
        await self.start()


def agent_install(program: str) -> str:
    """The folder of the agent's own install: where its program really is, links resolved
    (`node_modules/.bin/openclaw` → `node_modules/openclaw`); "" when it can't be found."""
    found = program if "/" in program else shutil.which(program)
    return str(Path(os.path.realpath(found)).parent) if found else ""


def state_rules(settings: dict[str, Any], values: dict[str, str]) -> StateRules:
    """The profile's `not_state` and `links_into` (adapters/state_folder.py), filled with the
    run's values; a `links_into` entry that fills to nothing (no install found) is dropped."""
    def listed(key: str) -> list[str]:
        value = settings.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise AdapterConfigError(f"the agent's `process.{key}` must be a list of paths")
        return [fill(v, values) for v in value]

    not_state = listed("not_state")
    for rel in not_state:
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise AdapterConfigError(f"`process.not_state`: {rel} is not a path inside the state folder")
    roots = [Path(os.path.normpath(v)) for v in listed("links_into") if v.strip()]
    for root in roots:
        if not root.is_absolute():
            raise AdapterConfigError(f"`process.links_into`: {root} is not an absolute folder")
    return StateRules(tuple(not_state), tuple(roots))


def with_agent_path(env: dict[str, str]) -> dict[str, str]:
    """`env` with a Node.js installed beside the agent (`MARATHON_NODE_DIR`; OpenClaw needs
    Node ≥ 24) first on PATH, as every command of an agent we start gets it."""
    node_dir = os.environ.get("MARATHON_NODE_DIR")
    return {**env, "PATH": node_dir + os.pathsep + env.get("PATH", "")} if node_dir else env


def binary_for(name: str) -> str:
    """A command's program: `MARATHON_<NAME>_BIN` when set (an agent installed in a folder of
    its own: MARATHON_HERMES_BIN, MARATHON_OPENCLAW_BIN), else `name` as given (found on PATH)."""
    if "/" in name:
        return name
    return os.environ.get(f"MARATHON_{re.sub(r'[^A-Z0-9]', '_', name.upper())}_BIN") or name


def process_alive(pid: int) -> bool:
    """Is process `pid` running (a zombie — ended, not yet reaped — is not)? A pid read from
    a log or file may be anything: 0 and negatives name process groups, not a process."""
    if not 0 < pid < 1 << 31:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    with contextlib.suppress(OSError):
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    return True


def process_start_time(pid: int) -> int | None:
    """When the process started (clock ticks since boot, from /proc); None where /proc is absent."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def remember_agent(run_dir: Path, pid: int, mark: str = "") -> None:
    """Note in the run folder which agent process (group) it started — pid, start time and mark,
    so that a later start can end it and its workers if our process was killed, and never a
    reused pid."""
    (run_dir / PID_FILE).write_text(
        json.dumps({"pid": pid, "started": process_start_time(pid), "mark": mark}), encoding="utf-8"
    )
