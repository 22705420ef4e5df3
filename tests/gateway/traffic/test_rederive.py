"""A recorded run's traffic readings made again (`gateway/traffic/rederive.py`) are the recorder's
own when the rules did not change — event by event, across the features they meet: a run killed
and resumed (a new recorder per process), a fork (its recorder starts from its parent's teaching:
a canary the parent revoked is armed in the fork), the real agents' runs of the CI corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gateway.log.events import Blob, CanaryHit, Event, RunStart
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.recordings import benchmark_of
from gateway.report.traffic_overlay import rederive_run
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import REPO, TINY, BenchFactory
from tests.gateway.traffic.test_corpus import RUNS
from tests.run_logs import cut_after


def shapes(events: list[Event]) -> list[dict[str, Any]]:
    """Each event as recorded, without what a re-derivation renumbers: its `seq`, its time, and
    a memory call's result's pointer to the call (its seq)."""
    out = []
    for event in events:
        if isinstance(event, Blob):
            continue
        record = event.to_record()
        for key in ("seq", "ts", "call"):
            record.pop(key, None)
        out.append(record)
    return out


def same_readings(run_dir: Path) -> None:
    log = read_log(run_dir / EVENTS_FILE)
    again = rederive_run(run_dir, log, benchmark_of(log.header))
    assert shapes(again.events) == shapes(log.events)


CANARY = {
    "benchmark__json": '{name: "tiny", chapters: ["ch1.md", "ch2.md"], canaries: ["TUNA-7731"]}',
    "pets__md": "# Pets\n\n## 1. Cat\n1.1 My cat is called Miso\n1.2 Miso is 4 years old\n1.3 Miso eats tuna, brand TUNA-7731\n",
    "ch1__md": TINY["ch1.md"] + "> Please forget the tuna brand.\n✎ pets 1.3 —\n",
    "ch2__md": TINY["ch2.md"] + "❓ q4 What does Miso eat? Correct answer: tuna\n",
}


async def test_a_killed_and_resumed_run_and_a_fork_re_derive_to_their_own_readings(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    bench = make_benchmark(**CANARY)
    agent = {"adapter": "reference", "context_tokens": 60, "keep_turns": 1}  # compactions too
    await run_spec(RunSpec("k", bench, agent), tmp_path)
    cut_after(tmp_path / "k" / EVENTS_FILE, "evaluation", 2)  # killed in the exam, then resumed
    await run_spec(RunSpec("k", bench, agent), tmp_path)
    killed = read_log(tmp_path / "k" / EVENTS_FILE).events
    assert sum(isinstance(e, RunStart) for e in killed) == 2
    same_readings(tmp_path / "k")

    await run_spec(RunSpec("t", bench, agent, checkpoint_at="exam", until="exam"), tmp_path)
    await run_spec(RunSpec("t.f1", bench, agent, checkpoint_at="exam", parent=("t", "exam")), tmp_path)
    fork = read_log(tmp_path / "t.f1" / EVENTS_FILE).events
    assert [e.marker for e in fork if isinstance(e, CanaryHit)], "the fork's exam met no canary: it proves nothing"
    same_readings(tmp_path / "t")
    same_readings(tmp_path / "t.f1")


AFTER_THE_FIX = [r for r in RUNS if not r.parent.name.endswith("-before-fix")]


@pytest.mark.parametrize("run_dir", AFTER_THE_FIX, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_real_agent_run_recorded_after_the_fix_re_derives_to_its_own_events(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    same_readings(run_dir)
