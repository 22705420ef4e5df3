"""A checkpoint's archive holds the state its log claims: the archive hashes as the folder did,
and a folder that changes while it is archived is archived again or refused, never logged."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapters.state_folder import folder_hash
from gateway.run.checkpoints import CheckpointError, archive_path, archive_state, archive_state_hash


def _state(root: Path) -> Path:
    state = root / "state"
    (state / "memory" / "deep").mkdir(parents=True)
    (state / "MEMORY.md").write_text("My cat is called Miso\n")
    (state / "memory" / "deep" / "notes.md").write_bytes(os.urandom(3000))
    os.link(state / "MEMORY.md", state / "memory" / "again.md")  # a second name of one file
    (state / "current").symlink_to("memory/deep/notes.md")
    (state / "empty").mkdir()
    return state


def test_an_archive_hashes_as_the_folder_it_was_made_from(tmp_path: Path) -> None:
    state = _state(tmp_path)
    saved = archive_state(state, tmp_path / "run", "exam")
    assert saved.state_hash == folder_hash(state)
    assert archive_state_hash(archive_path(tmp_path / "run", "exam")) == saved.state_hash
    (state / "MEMORY.md").write_text("My cat is called Tom\n")  # another state: another hash
    other = archive_state(state, tmp_path / "run", "later")
    assert archive_state_hash(archive_path(tmp_path / "run", "later")) == other.state_hash != saved.state_hash


def test_a_folder_written_while_it_is_archived_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    """Issue 59: a worker of the agent that outlived its stop wrote the state folder during the
    checkpoint; the log claimed one state and the archive held another (2 of 3 tries). Here a
    process appends to the folder without pause while 8 MiB are hashed and archived."""
    state = _state(tmp_path)
    (state / "big.bin").write_bytes(os.urandom(8 << 20))  # every reading takes a while
    appender = "import sys\nwith open(sys.argv[1], 'a') as f:\n    while True:\n        f.write('x' * 64); f.flush()\n"
    worker = subprocess.Popen([sys.executable, "-c", appender, str(state / "worker.log")])
    try:
        deadline = time.monotonic() + 10
        while not (state / "worker.log").exists() or (state / "worker.log").stat().st_size == 0:
            assert time.monotonic() < deadline, "the appender never wrote"
            time.sleep(0.01)
        with pytest.raises(CheckpointError, match="changed while it was archived, 3 times") as refused:
            archive_state(state, tmp_path / "run", "exam")
        assert f"pid {worker.pid} (python" in str(refused.value)  # who still writes it, named
    finally:
        worker.kill()
        worker.wait()
    assert not list((tmp_path / "run").rglob("*.tar.gz*"))  # no archive, no partial one


def test_a_path_that_changed_kind_between_the_walk_and_the_archive_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link the walk saw, a file with content by the time it is archived: archived again
    from a new reading, never a raw `ValueError` with a partial archive left behind."""
    import gateway.run.checkpoints as checkpoints
    from adapters.state_folder import Entry, walk_state

    state = _state(tmp_path)
    walks = []

    def walk_once_stale(folder: Path, rules: object = None) -> object:
        walks.append(folder)
        found = list(walk_state(folder))
        if len(walks) == 1:  # the first reading: "current" was still a link
            found = [Entry(e.rel, "link", e.path, target="x") if e.rel == "MEMORY.md" else e for e in found]
        return iter(found)

    monkeypatch.setattr(checkpoints, "walk_state", walk_once_stale)
    saved = archive_state(state, tmp_path / "run", "exam")
    assert len(walks) == 2 and saved.state_hash == folder_hash(state)
    assert not list((tmp_path / "run").rglob("*.partial"))
