"""Every real agent's recorded traffic, re-derived with today's rules on every commit.

The corpus (`corpus/`, README there) holds short runs of the unmodified agents — Hermes, OpenClaw
and Letta over each of their shipped profiles' surfaces — recorded through the gateway and
scrubbed. Beside each run, `expected.json5` holds its figures, written once by hand after reading
the log (`corpus_tool listing`): the model calls that answered the persona and the agent's own
background calls (by what decided them) per question, the compactions and where, the memory calls
charged per question, the evidence check per question, the warnings, and what the autopsy's trail
reads of it (writes, and what each question's turn retrieved). The test re-derives all of them
from the recorded exchanges (`rederive_run`, the path `marathon rescore RUN --traffic` takes) and
fails with the difference when any figure moves — so a change made for one agent is checked
against every agent's traffic.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import json5
import pytest

from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.fact_trail import Trail
from gateway.report.recordings import benchmark_of
from gateway.report.traffic_figures import TrafficFigures
from gateway.report.traffic_overlay import rederive_run
from tests.conftest import REPO

CORPUS = Path(__file__).parent / "corpus"
RUNS = sorted(p.parent for p in CORPUS.glob(f"*/*/{EVENTS_FILE}"))


def figures(run_dir: Path) -> dict[str, Any]:
    """The run's figures under today's rules."""
    log = read_log(run_dir / EVENTS_FILE)
    result = rederive_run(run_dir, log, benchmark_of(log.header))
    log.events = result.events
    trail = Trail.of(log)
    return TrafficFigures.of(result.events).as_json() | {
        "autopsy": {
            "writes": len(trail.writes),
            "writes_refused": sum(1 for w in trail.writes if not w.accepted),
            "reads": {q: len(texts) for q, texts in sorted(trail.read.items())},
        }
    }


def difference(expected: dict[str, Any], found: dict[str, Any]) -> list[str]:
    return [
        f"{key}: expected {expected.get(key)!r}, re-derived {found.get(key)!r}"
        for key in sorted(set(expected) | set(found))
        if expected.get(key) != found.get(key)
    ]


def test_the_corpus_covers_every_shipped_profile() -> None:
    """Each agent profile we ship has recorded traffic here (the reference agent's is the suite's)."""
    shipped = {p.stem for p in (REPO / "adapters" / "profiles").glob("*.jsonc")} - {
        "reference",
        "openai-generic",
    }
    recorded = {str(read_log(r / EVENTS_FILE).header.agent.get("profile")) for r in RUNS}
    assert shipped <= recorded, f"no recorded traffic of {sorted(shipped - recorded)}"


@pytest.mark.parametrize("run_dir", RUNS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_recorded_run_gives_its_expected_figures(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the logs name their benchmark relative to the checkout
    expected = json5.loads((run_dir / "expected.json5").read_text(encoding="utf-8"))
    moved = difference(expected, figures(run_dir))
    assert not moved, f"{run_dir.relative_to(CORPUS)}: the traffic figures moved:\n" + "\n".join(moved)
