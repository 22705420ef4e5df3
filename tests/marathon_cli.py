"""The `marathon` command as a user starts it, for tests: a real process in a given folder,
run to its end (`marathon`) or left running (`spawn_marathon`); and how many records a run
log holds so far (`count_records`), to wait for a run to reach a point."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from gateway.log.runlog import iter_records, read_log
from tests.conftest import REPO

MARATHON_ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def marathon(
    *args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**MARATHON_ENV, **(env or {})},
    )


def spawn_marathon(
    *args: str,
    cwd: Path,
    stdout: int = subprocess.PIPE,
    stdin: int | None = None,
    sigint_ignored: bool = False,
) -> subprocess.Popen[str]:
    """`marathon ARGS` started and left running (to signal, kill or watch); stderr piped.
    `sigint_ignored`: started as a script's background job is (`marathon run cfg &`, nohup)."""

    def ignore_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", *args],
        cwd=cwd,
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=MARATHON_ENV,
        preexec_fn=ignore_sigint if sigint_ignored else None,
    )


def count_records(path: Path) -> int:
    try:
        return sum(1 for _ in iter_records(path))
    except FileNotFoundError:
        return 0


def explain(result: subprocess.CompletedProcess[str], log_path: Path, last: int = 20) -> str:
    """What a failed assertion on a `marathon` run should show: its whole output and the last
    events of its log (a flaky failure is otherwise impossible to tell apart)."""
    lines = [f"exit code {result.returncode}", "--- stdout", result.stdout, "--- stderr", result.stderr]
    try:
        events = read_log(log_path).events[-last:]
    except (OSError, ValueError) as exc:
        lines.append(f"--- the log can't be read: {exc}")
    else:
        lines.append(f"--- the last {len(events)} events of {log_path}")
        lines += [f"{e.seq:>6} {e.type:<12} {str(e.to_record())[:160]}" for e in events]
    return "\n".join(lines)
