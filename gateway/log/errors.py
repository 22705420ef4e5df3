"""What reading or writing a run log can fail with (re-exported by gateway/log/runlog.py)."""

from __future__ import annotations


class RunLogWriteError(OSError):
    """The log could not be written (disk full, permissions): the run must stop."""


class RunLogFormatError(ValueError):
    """The file is not a run log, or was written by a newer marathonbench."""


class RunLogDamaged(RunLogFormatError):
    """Damage inside the log with intact records after it: resuming would silently drop them."""


class RunLogTooLarge(RunLogFormatError):
    """A log holding more records than a reader takes: refused, named, before it fills memory."""
