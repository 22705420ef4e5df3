"""What reading a huge run costs: peak memory and time of `verify`, `autopsy`, `state`,
`inspect` and `report` on a run log of many records and on a run whose state folder holds many
large files (issue 59: verify on a 1M-record log was killed after 485 s at 6.9 GB; verify and
autopsy on 300 sparse 8 MiB files, killed at 300 s and 2.5 GB).

    .venv/bin/python bench/reading_bounds.py [--records 1000000] [--files 300] [--timeout 600] [--cases log,state]

Builds, in a temporary folder: the offline demo's run, then (1) a copy of it whose log holds
`--records` more said/replied records before its exam, and (2) a copy whose agent state folder
holds `--files` sparse 8 MiB memory files. Each command runs as its own process; its peak RSS
(wait4) and wall time are printed side by side with its exit code (verify: 0 when every
invariant held; a log past the readers' bound, `MARATHON_MAX_LOG_RECORDS`, is refused by name:
1; on the state case verify names report.md stale — the bench changed the state folder after the
run wrote it). The figures of 2026-12-07 are in docs/security.md. Figures only; nothing here is
asserted. A command over `--timeout` is killed and shown as such.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.log.events import Asked, Replied, Said  # noqa: E402
from gateway.log.runlog import EVENTS_FILE, RunLogWriter, read_log  # noqa: E402

FILLER = "I walked along the river this morning and the weather was fine, " * 4  # ~260 bytes


def _tag(n: int) -> str:
    """A word unique to record n, of letters only: no figure a question's value could match."""
    word = ""
    while True:
        n, r = divmod(n, 26)
        word += chr(97 + r)
        if not n:
            return word


def marathon(*args: str, cwd: Path, timeout: float) -> tuple[int | str, float, float]:
    """(exit code or "killed", peak RSS in MiB, seconds) of one `marathon` command."""
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, time.monotonic() - start
        if time.monotonic() > deadline:
            proc.kill()
            _, _, usage = os.wait4(proc.pid, 0)
            return "killed", usage.ru_maxrss / 1024, time.monotonic() - start
        time.sleep(0.05)


def big_log(demo: Path, target: Path, records: int) -> int:
    """A copy of the demo run whose log holds `records` more said/replied records before its
    first question; returns the log's size in bytes."""
    shutil.copytree(demo, target)
    log = read_log(demo / EVENTS_FILE)
    (target / EVENTS_FILE).unlink()
    for stale in ("report.md", "report.html"):
        (target / stale).unlink(missing_ok=True)
    writer = RunLogWriter.create(target / EVENTS_FILE, log.header)
    inserted = False
    for event in log.events:
        if isinstance(event, Asked) and not inserted:
            for n in range(records // 2):
                writer.append(Said(text=f"{_tag(n)}: {FILLER}"))
                writer.append(Replied(text=f"Noted, {_tag(n)}."))
            inserted = True
        writer.append(dataclasses.replace(event, seq=0))
    writer.close()
    return (target / EVENTS_FILE).stat().st_size


def big_state(demo: Path, target: Path, files: int) -> None:
    """A copy of the demo run whose agent state folder holds `files` sparse 8 MiB memory files."""
    shutil.copytree(demo, target)
    memory = target / "agent-state" / "memory"
    memory.mkdir(parents=True, exist_ok=True)
    for n in range(files):
        with open(memory / f"note{n:03}.md", "wb") as f:
            f.truncate(8 << 20)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--cases", default="log,state", help="which of log, state to measure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        code, _, _ = marathon("demo", "--recordings", str(root / "demo"), cwd=root, timeout=args.timeout)
        assert code == 0, "the demo did not run"
        demo = root / "demo" / "demo"
        size = big_log(demo, root / "log" / "demo", args.records)  # the folder its header names
        big_state(demo, root / "state" / "demo", args.files)
        print(f"log: {args.records:,} more records, {size / 2**20:,.0f} MiB; state: {args.files} sparse 8 MiB files")
        print(f"{'command':<34} {'case':<6} {'exit':>7} {'peak MiB':>9} {'seconds':>8}")
        for case in args.cases.split(","):
            folder = root / case
            # report first: it writes the report.md verify then compares with what the log renders
            for command in (("report", "."), ("verify", "."), ("autopsy", "demo"), ("state", "demo"), ("inspect", "demo")):
                code, peak, seconds = marathon(*command, cwd=folder, timeout=args.timeout)
                print(f"{' '.join(command):<34} {case:<6} {code!s:>7} {peak:>9,.0f} {seconds:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
