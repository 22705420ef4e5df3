"""The relay: the one process that writes run logs for runs executing on other nodes.

It runs as a Ray actor pinned to the driver's node (same disk as the driver's recordings
folder) and writes with the same `RunLogWriter` as a local run, so `view`, `report`, `compare`
and resume read what they always read. Workers need no shared file system: a run's task opens
its log here (getting back what the log holds, to resume from), streams stamped records in
batches, and closes it.

What a caller may rely on:
- a run has at most one writer: opening it again (Ray retried the task on another node after
  its node died) closes the earlier attempt's writer and gives a new lease; appends under an
  old lease are refused, so a task cut off from the cluster can't write over its successor;
- a batch sent twice is written once (records carry their sequence numbers; one already
  written is skipped), and a gap is refused rather than logged;
- the driver holds each run folder's `RunLock` while its task may write (this actor never
  takes it), so a second `marathon run` on the same recordings is refused as for local runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gateway.log.events import Header
from gateway.log.runlog import EVENTS_FILE, RunLog, RunLogWriteError, RunLogWriter

AGENT_LOG = "agent.log"


class StaleLease(RunLogWriteError):
    """The run was opened again by a later attempt; this one may no longer write."""


@dataclass
class _OpenRun:
    lease: int
    writer: RunLogWriter


class LogRelay:
    """Owns `recordings/<run id>/events.msgpack` of every run a cluster executes."""

    def __init__(self, recordings: str) -> None:
        self.recordings = Path(recordings)
        self.open_runs: dict[str, _OpenRun] = {}
        self.attempts: dict[str, int] = {}
        self.nodes: dict[str, str] = {}
        self.stops: set[str] = set()

    def open(self, run_id: str, header: Header, fresh: bool, node: str) -> tuple[int, int, RunLog | None]:
        """Open the run's log for an attempt running on `node`: (lease, the next sequence
        number, the log so far — None for a new log). `fresh` starts over only on a run's first
        attempt: a retry after a node died continues what the first attempt logged."""
        earlier = self.open_runs.pop(run_id, None)
        if earlier is not None:
            earlier.writer.close()
        first = run_id not in self.attempts
        lease = self.attempts[run_id] = self.attempts.get(run_id, 0) + 1
        path = self.recordings / run_id / EVENTS_FILE
        previous: RunLog | None = None
        if (fresh and first) or not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            writer = RunLogWriter.create(path, header)
        else:
            writer, previous = RunLogWriter.resume(path)
        self.open_runs[run_id] = _OpenRun(lease, writer)
        self.nodes[run_id] = node
        return lease, writer.next_seq, previous

    def append(self, run_id: str, lease: int, records: list[tuple[int, bytes]]) -> int:
        """Write a batch of stamped, packed records; the number written (duplicates skipped)."""
        writer = self._writer(run_id, lease)
        return sum(writer.append_packed(seq, data) for seq, data in records)

    def check(self, run_id: str, lease: int) -> None:
        self._writer(run_id, lease).check_writable()

    def close(self, run_id: str, lease: int) -> None:
        current = self.open_runs.get(run_id)
        if current is not None and current.lease == lease:
            current.writer.close()
            del self.open_runs[run_id]

    def keep_agent_log(self, run_id: str, node: str, text: bytes) -> None:
        """The end of the agent's own log on its node, appended to `agent.log` in the run folder
        (each attempt under a line naming its node), so a failed run's agent output is where
        a local run's is."""
        folder = self.recordings / run_id
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(folder / AGENT_LOG, "ab") as out:
            out.write(f"--- marathonbench: the agent's log on node {node} ---\n".encode())
            out.write(text)

    def keep_file(self, run_id: str, relative: str, data: bytes) -> None:
        """A file a run made on its node (a checkpoint's archive), written whole into its run
        folder here. `relative` must stay inside that folder."""
        folder = (self.recordings / run_id).resolve()
        target = (folder / relative).resolve()
        if not target.is_relative_to(folder) or target == folder:
            raise ValueError(f"run {run_id}: {relative!r} is not a path inside its run folder")
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_bytes(data)
        os.replace(partial, target)

    def request_stop(self, run_id: str) -> None:
        """The driver's Ctrl-C: the run's node sees it (`stop_requested`) and stops the run."""
        self.stops.add(run_id)

    def stop_requested(self, run_id: str) -> bool:
        return run_id in self.stops

    def where(self) -> dict[str, str]:
        """The node each run was last opened on."""
        return dict(self.nodes)

    def _writer(self, run_id: str, lease: int) -> RunLogWriter:
        current = self.open_runs.get(run_id)
        if current is None or current.lease != lease:
            raise StaleLease(
                f"run {run_id}: this attempt's log was taken over by a later attempt (or closed); "
                "it may no longer write"
            )
        return current.writer
