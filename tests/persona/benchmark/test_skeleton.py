"""`marathon new DIR`: a skeleton a new user can start from — it passes `check`, speaks its
language, and a scripted run of it grades every question."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.log.events import Evaluation, Said
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.loader import load_benchmark
from persona.benchmark.skeleton import skeleton_languages
from tests.marathon_cli import marathon


@pytest.mark.parametrize("language", ["en", "ru"])
async def test_a_new_benchmark_checks_clean_and_runs_scripted(tmp_path: Path, language: str) -> None:
    folder = tmp_path / "my-bench"
    created = marathon("new", str(folder), "--language", language, cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    checked = marathon("check", str(folder), cwd=tmp_path)
    assert checked.returncode == 0 and f"language: {language} (declared" in checked.stdout, checked.stdout
    bench = load_benchmark(folder)
    assert bench.name == "my-bench" and not bench.warnings and not [p for p in bench.phases if p.prose_only]
    await run_spec(RunSpec("new", folder, {"adapter": "reference"}), tmp_path / "rec")
    events = read_log(tmp_path / "rec" / "new" / EVENTS_FILE).events
    assert len([e for e in events if isinstance(e, Evaluation)]) == len(bench.questions) == 4
    if language == "ru":
        assert not [e.text for e in events if isinstance(e, Said) and "Some things" in e.text]


def test_new_never_writes_into_a_folder_that_holds_files(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("keep me")
    result = marathon("new", str(tmp_path / "mine"), cwd=tmp_path)
    assert result.returncode == 2 and "not an empty folder" in result.stderr
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.md"]
    assert skeleton_languages() == ["en", "ru"]
