"""The `marathon` command's entry point, kept light: Ctrl-C in the first second — while Python
still imports the command's modules — ends as a Ctrl-C later does, with the command's own
message and exit 130, never a `KeyboardInterrupt` traceback.

What a caller may rely on: `main` returns the command's exit code; what a stopped command
left behind is worded once (`stopping.interrupted_message`); when stdout's reader goes away,
the rest goes to stderr (`StdoutOrStderr`).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from gateway.cli.stopping import RUNS, interrupted_message


class StdoutOrStderr(io.TextIOBase):
    """Standard output that, once its reader is gone (`marathon run … | tee log`, then Ctrl-C:
    tee dies with the run, and the summary hit a closed pipe — exit 141, nothing said), goes on
    to standard error: a closed stdout never costs the summary."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err, self.closed_pipe = out, err, False

    def write(self, text: str) -> int:
        if not self.closed_pipe:
            try:
                written = self.out.write(text)
                if "\n" in text:
                    self.out.flush()
                return written
            except BrokenPipeError:
                self._lost()
        return self.err.write(text)

    def flush(self) -> None:
        if not self.closed_pipe:
            try:
                self.out.flush()
            except BrokenPipeError:
                self._lost()
        self.err.flush()

    def _lost(self) -> None:
        """The reader is gone: its file descriptor points at /dev/null from now on, so that
        Python's own flush at exit fails no more (it would exit 120)."""
        self.closed_pipe = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.out.fileno())
            os.close(devnull)

    def isatty(self) -> bool:
        return not self.closed_pipe and self.out.isatty()

    def fileno(self) -> int:
        return self.out.fileno()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in args if not a.startswith("-")), None)
    if argv is None and command in RUNS and not isinstance(sys.stdout, StdoutOrStderr):
        sys.stdout = StdoutOrStderr(sys.stdout, sys.stderr)  # (`inspect | head` stays quiet)
    try:
        from gateway.cli.main import main as run_command  # the heavy imports

        return run_command(args)
    except KeyboardInterrupt:  # before the command's own handling began (or after it ended)
        print(f"\n{interrupted_message(command, '--fresh' in args)}", file=sys.stderr)
        return 130
