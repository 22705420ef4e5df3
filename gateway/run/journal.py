"""Where a run's log lives while the runner drives it: the run's folder on this machine, or —
when the run executes on another node of a cluster — the driver's folder, reached through a
relay (`gateway.cluster.remote_log`).

The runner only ever talks to a `RunJournal`; whichever it is, the log file on the driver's
disk stays the single source of truth, and the same rules hold: one writer per run folder, a
torn tail is cut, damage is refused, and a run that can't be logged stops (fail closed).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from gateway.log.events import Event, Header
from gateway.log.lock import RunLock
from gateway.log.runlog import EVENTS_FILE, RunLog, RunLogWriter, read_log
from gateway.report.markdown import write_reports
from persona.benchmark.model import Benchmark


class LogAppender(Protocol):
    """What the runner writes through. `append` stamps the event (sequence number, time) and
    returns it; it raises `RunLogWriteError` when the log can't take it. `flush` returns once
    everything appended so far is on the log's disk — the runner calls it before a message
    leaves for the agent, so a message is never sent that the log could lose."""

    def append(self, event: Event) -> Event: ...

    def check_writable(self) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class RunJournal(Protocol):
    """A run's log and the lock on its folder, wherever they are."""

    location: str  # the log file as the user finds it (for messages)
    node: str  # where the runner runs: "" on the machine holding the log, else a cluster node
    # the run resumes where its agent's state isn't (another node than before): the agent
    # must start afresh from its snapshot, and the log must say so
    moved: bool

    def acquire(self) -> None:
        """Take the run's folder for this writer; raises `RunInUse` when another holds it."""

    def release(self) -> None: ...

    def open(self, header: Callable[[], Header], fresh: bool) -> tuple[LogAppender, RunLog | None]:
        """A new log (`fresh`, or none yet) with `header()` first — or the existing one opened
        for appending, with what it holds."""
        ...

    def keep(self, path: Path, relative: str) -> None:
        """A file the run made (a checkpoint's archive) kept in the run's folder where its log
        is: here it already is; a cluster node sends it to the driver."""

    def finish(self, benchmark: Benchmark) -> None:
        """After the last record: the run's reports, where the log is (best effort)."""


class LocalJournal:
    """The run's folder on this machine: `<recordings>/<run id>/events.msgpack`."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / EVENTS_FILE
        self.location = str(self.path)
        self.node = ""
        self.moved = False
        self._lock: RunLock | None = None

    def acquire(self) -> None:
        self._lock = RunLock.acquire(self.run_dir)

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def open(self, header: Callable[[], Header], fresh: bool) -> tuple[LogAppender, RunLog | None]:
        if fresh or not self.path.exists():
            self.run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            return RunLogWriter.create(self.path, header()), None
        return RunLogWriter.resume(self.path)

    def keep(self, path: Path, relative: str) -> None:
        """The file is in the run's folder already."""

    def finish(self, benchmark: Benchmark) -> None:
        write_reports(read_log(self.path), benchmark, self.run_dir)
