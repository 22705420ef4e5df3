"""What `marathon view` holds for a folder of many runs: K copies of one recorded demo run (the
reference agent, its LLM traffic recorded, so the logs carry exchanges and blobs), then, side
by side in one run: the runs list (every run's counters only) and the same K runs each opened
as a run page (transcript, chart series, LLM exchanges and blobs — what the list used to hold
per run). Memory is what the viewer's watches keep (tracemalloc), not the process peak.
Usage: `.venv/bin/python bench/viewer_many_runs.py [K]` (default 200).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.log.runlog import EVENTS_FILE
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from gateway.viewer.index import OPEN_RUNS, Recordings
from gateway.viewer.watch import RunWatch

DEMO = Path(__file__).resolve().parents[1] / "benchmarks" / "demo-en"


async def watch(watch_all: bool, recordings: Path, ids: list[str]) -> object:
    """List the runs, or open every one of them as a run page; what the viewer then keeps."""
    if watch_all:
        pages = [RunWatch(recordings / run_id, detailed=True) for run_id in ids]
        for page in pages:
            await page.refresh()
        return pages
    return await Recordings(recordings).all()


async def held(watch_all: bool, recordings: Path, ids: list[str]) -> tuple[float, float]:
    """(seconds, untraced; MiB kept, traced in a second pass)."""
    started = time.perf_counter()
    await watch(watch_all, recordings, ids)
    seconds = time.perf_counter() - started
    tracemalloc.start()
    kept = await watch(watch_all, recordings, ids)
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return seconds, size / 2**20


async def main(k: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        recordings = Path(tmp)
        spec = RunSpec("r0", DEMO, {"adapter": "reference", "context_tokens": 400}, {"driver": "scripted"})
        await run_spec(spec, recordings)
        log = recordings / "r0" / EVENTS_FILE
        ids = [f"r{n}" for n in range(k)]
        for run_id in ids[1:]:
            (recordings / run_id).mkdir()
            shutil.copy(log, recordings / run_id / EVENTS_FILE)
        listing = await held(False, recordings, ids)
        pages = await held(True, recordings, ids)
        size = log.stat().st_size
    print(f"{k} runs, each a demo run log of {size / 1e3:.0f} kB ({k * size / 1e6:.0f} MB in all)")
    print(f"runs list (counters per run)          {listing[0]:6.2f} s   {listing[1]:7.1f} MiB kept")
    print(f"every run opened as a page (details)  {pages[0]:6.2f} s   {pages[1]:7.1f} MiB kept")
    print(
        f"the list keeps {listing[1] / pages[1]:.1%} of what {k} open pages keep; "
        f"only the last {OPEN_RUNS} opened pages stay in memory (gateway.viewer.app.OPEN_RUNS)"
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
