"""`marathon state RUN`: MarathonMemBench's state.json view of a run, rebuilt from its log,
with the live facts files — as edited during the run — written to RUN/facts/."""

from __future__ import annotations

import json
from pathlib import Path

from gateway.log.events import FactEdited
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import DEMO
from tests.marathon_cli import marathon
from tests.run_logs import cut_after


async def test_state_shows_where_the_run_is_and_writes_the_live_facts(tmp_path: Path) -> None:
    await run_spec(RunSpec("demo", DEMO, {"adapter": "reference"}), tmp_path)
    run = tmp_path / "demo"
    edits = [e for e in read_log(run / EVENTS_FILE).events if isinstance(e, FactEdited)]
    assert edits, "the demo edits facts"
    result = marathon("state", str(run), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    state = json.loads(result.stdout)
    assert state["status"] == "completed" and state["phase"]["index"] == state["phase"]["of"] == 5
    assert len(state["grades"]) == 15 and state["messages"][0]["purpose"] in ("fact", "line")
    latest = {(e.file, e.fact_id): e for e in edits}  # a fact edited twice holds the second text
    for edit in latest.values():
        written = (run / "facts" / f"{edit.file}.md").read_text(encoding="utf-8")
        assert f"{edit.fact_id} {edit.new}" in written
        assert all(
            f"{e.fact_id} {e.old}\n" not in written
            for e in edits
            if e.old and (e.file, e.fact_id) == (edit.file, edit.fact_id)
        )
    original = (DEMO / f"{edits[0].file}.md").read_text(encoding="utf-8")
    assert f"{edits[0].fact_id} {edits[0].new}" not in original  # the benchmark's file is untouched


async def test_state_of_an_unfinished_run_says_it_can_resume(tmp_path: Path) -> None:
    await run_spec(RunSpec("demo", DEMO, {"adapter": "reference"}), tmp_path)
    run = tmp_path / "demo"
    cut_after(run / EVENTS_FILE, "phase", 2)
    result = marathon("state", str(run), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "running or stopped (resumable)" in result.stdout and "phase 2 of 5" in result.stdout
