"""Which of a run's limits the next message would pass: the config's (`limits: { wall_seconds,
agent_turns, spend_usd }`, counted by gateway/run/progress.py) and the log's own bounds
(gateway/log/bounds.py). What a caller may rely on: `reached()` is "" while none is, else one
line naming the limit, as the run's end detail shows it; a spend that can't be priced is said
once in the log, and the other limits still hold."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from gateway.log.bounds import log_bound
from gateway.log.events import ErrorEvent, Event
from gateway.log.runlog import RunLogWriter
from gateway.log.vocabulary import ErrorKind, ErrorSource
from gateway.run.progress import RunProgress


class RunLimits:
    def __init__(self, limits: dict[str, float], progress: RunProgress, log: Callable[[Event], Any]) -> None:
        self.limits, self.progress, self.log = limits, progress, log
        self.spend_unknown_logged = False
        self.log_size: int | None = None  # the log's bytes when the last turn started

    def reached(self, writer: object) -> str:
        if reached := self._log_bound(writer):
            return reached
        reached, spend_unknown = self.progress.limit_reached(self.limits, time.time())
        if spend_unknown and not self.spend_unknown_logged:
            self.spend_unknown_logged = True
            message = "spend_usd can't be enforced: a model's price is unknown"
            self.log(ErrorEvent(source=ErrorSource.RUNNER, kind=ErrorKind.LIMIT, message=message))
        return reached

    def _log_bound(self, writer: object) -> str:
        """The log's own bounds; a cluster node's log is the driver's (it keeps them there)."""
        if not isinstance(writer, RunLogWriter):
            return ""
        size = writer.size() or 0
        reached, self.log_size = log_bound(writer.next_seq, size, self.log_size), size
        return reached
