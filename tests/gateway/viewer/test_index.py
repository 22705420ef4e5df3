"""The runs list of a big recordings folder: answers bounded in time, ended runs indexed in
the user's cache by their log's size and time, read again only when the log changed."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from gateway.log.runlog import EVENTS_FILE
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from gateway.viewer.index import Recordings, index_path
from tests.conftest import DEMO


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    recordings = tmp_path_factory.mktemp("index") / "recordings"
    spec = RunSpec("demo", DEMO, {"adapter": "reference"}, {"driver": "scripted"})
    asyncio.run(run_spec(spec, recordings))
    return recordings / "demo" / EVENTS_FILE


def copies(demo_log: Path, recordings: Path, count: int) -> list[str]:
    ids = [f"run{n:02d}" for n in range(count)]
    for run_id in ids:
        (recordings / run_id).mkdir(parents=True)
        shutil.copy(demo_log, recordings / run_id / EVENTS_FILE)
    return ids


async def test_each_answer_reads_for_its_budget_and_the_next_goes_on(demo_log: Path, tmp_path: Path) -> None:
    """With no time to spare each answer reads one log: the list fills in poll by poll, and a
    new viewer of the folder lists every run at once, reading no log."""
    recordings = tmp_path / "recordings"
    ids = copies(demo_log, recordings, 6)
    before = sorted(p.name for p in recordings.rglob("*"))
    store = Recordings(recordings)
    seen = []
    for _ in ids:
        summaries, pending = await store.listing(budget=0.0)
        seen.append((len(summaries), pending))
    assert seen == [(n, 6 - n) for n in range(1, 7)]
    assert [s["graded"] for s in summaries] == [15] * 6 and {s["status"] for s in summaries} == {"finished"}
    assert not store.watches  # ended runs live in the index, not as followed logs

    again = Recordings(recordings)
    summaries, pending = await again.listing(budget=0.0)
    assert pending == 0 and sorted(s["id"] for s in summaries) == ids
    assert not again.watches and not again.open  # no log was read
    # the index is the user's cache; the recordings folder the viewer only reads
    assert index_path(recordings.resolve()).is_relative_to(tmp_path / "user-cache")
    assert sorted(p.name for p in recordings.rglob("*")) == before


async def test_a_log_that_changed_is_read_again_and_a_removed_run_leaves_the_index(
    demo_log: Path, tmp_path: Path
) -> None:
    recordings = tmp_path / "recordings"
    copies(demo_log, recordings, 3)
    await Recordings(recordings).listing()
    data = demo_log.read_bytes()
    (recordings / "run01" / EVENTS_FILE).write_bytes(data[: len(data) // 2])  # e.g. a run started over
    shutil.rmtree(recordings / "run02")
    store = Recordings(recordings)
    summaries, _ = await store.listing()
    by_id = {s["id"]: s for s in summaries}
    assert set(by_id) == {"run00", "run01"}
    assert by_id["run00"]["graded"] == 15 and by_id["run01"]["status"] == "resumable"
    assert by_id["run01"]["graded"] < 15
    kept = json.loads(index_path(recordings.resolve()).read_text())
    assert set(kept["runs"]) == {"run00"}  # an unfinished run is never indexed: its status can change


@pytest.mark.parametrize(
    "entry",
    [
        [0, 0, {"id": "run00", "graded": 99}],  # well-shaped, but the log is not that size
        [True, 1, {"id": "run00", "graded": 99}],  # a size that is a bool
        [0, 0, {"id": "someone-else", "graded": 99}],  # a summary of another run
        [0, 0, "not a summary"],
        "not an entry",
    ],
)
async def test_an_index_entry_of_the_wrong_shape_or_stamp_is_not_believed(
    demo_log: Path, tmp_path: Path, entry: object
) -> None:
    recordings = tmp_path / "recordings"
    copies(demo_log, recordings, 1)
    path = index_path(recordings.resolve())
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": 1, "root": str(recordings.resolve()), "runs": {"run00": entry}}))
    (summary,), pending = await Recordings(recordings).listing()
    assert pending == 0 and summary["graded"] == 15  # read from the log, not taken from the file
