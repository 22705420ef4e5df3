"""Every process an agent started, found so that none outlives its stop.

An agent runs in a process group of its own, and stopping it ends the group. A worker that left
the group — `setsid`, a daemon's double fork, a detached `child_process.spawn` — is not in it:
it outlives the agent, and may go on writing the agent's state folder while a checkpoint reads
it (issue 59: 16 such workers were left after one run, and a checkpoint logged one state and
archived another). So each agent start carries a mark: an environment variable (`MARK_VARIABLE`)
every descendant inherits, whatever group or session it moves to. A process belongs to the agent
when it is in the agent's process group or session, or carries the mark.

What a caller may rely on: `agent_processes` names only processes of our user (others' environ
can't be read) and never our own process; `end_agent_processes` sends SIGKILL to every one found
until none is left or `within` seconds pass, and returns what it could not end. A process that
clears its environment and leaves the group is not found — the checkpoint's second reading
(gateway/run/checkpoints.py) still sees the folder change and names the processes writing it
(`writers_of`).

Where /proc is absent (not Linux) nothing is found beyond the group; the group is still ended.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

MARK_VARIABLE = "MARATHON_AGENT_MARK"
_PROC = Path("/proc")


def new_mark() -> str:
    """A mark for one agent start: unique, so another run's agents are never taken for ours."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class AgentProcessInfo:
    """One process found: its pid and its command name (for a message)."""

    pid: int
    name: str

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.name})"


def _stat_fields(pid: int) -> tuple[str, int, int] | None:
    """(command name, process group, session) from /proc/PID/stat; None when it is gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    name = text[text.find("(") + 1 : text.rfind(")")]
    fields = text.rsplit(")", 1)[1].split()
    if len(fields) < 4 or fields[0] == "Z":  # a zombie has ended already
        return None
    return name, int(fields[2]), int(fields[3])


def _carries(pid: int, mark: bytes) -> bool:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return (b"\0" + environ).find(b"\0" + mark) >= 0


def _other_pids() -> list[int]:
    """Every process /proc lists, ours excluded ([] where there is no /proc)."""
    if not _PROC.is_dir():
        return []
    ours = os.getpid()
    return [int(e.name) for e in _PROC.iterdir() if e.name.isdigit() and int(e.name) != ours]


def agent_processes(group: int | None, mark: str | None) -> list[AgentProcessInfo]:
    """The live processes of the agent whose group (= session) leader is `group` or that carry
    `mark` (see the module docstring), ours excluded."""
    marked = f"{MARK_VARIABLE}={mark}\0".encode() if mark else None
    found: list[AgentProcessInfo] = []
    for pid in _other_pids():
        fields = _stat_fields(pid)
        if fields is None:
            continue
        name, pgid, session = fields
        if (group is not None and group in (pgid, session)) or (marked is not None and _carries(pid, marked)):
            found.append(AgentProcessInfo(pid, name))
    return found


def end_agent_processes(group: int | None, mark: str | None, within: float = 5.0) -> list[AgentProcessInfo]:
    """SIGKILL every process of the agent, again until none is left (a dying worker may have
    started another); returns those still alive after `within` seconds ([] when all ended)."""
    deadline = time.monotonic() + within
    while True:
        left = agent_processes(group, mark)
        if not left or time.monotonic() > deadline:
            return left
        for process in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(process.pid, signal.SIGKILL)
        time.sleep(0.02)


def writers_of(folder: Path) -> list[AgentProcessInfo]:
    """The processes (of our user) holding a file under `folder` open, ours excluded: who keeps
    writing a state folder that changed while it was archived."""
    root = os.path.realpath(folder)
    found: list[AgentProcessInfo] = []
    for pid in _other_pids():
        try:
            targets = [os.readlink(fd) for fd in (_PROC / str(pid) / "fd").iterdir()]
        except OSError:
            continue
        if any(t == root or t.startswith(root + os.sep) for t in targets):
            fields = _stat_fields(pid)
            if fields is not None:
                found.append(AgentProcessInfo(pid, fields[0]))
    return found


# The guard (adapters/lifecycle.py) runs this when our process is gone: the agent's group, then
# every process carrying its mark. A script of its own, with no import of ours (it runs `-I -S`).
GUARD_SCRIPT = (
    "import os,signal,sys\n"
    "if not sys.stdin.buffer.read(1):\n"
    "    try: os.killpg(int(sys.argv[1]), signal.SIGKILL)\n"
    "    except OSError: pass\n"
    "    mark = ('\\0%s=%s\\0' % (sys.argv[3], sys.argv[2])).encode()\n"
    "    for _ in range(3):\n"
    "        for pid in (p for p in os.listdir('/proc') if p.isdigit()) if os.path.isdir('/proc') else ():\n"
    "            try:\n"
    "                with open('/proc/%s/environ' % pid, 'rb') as f:\n"
    "                    if mark in b'\\0' + f.read(): os.kill(int(pid), signal.SIGKILL)\n"
    "            except OSError: pass\n"
)
