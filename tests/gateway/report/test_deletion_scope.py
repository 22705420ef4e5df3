"""Deletion within a declared scope (issue 30 item 3): the agent's state folder is searched for
what it was asked to forget, and the report says where it looked, when and what it found."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.loader import load_benchmark
from tests.conftest import REPO, BenchFactory


def _scoped(tmp_path: Path, scope: list[str]) -> Path:
    bench = tmp_path / "marathon-en"
    shutil.copytree(REPO / "benchmarks" / "marathon-en", bench)
    config = bench / "benchmark.json"
    text = config.read_text()
    config.write_text(text.replace("  name:", f"  deletion_scope: {json.dumps(scope)},\n  name:", 1))
    shutil.copytree(REPO / "benchmarks" / "distractors", tmp_path / "distractors")
    return bench


async def test_the_reference_agents_notes_still_hold_the_deleted_facts_and_the_report_says_where(
    tmp_path: Path,
) -> None:
    """The reference agent keeps what it was told in its notes and never removes it: asked to
    forget the ex-boyfriend, its answer may say nothing, but its memory folder still holds him."""
    bench = _scoped(tmp_path, ["memory/**"])
    outcome = await run_spec(RunSpec("d", bench, {"adapter": "reference"}), tmp_path / "rec")
    assert outcome.reason == "completed"
    report = (tmp_path / "rec" / "d" / "report.md").read_text()
    section = report.split("### Deletion within its declared scope")[1]
    assert "scope (benchmark.json `deletion_scope`): memory/**" in section
    assert "**still there**" in section and "(of deleted family:6." in section and "memory/" in section


async def test_an_agent_that_keeps_nothing_is_found_clean_and_a_bad_scope_is_refused(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    bench = _scoped(tmp_path, ["**"])
    agent = {"adapter": "reference", "memory": False}
    await run_spec(RunSpec("clean", bench, agent), tmp_path / "rec")
    section = (
        (tmp_path / "rec" / "clean" / "report.md")
        .read_text()
        .split("### Deletion within its declared scope")[1]
    )
    assert "nothing of the deleted facts or revoked canaries found in the scope" in section
    bad = make_benchmark(
        benchmark__json='{ name: "tiny", language: "en", chapters: ["ch1.md", "ch2.md"], deletion_scope: ["../x"] }'
    )
    with pytest.raises(BenchmarkErrors, match="deletion_scope"):
        load_benchmark(bad)
