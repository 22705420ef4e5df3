"""A run's log as seen from the node it runs on: records go to the driver's relay.

`RelayJournal` is the `RunJournal` of a run executing as a Ray task; `RelayAppender` stamps
records here (sequence number and time, as `RunLogWriter.append` does) and sends them in
batches: at a record that finds `BATCH_RECORDS` waiting or the oldest waiting
`BATCH_SECONDS`, before every message the persona sends (the runner's `flush`), and at close.
There is no timer: while the agent thinks, the records of its turn wait here.

What a caller may rely on: the log on the driver holds everything up to the last flush, so the
message that leaves for the agent is on the driver's disk first (as it is for a local run);
what is lost when the node dies is at most the records since — the agent's reply and model
calls of the turn in flight — and a resumed run re-sends that message, as after a torn tail.
Any failure to reach the relay is a `RunLogWriteError`: the run stops (fail closed), and
from then on the appender fails at once instead of waiting for the relay again.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayError, RayTaskError

from gateway.log.events import Event, Header, RunStart
from gateway.log.runlog import RunLog, RunLogWriteError, pack_record
from gateway.run.journal import LogAppender
from persona.benchmark.model import Benchmark

BATCH_RECORDS = 256
BATCH_SECONDS = 0.25
RELAY_TIMEOUT = 60.0  # s: a relay that doesn't answer within this is gone
AGENT_LOG_TAIL = 256 * 1024  # bytes of the agent's own log kept on the driver per attempt


def relay_call(ref: Any) -> Any:
    """Wait for a relay call. The relay's own errors (damage, a full disk, a stale lease) come
    back as raised there; an unreachable relay is a `RunLogWriteError`."""
    try:
        return ray.get(ref, timeout=RELAY_TIMEOUT)
    except RayTaskError as exc:
        cause = exc.cause
        if isinstance(cause, Exception):
            raise cause from None
        raise RunLogWriteError(f"the driver's log relay failed: {exc}") from None
    except (RayError, GetTimeoutError) as exc:
        raise RunLogWriteError(
            f"the driver's log relay can't be reached: {type(exc).__name__}: {exc}"
        ) from None


class RelayAppender:
    def __init__(self, relay: Any, run_id: str, lease: int, next_seq: int) -> None:
        self.relay = relay
        self.run_id = run_id
        self.lease = lease
        self._next_seq = next_seq
        self._batch: list[tuple[int, bytes]] = []
        self._oldest = 0.0
        self._closed = False
        self._broken: RunLogWriteError | None = None  # the relay failed once: fail fast after
        self.sent = 0  # records the relay took (for figures)

    def _usable(self) -> None:
        if self._broken is not None:
            raise RunLogWriteError(f"the run log can't be written: {self._broken}")
        if self._closed:
            raise RunLogWriteError("run log is closed")

    def append(self, event: Event) -> Event:
        self._usable()
        event.seq = self._next_seq
        event.ts = time.time()
        data = pack_record(event.to_record())
        if not self._batch:
            self._oldest = time.monotonic()
        self._batch.append((event.seq, data))
        self._next_seq += 1
        if len(self._batch) >= BATCH_RECORDS or time.monotonic() - self._oldest >= BATCH_SECONDS:
            self.flush()
        return event

    def flush(self) -> None:
        if not self._batch:
            return
        self._usable()
        batch, self._batch = self._batch, []
        try:
            relay_call(self.relay.append.remote(self.run_id, self.lease, batch))
        except RunLogWriteError as exc:
            self._broken = exc
            raise
        self.sent += len(batch)

    def check_writable(self) -> None:
        self._usable()
        try:
            relay_call(self.relay.check.remote(self.run_id, self.lease))
        except RunLogWriteError as exc:
            if exc.errno != errno.ENOSPC:  # a full disk may clear; a lost relay won't
                self._broken = exc
            raise

    def close(self) -> None:
        """Flush and close; after a failure of the relay, only mark closed (nothing more can
        reach it, and waiting again would only delay the run's end)."""
        if self._closed:
            return
        try:
            if self._broken is None:
                self.flush()
                relay_call(self.relay.close.remote(self.run_id, self.lease))
        finally:
            self._closed = True


class RelayJournal:
    """The journal of a run on a cluster node: the log is the driver's, the lock is the
    driver's (held for the task's whole life), the reports are written by the driver."""

    def __init__(self, relay: Any, run_id: str, node: str, location: str, work_dir: Path) -> None:
        self.relay = relay
        self.run_id = run_id
        self.node = node
        self.location = location
        self.work_dir = work_dir  # the run's folder on this node: the agent's process, state and log
        self.moved = not work_dir.exists()  # this node never ran it: no agent state here

    def acquire(self) -> None:
        """The driver holds the run folder's lock while this task may write."""

    def release(self) -> None:
        """See `acquire`."""

    def open(self, header: Callable[[], Header], fresh: bool) -> tuple[LogAppender, RunLog | None]:
        lease, next_seq, previous = relay_call(
            self.relay.open.remote(self.run_id, header(), fresh, self.node)
        )
        if previous is not None and self.moved and not fresh:
            self._adopt(previous)
        return RelayAppender(self.relay, self.run_id, lease, next_seq), previous

    def _adopt(self, previous: RunLog) -> None:
        """A run last started on another Ray node of this same machine (a private local Ray
        started again after its driver was stopped, a node restarted): its folder — the agent's
        process files and state as that start left them — is still here. Moved into this node's
        place, the run resumes with its agent's memory instead of losing it."""
        last = next((e for e in reversed(previous.events) if isinstance(e, RunStart) and e.node), None)
        if last is None:
            return
        nodes = self.work_dir.parent.parent.parent  # <temp>/marathonbench-runs/<node>/<recordings>/<run>
        earlier = nodes / last.node.rpartition("/")[2][:12] / self.work_dir.parent.name / self.work_dir.name
        if earlier != self.work_dir and earlier.is_dir():
            self.work_dir.parent.mkdir(parents=True, exist_ok=True)
            os.replace(earlier, self.work_dir)
            self.moved = False

    def keep(self, path: Path, relative: str) -> None:
        """A checkpoint's archive, sent to the driver's run folder (through Ray's object store)
        before its log record is — a fork on any node finds it there."""
        relay_call(self.relay.keep_file.remote(self.run_id, relative, path.read_bytes()))

    def finish(self, benchmark: Benchmark) -> None:
        """Reports are the driver's to write; the end of the agent's own log goes there."""
        path = self.work_dir / "agent.log"
        try:
            with open(path, "rb") as log:
                size = log.seek(0, 2)
                log.seek(max(0, size - AGENT_LOG_TAIL))
                tail = log.read()
        except OSError:
            return
        relay_call(self.relay.keep_agent_log.remote(self.run_id, self.node, tail))
