"""One teaching per fork group (gateway/run/fork_group.py): `--fresh` clears the forks of the
earlier teaching before anything runs, a fork of another teaching is refused on resume, and a
group that mixes teachings shows no figures."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from gateway.log.events import CheckpointSaved
from gateway.log.lock import RunLock
from gateway.log.runlog import EVENTS_FILE, RunLogWriter, read_header, read_log
from gateway.run.config import load_config
from gateway.run.runner import run_spec
from tests.conftest import REPO
from tests.marathon_cli import marathon


@pytest.fixture(scope="module")
def taught(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A teaching run `m` and two sequential forks of its checkpoint, as `marathon run` leaves them."""
    root = tmp_path_factory.mktemp("forkgroup")
    (root / "config.jsonc").write_text(
        f'{{ runs: [ {{ id: "m", benchmark: "{REPO / "benchmarks" / "demo-en"}", agent: {{ adapter: "reference" }}, '
        'exam: "sequential", rollouts: 2 } ] }'
    )
    result = marathon("run", "config.jsonc", cwd=root)
    assert result.returncode == 0, result.stderr
    return root


def _copy(taught: Path, tmp_path: Path) -> Path:
    shutil.copytree(taught, tmp_path / "w", symlinks=True)
    return tmp_path / "w"


def _checkpoint(run_dir: Path) -> CheckpointSaved:
    (saved,) = [e for e in read_log(run_dir / EVENTS_FILE).events if isinstance(e, CheckpointSaved)]
    return saved


def _parents(recordings: Path) -> dict[str, str]:
    return {
        d.name: str(read_header(d / EVENTS_FILE).parent.get("archive_sha256"))
        for d in sorted(recordings.iterdir())
        if d.name.startswith("m.")
    }


def _fresh_while_written(work: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    """`marathon run --fresh` while another process holds `folder`'s lock (writes that run)."""
    lock = RunLock.acquire(folder)
    try:
        return marathon("run", "config.jsonc", "--fresh", cwd=work)
    finally:
        lock.release()


def _teach_again_as_before(work: Path) -> None:
    """Teach `m` again without clearing its forks — what an interrupted `--fresh` left before
    issue 59 (the parent taught anew, its forks from the earlier teaching still there)."""
    (spec,) = [s for s in load_config(work / "config.jsonc").runs if s.id == "m"]
    outcome = asyncio.run(run_spec(spec, work / "recordings", fresh=True))
    assert outcome.reason == "completed"


def test_fresh_clears_every_fork_of_the_earlier_teaching_before_it_runs(taught: Path, tmp_path: Path) -> None:
    work = _copy(taught, tmp_path)
    rec = work / "recordings"
    shutil.copytree(rec / "m.seq.r1", rec / "m.seq.r9")  # a fork of an earlier, larger `rollouts`
    result = marathon("run", "config.jsonc", "--fresh", cwd=work)
    assert result.returncode == 0, result.stderr
    assert "[m] --fresh: cleared 3 fork(s) of its earlier teaching" in result.stdout
    assert not (rec / "m.seq.r9").exists()
    now = _checkpoint(rec / "m").archive_sha256
    assert _parents(rec) == {"m.seq.r1": now, "m.seq.r2": now}  # every fork of the new teaching


def test_fresh_refuses_before_anything_runs_when_a_fork_to_clear_is_being_written(
    taught: Path, tmp_path: Path
) -> None:
    work = _copy(taught, tmp_path)
    rec = work / "recordings"
    before = _parents(rec), _checkpoint(rec / "m").archive_sha256
    result = _fresh_while_written(work, rec / "m.seq.r2")
    assert result.returncode == 1
    assert "--fresh would clear the fork m.seq.r2 of an earlier teaching" in result.stderr
    assert (_parents(rec), _checkpoint(rec / "m").archive_sha256) == before  # nothing cleared, nothing run


def test_a_fork_of_an_earlier_teaching_is_refused_on_resume_though_it_ended(taught: Path, tmp_path: Path) -> None:
    """Issue 59: resumed after the parent was taught again, the ended forks of the earlier
    teaching were kept ("already ended") beside the new ones, reported as one group."""
    work = _copy(taught, tmp_path)
    _teach_again_as_before(work)
    result = marathon("run", "config.jsonc", cwd=work)
    assert result.returncode == 1
    for fork in ("m.seq.r1", "m.seq.r2"):
        assert f"error: [{fork}]" in result.stderr
    assert "(m was taught again): its answers are of another teaching" in result.stderr
    assert "use --fresh to run it again" in result.stderr


def test_a_group_of_forks_from_two_teachings_shows_no_figures_and_says_why(taught: Path, tmp_path: Path) -> None:
    work = _copy(taught, tmp_path)
    rec = work / "recordings"
    log = read_log(rec / "m.seq.r2" / EVENTS_FILE, blobs_in_memory=True)  # as if taught from another state
    parent = {**log.header.parent, "state_hash": "f" * 64, "archive_sha256": "e" * 64}
    writer = RunLogWriter.create(rec / "m.seq.r2" / EVENTS_FILE, dataclasses.replace(log.header, parent=parent))
    for event in log.events:
        writer.append(event)
    writer.close()
    result = marathon("report", "recordings", cwd=work)
    matrix = (rec / "matrix.md").read_text()
    assert "**Not shown: these forks started from 2 different teachings of m**" in matrix, result.stdout
    assert "pass^k" not in matrix.split("Exams forked from m")[1].split("\n## ")[0]


def test_fresh_clears_nothing_while_the_run_it_would_teach_again_is_being_written(
    taught: Path, tmp_path: Path
) -> None:
    """Its forks are its current teaching's while another marathon writes it: none is cleared."""
    work = _copy(taught, tmp_path)
    rec = work / "recordings"
    before = _parents(rec)
    result = _fresh_while_written(work, rec / "m")
    assert result.returncode == 1
    assert "--fresh would teach m again and clear its forks, but" in result.stderr
    assert _parents(rec) == before
