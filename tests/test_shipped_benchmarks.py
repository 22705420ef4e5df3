"""Every shipped benchmark passes `marathon check` and completes a scripted run against the
reference agent with its coverage audit complete."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.report.summary import summarize
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.loader import load_benchmark
from tests.conftest import REPO
from tests.marathon_cli import marathon

SHIPPED = sorted(p.parent for p in (REPO / "benchmarks").glob("*/benchmark.json"))
TAGS = {
    "single",
    "aggregation",
    "update",
    "history",
    "correction",
    "conflict",
    "temporal",
    "abstain",
    "deleted",
    "preference",
}


def test_the_shipped_benchmarks_are_there() -> None:
    assert {p.name for p in SHIPPED} >= {"demo-en", "marathon-en", "marathon-ru"}


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_check_passes(folder: Path) -> None:
    result = marathon("check", str(folder), cwd=REPO)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", ["marathon-en", "marathon-ru"])
def test_the_marathons_have_the_promised_shape(name: str) -> None:
    bench = load_benchmark(REPO / "benchmarks" / name)
    assert len(bench.facts) >= 6 and sum(len(f.facts) for f in bench.facts.values()) >= 190
    assert len(bench.chapters) >= 8 and len(bench.questions) >= 60
    assert {t for q in bench.questions for t in q.tags} >= TAGS
    exam = [p for p in bench.phases if p.questions and "new_session" in p.actions]
    assert exam, "a new session before the exam"
    assert bench.settings["canaries"]


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
async def test_a_scripted_run_completes_with_full_coverage(folder: Path, tmp_path: Path) -> None:
    outcome = await run_spec(RunSpec("r", folder, {"adapter": "reference"}), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    summary = summarize(read_log(tmp_path / "r" / EVENTS_FILE), load_benchmark(folder))
    assert summary.coverage_complete and len(summary.evaluations) == len(summary.planned)
    assert summary.compactions or folder.name == "demo-en"  # the reference agent compacted its context


@pytest.mark.parametrize("name", ["marathon-en", "marathon-ru"])
async def test_the_marathons_run_with_the_llm_persona(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adapters.http_server import serve
    from fakes.persona_model import FakePersonaModel

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    model = FakePersonaModel()
    served = await serve(model.app())
    folder = REPO / "benchmarks" / name
    try:
        persona = {"driver": "anthropic:fake-persona", "base_url": served.url}
        outcome = await run_spec(RunSpec("llm", folder, {"adapter": "reference"}, persona), tmp_path)
    finally:
        await served.stop()
    assert outcome.reason == TerminationReason.COMPLETED
    summary = summarize(read_log(tmp_path / "llm" / EVENTS_FILE), load_benchmark(folder))
    assert summary.coverage_complete and not summary.slips
