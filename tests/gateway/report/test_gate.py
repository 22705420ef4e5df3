"""The memory regression gate as examples/ci/README.md runs it: a deterministic marathon against
the committed baseline — accepted as it is, failed when the agent's memory is switched off."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from gateway.report.gate import gate
from gateway.report.run_line import RunLine
from gateway.report.verdict import Verdict
from tests.conftest import REPO
from tests.marathon_cli import marathon

GATE = ["compare", "recordings/ci", "--baseline", "examples/ci/baseline.runs.jsonl", "--gate"]


def test_the_ci_example_accepts_the_agent_and_fails_it_without_its_memory(tmp_path: Path) -> None:
    for folder in ("examples", "benchmarks"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    assert marathon("run", "examples/ci/marathon.jsonc", "--fresh", cwd=tmp_path).returncode == 0
    accepted = marathon(*GATE, "--junit", "gate.xml", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "memory gate: ACCEPT" in accepted.stdout
    assert ET.parse(tmp_path / "gate.xml").getroot().get("failures") == "0"
    config = tmp_path / "examples" / "ci" / "marathon.jsonc"
    config.write_text(
        config.read_text().replace("context_tokens: 400 }", "context_tokens: 400, memory: false }")
    )
    assert marathon("run", "examples/ci/marathon.jsonc", "--fresh", cwd=tmp_path).returncode == 0
    failed = marathon(*GATE, "--junit", "gate.xml", cwd=tmp_path)
    assert failed.returncode == 1 and "memory gate: REGRESSION" in failed.stdout
    suite = ET.parse(tmp_path / "gate.xml").getroot()
    (all_questions,) = [c for c in suite if c.get("name") == "question group: all"]
    failure = all_questions.find("failure")
    assert failure is not None and "memory.r1:q2" in (failure.text or "")  # the rent's update, forgotten
    as_json = json.loads(marathon(*GATE, "--json", cwd=tmp_path).stdout)
    assert as_json["verdict"] == "regression" and as_json["groups"]["all"]["regressed"]


def _line(
    task: str, answers: dict[str, bool], status: str = "completed", certain: bool = True
) -> RunLine:
    questions: dict[str, dict[str, object]] = {
        q: {"score": 10 if ok else 0, "certain": certain, "correct": ok, "tags": []}
        for q, ok in answers.items()
    }
    return RunLine.from_json(
        {
            "task": task,
            "repeat": 1,
            "active_seconds": 1.0,
            "cost_usd": 0.0,
            "status": status,
            "questions": questions,
            "cluster": task,
            "group": "all",
        }
    )


def test_the_gate_decides_nothing_it_could_not_check() -> None:
    base = [_line("t", {"q1": True, "q2": True})]
    assert gate(base, [_line("t", {"q1": True, "q2": True})]).verdict is Verdict.ACCEPT
    assert gate(base, [_line("t", {"q1": True, "q2": False})]).verdict is Verdict.REJECT
    assert gate(base, [_line("t", {"q1": True, "q2": False})], tolerance=1).verdict is Verdict.ACCEPT
    assert gate(base, [_line("other", {"q1": True})]).verdict is Verdict.NO_DECISION  # nothing paired
    assert gate(base, [_line("t", {"q1": True}, status="agent_failed")]).verdict is Verdict.NO_DECISION
    unsure = gate(base, [_line("t", {"q1": True, "q2": True}, certain=False)])
    assert unsure.verdict is Verdict.NO_DECISION and "unresolved" in unsure.why[0]
