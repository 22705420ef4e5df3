"""Reading an agent's memory files is bounded (gateway/report/scoped_files.py, memory_state.py):
whatever the state folder holds, the reading keeps at most a folder's budget of text, reads a
binary file's first bytes only, and lists every file it did not read with the reason."""

from __future__ import annotations

import tarfile
import tracemalloc
from pathlib import Path

import pytest

from gateway.report import scoped_files
from gateway.report.memory_state import MemoryState
from gateway.report.scoped_files import read_scoped


def test_three_hundred_sparse_8_mib_files_cost_kilobytes_not_gigabytes(tmp_path: Path) -> None:
    """Issue 59: verify and the autopsy on a state folder of 300 sparse 8 MiB files were killed
    at 2.5 GB: each file was read whole to learn it was binary."""
    memory = tmp_path / "memory"
    memory.mkdir()
    for n in range(300):
        with open(memory / f"note{n:03}.md", "wb") as f:
            f.truncate(8 << 20)
    (memory / "MEMORY.md").write_text("My cat is called Miso\n")
    tracemalloc.start()
    try:
        found = read_scoped(tmp_path, ["memory/*"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
    assert found.texts == {"memory/MEMORY.md": "My cat is called Miso\n"}
    assert len(found.not_read) == 300 and all(line.endswith("(not text)") for line in found.not_read)


def test_text_past_a_folders_budget_is_listed_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scoped_files, "MAX_READ_BYTES", 10_000)
    for n in range(5):
        (tmp_path / f"note{n}.md").write_text(f"note {n}\n" + "x" * 4000)
    found = read_scoped(tmp_path, ["*.md"])
    assert sorted(found.texts) == ["note0.md", "note1.md"]
    assert found.not_read == [f"note{n}.md (past the 0.00953674 MiB read of one folder)" for n in (2, 3, 4)]


def test_an_archived_folder_is_read_within_the_same_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scoped_files, "MAX_READ_BYTES", 10_000)
    state = tmp_path / "state" / "memory"
    state.mkdir(parents=True)
    with open(state / "big.md", "wb") as f:
        f.truncate(8 << 20)
    for n in range(3):
        (state / f"note{n}.md").write_text("x" * 4000 + f" Miso {n}")
    archive = tmp_path / "exam.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "state", arcname=".", recursive=True)
    with tarfile.open(archive, "r:gz") as tar:
        names = [m.name for m in tar if m.isfile()]
    assert names  # members are "./memory/…": name the state's files as the archive does
    held = MemoryState.in_checkpoint({"adapter": "reference", "memory_files": ["./memory/*"]}, archive)
    assert held.files is not None
    assert sorted(held.files.texts) == ["./memory/note0.md", "./memory/note1.md"]
    assert sorted(held.files.not_read) == [
        "./memory/big.md (not text)",
        "./memory/note2.md (past the 0.00953674 MiB read of one folder)",
    ]
    assert held.holds("Miso 2") is None  # not found, while a file went unread: unsure, not "not held"
