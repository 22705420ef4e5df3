"""One writer per run folder: an exclusive OS file lock on `<run>/run.lock`.

Two `marathon run` processes on the same config would otherwise append to one log (two
`run_start`s, duplicate sequence numbers, every question graded twice). The lock is `flock`,
which the kernel releases when the process dies — a SIGKILLed run never leaves a stale lock.
What a caller may rely on: `RunLock.acquire` either returns a held lock or raises `RunInUse`
naming the holder (pid, start time); readers (the viewer, `report`, `inspect`) never take it.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from adapters.lifecycle import process_alive, process_start_time

LOCK_FILE = "run.lock"


class RunInUse(RuntimeError):
    """Another process is writing this run (its pid and start time are in the message)."""


class RunLock:
    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    @classmethod
    def acquire(cls, run_dir: Path) -> RunLock:
        run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = run_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise RunInUse(
                f"{run_dir} is being written by another marathon ({holder}); "
                "wait for it to end or stop it — two writers would corrupt the run's log"
            ) from None
        os.ftruncate(fd, 0)
        me = os.getpid()
        os.write(
            fd, json.dumps({"pid": me, "started": time.time(), "ticks": process_start_time(me)}).encode()
        )
        return cls(fd, path)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def _holder(fd: int) -> str:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(data["started"])))
        return f"pid {int(data['pid'])}, started {started}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that did not say who it is"


def holder_pid(run_dir: Path) -> int:
    """The pid of the process that last took the run folder's lock — on a cluster the driver,
    whose machine holds the log — while that very process runs (its start time, from /proc,
    matches what it wrote); 0 when it is gone, its pid reused, or nothing can be read."""
    try:
        data = json.loads((run_dir / LOCK_FILE).read_text(encoding="utf-8") or "{}")
        pid, ticks = data.get("pid", 0), data.get("ticks")
    except (OSError, ValueError, AttributeError):
        return 0
    if not isinstance(pid, int) or isinstance(pid, bool) or not process_alive(pid):
        return 0
    return pid if ticks is None or ticks == process_start_time(pid) else 0
