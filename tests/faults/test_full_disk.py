"""A full disk is marathon's failure, never the agent's: on a real, small filesystem (a tmpfs
in a private mount namespace) a run that can't record its agent's model calls ends
`log_failed`, naming the disk and its free space, and no agent error is logged for the calls
the recorder refused; with room again, the same command finishes the run."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gateway.log.events import ErrorEvent, RunEnded
from gateway.log.runlog import read_log
from tests.marathon_cli import MARATHON_ENV


def _small_filesystems() -> bool:
    """Whether this machine lets us mount a tmpfs in a private mount namespace (root)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _small_filesystems(), reason="needs a private mount namespace (root)")


def test_a_disk_too_full_to_record_ends_the_run_log_failed_and_it_resumes(tmp_path: Path) -> None:
    demo = shlex.join([sys.executable, "-m", "gateway.cli", "demo"])
    recordings = tmp_path / "recordings"
    recordings.mkdir()
    # 2 MB: too small to start; 4.2 MB: room for a part of the run; 64 MB: room for the rest.
    # The mount is gone when the namespace ends: the log is copied out after each attempt.
    script = "\n".join(
        f"mount {'-o remount,' if n else '-t tmpfs -o '}size={size} tmpfs {recordings}\n"
        f"{demo} > {tmp_path}/out{n}.txt 2>&1 && echo 0 > {tmp_path}/rc{n} || echo $? > {tmp_path}/rc{n}\n"
        f"cp {recordings}/demo/events.msgpack {tmp_path}/log{n}.msgpack"
        for n, size in enumerate(["2m", "4300k", "64m"])
    )
    subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-ec", script],
        cwd=tmp_path, env=MARATHON_ENV, check=True, timeout=300,
    )  # fmt: skip
    outputs = [(tmp_path / f"out{n}.txt").read_text() for n in range(3)]
    codes = [int((tmp_path / f"rc{n}").read_text()) for n in range(3)]
    logs = [read_log(tmp_path / f"log{n}.msgpack") for n in range(3)]

    for n in (0, 1):  # the two failures: ours, named, and no agent blamed
        assert codes[n] == 1, outputs[n]
        assert "Traceback" not in outputs[n]
        assert f"the disk holding the run log {recordings}/demo/events.msgpack has" in outputs[n]
        assert "bytes free; recording an LLM answer needs 4,194,304" in outputs[n]
        assert "agent_failed" not in outputs[n] and "marathon probe" not in outputs[n]
        ended = [e for e in logs[n].events if isinstance(e, RunEnded)]
        assert ended[-1].reason == "log_failed" and "bytes free" in ended[-1].detail
        assert not [e for e in logs[n].events if isinstance(e, ErrorEvent) and e.source == "agent"]
    assert len(logs[0].events) < 5  # could not start: the agent was never sent a message
    assert len(logs[1].events) > 50  # stopped part-way, all it had recorded kept

    assert codes[2] == 0, outputs[2]
    assert "resuming the unfinished demo run" in outputs[2]
    assert "completed: mean 8.67/10, graded 15/15, coverage complete" in outputs[2]
