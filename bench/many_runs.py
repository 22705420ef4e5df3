"""10,000 runs in one recordings folder: the viewer's first and later `/api/runs`, and
`marathon report`'s time and peak memory. Figures only.

Usage: `.venv/bin/python bench/many_runs.py [RUNS] [--keep DIR]` (`--keep`: make the runs
there once, and measure them again on later calls). The runs are copies of one
real `marathon demo` run (320 KB of log, 15 questions), each with its own run id in its
header. Targets (issue 31): first `/api/runs` ≤ 2 s, later ones ≤ 200 ms, `report` ≤ 60 s
and ≤ 1 GiB peak RSS.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.log.frames import frame, is_framed, records  # noqa: E402
from gateway.log.runlog import EVENTS_FILE, pack_record  # noqa: E402
from gateway.report.run_cards import INDEX_FILE as RUNS_INDEX  # noqa: E402
from gateway.viewer.index import index_path  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
MARATHON = [sys.executable, "-m", "gateway.cli"]


def make_runs(folder: Path, count: int) -> int:
    """`count` copies of a real demo run under `folder`/recordings; the bytes of one log."""
    subprocess.run([*MARATHON, "demo"], cwd=folder, env=ENV, check=True, capture_output=True)
    recordings = folder / "recordings"
    data = (recordings / "demo" / EVENTS_FILE).read_bytes()
    framed = is_framed(data)
    end, header = next(records(data, 0, framed))
    rest = data[end:]
    shutil.rmtree(recordings)
    for n in range(count):
        run_id = f"demo-{n:05d}"
        (recordings / run_id).mkdir(parents=True)
        first = pack_record({**header, "run_id": run_id, "created": header["created"] + n})
        (recordings / run_id / EVENTS_FILE).write_bytes((frame(first) if framed else first) + rest)
    return len(data)


def measured(command: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MiB) of the child, and its last output line."""
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    lines = [ln for ln in output.splitlines() if ln.strip()]
    return time.perf_counter() - started, usage.ru_maxrss / 1024, lines[-1] if lines else ""


async def viewer_calls(recordings: Path, later: int = 5) -> str:
    """A freshly started viewer's `/api/runs`: the first answer, polls (every 2 s, as the
    page does) until no run is pending, then `later` more answers."""
    viewer = await asyncio.create_subprocess_exec(
        *MARATHON, "view", "--port", "0", str(recordings), env=ENV,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert viewer.stdout is not None
    url = ""
    while not url:
        line = (await viewer.stdout.readline()).decode()
        if not line:
            raise SystemExit("the viewer ended before saying its address")
        if found := re.search(r"http://127\.0\.0\.1:\d+", line):
            url = found.group(0)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=600)) as http:

            async def call() -> tuple[float, int, int]:
                started = time.perf_counter()
                async with http.get(f"{url}/api/runs") as resp:
                    body = await resp.json()
                return time.perf_counter() - started, len(body["runs"]), body.get("pending", 0)

            began = time.perf_counter()
            first, listed, pending = await call()
            said = f"first answer {first:.2f} s ({listed:,} listed, {pending:,} pending)"
            polls, slowest = 1, first
            while pending:
                await asyncio.sleep(2)
                took, listed, pending = await call()
                polls, slowest = polls + 1, max(slowest, took)
            if polls > 1:
                said += (
                    f"; all listed after {polls} polls, {time.perf_counter() - began:.0f} s "
                    f"(slowest answer {slowest:.2f} s)"
                )
            times = []
            for _ in range(later):
                await asyncio.sleep(0.2)
                times.append((await call())[0])
            return said + f"; later answers {statistics.median(times) * 1000:.0f} ms (median of {later})"
    finally:
        viewer.terminate()
        await viewer.wait()


def main() -> None:
    args = sys.argv[1:]
    keep = None
    if "--keep" in args:
        keep = Path(args[args.index("--keep") + 1])
        del args[args.index("--keep") : args.index("--keep") + 2]
    count = int(args[0]) if args else 10_000
    folder = keep or Path(tempfile.mkdtemp(prefix="many-runs-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if not (folder / "recordings" / f"demo-{count - 1:05d}").exists():
            started = time.perf_counter()
            size = make_runs(folder, count)
            print(f"{count:,} runs of {size / 1024:.0f} KiB made in {time.perf_counter() - started:.0f} s")
        recordings = folder / "recordings"
        index_path(recordings.resolve()).unlink(missing_ok=True)
        for attempt in ("a new viewer, no index yet", "a new viewer, index written by the last"):
            print(f"viewer ({attempt}): {asyncio.run(viewer_calls(recordings))}")
        (recordings / RUNS_INDEX).unlink(missing_ok=True)
        for attempt in ("no card index yet", "the index the first left"):
            seconds, peak, last = measured([*MARATHON, "report", str(recordings)], folder)
            print(f"marathon report ({attempt}): {seconds:.1f} s, peak RSS {peak:.0f} MiB — {last[:100]}")
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
