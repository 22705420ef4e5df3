"""A checkpoint's archive holds the state its log claims: the archive hashes as the folder did,
and a folder that changes while it is archived is archived again or refused, never logged."""

from __future__ import annotations

import os
import threading
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
    checkpoint; the log claimed one state and the archive held another (2 of 3 tries)."""
    state = _state(tmp_path)
    stop = threading.Event()

    def append() -> None:
        with open(state / "worker.log", "a") as f:
            while not stop.is_set():
                f.write("x" * 512)
                f.flush()

    worker = threading.Thread(target=append)
    worker.start()
    try:
        with pytest.raises(CheckpointError, match="changed while it was archived, 3 times"):
            archive_state(state, tmp_path / "run", "exam")
    finally:
        stop.set()
        worker.join()
    assert not list((tmp_path / "run").rglob("*.tar.gz*"))  # no archive, no partial one
