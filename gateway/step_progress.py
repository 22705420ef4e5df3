"""A counter for long steps that are not runs: reading an experiment's logs, grading a set.

Why: `judge-check` and `report` on an experiment folder worked for a minute or more without a
word, and a user could not tell a slow step from a hung one. A `StepProgress` says what it is
doing and how far it got — "reading runs 12/40 (memory-addon.t3.memory.r1)" — on stderr, so
stdout stays what the command prints:

- nothing at all for a step done within `after` seconds (a quick command stays quiet, and so
  do the tests that read its output);
- on a terminal, one line redrawn in place (at most every `redraw` seconds), cleared at the end;
- elsewhere (a CI log, a pipe), a line every `every` seconds, and a last line with the time
  taken once any line was written.

`MARATHON_PROGRESS_AFTER` (seconds) overrides `after` — 0 shows every step from the first.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import TextIO

from gateway.display import safe_text

AFTER = 2.0  # seconds a step may take before it shows progress
EVERY = 10.0  # seconds between lines where the output is not a terminal
REDRAW = 0.2  # seconds between redraws on a terminal


def _after_default() -> float:
    try:
        return float(os.environ.get("MARATHON_PROGRESS_AFTER", AFTER))
    except ValueError:
        return AFTER


class StepProgress:
    """`advance(name)` after each of `total` items; `close()` (or leave the `with`) at the end.
    Writing is best effort: a closed stream never costs the step itself."""

    def __init__(
        self,
        doing: str,
        total: int,
        out: TextIO | None = None,
        *,
        after: float | None = None,
        every: float = EVERY,
    ) -> None:
        self.doing, self.total = doing, total
        self.out = out if out is not None else sys.stderr
        try:
            self.tty = bool(getattr(self.out, "isatty", lambda: False)())
        except (OSError, ValueError):  # closed: nothing will be shown
            self.tty = False
        self.after = _after_default() if after is None else after
        self.every = REDRAW if self.tty else every
        self.done = 0
        self.started = time.monotonic()
        self._shown_at: float | None = None  # when a line was last written (None: never)
        self._drawn = False  # a line is on the terminal, to be redrawn or cleared

    def __enter__(self) -> StepProgress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close(finished=kind is None)

    def line(self, name: str = "") -> str:
        """What the step says now: "reading runs 12/40 (a run's name)"."""
        where = f" ({safe_text(name, one_line=True)})" if name else ""
        return f"{self.doing} {self.done}/{self.total}{where}"

    def advance(self, name: str = "") -> None:
        """One more item done; `name` says which (shown beside the count)."""
        self.done += 1
        now = time.monotonic()
        if now - self.started < self.after:
            return
        if self._shown_at is not None and now - self._shown_at < self.every and self.done < self.total:
            return
        self._show(self.line(name))
        self._shown_at = now

    def close(self, *, finished: bool = True) -> None:
        """Clear the terminal's line; elsewhere, once anything was shown, say how it ended."""
        took = time.monotonic() - self.started
        if self.tty and self._drawn:
            self._write("\r\x1b[2K", control=True)
            self._drawn = False
        elif not self.tty and self._shown_at is not None:
            ended = "done" if finished else "stopped"
            self._show(f"{self.doing}: {ended}, {self.done}/{self.total} in {took:.0f} s")

    def _show(self, text: str) -> None:
        if self.tty:
            self._write("\r\x1b[2K", control=True)
            self._write(text)
            self._drawn = True
        else:
            self._write(text + "\n")

    def _write(self, text: str, *, control: bool = False) -> None:
        try:
            if control:  # our own cursor codes: the only control sequences we let through
                getattr(self.out, "control", self.out.write)(text)
            else:
                self.out.write(safe_text(text))
            self.out.flush()
        except (OSError, ValueError):  # a closed or broken stream: the step goes on without it
            pass
