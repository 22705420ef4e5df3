"""The memory regression gate as examples/ci/README.md runs it: a deterministic marathon against
the committed baseline — accepted as it is, failed when the agent's memory is switched off."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

from gateway.report.gate import gate, junit_xml
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


def _run(run_id: str, task: str, answers: dict[str, bool], **identity: object) -> RunLine:
    line = replace(_line(task, answers), run_id=run_id)
    return replace(line, **identity)  # type: ignore[arg-type]


def test_a_baseline_run_the_candidate_lacks_is_no_pass() -> None:
    """Before: ACCEPT, exit 0, the run listed only as "not paired"."""
    base = [_run("b1", "t1", {"q1": True}), _run("b2", "t2", {"q1": True})]
    result = gate(base, [_run("c1", "t1", {"q1": True})])
    assert result.verdict is Verdict.NO_DECISION and result.exit_code == 3
    assert result.unmatched == ["t2.r1 (run b2 of the baseline; the candidate has no such run)"]
    assert any("1 run(s) not compared" in why for why in result.why)


def test_rungs_and_forks_are_compared_each_never_merged() -> None:
    """Before: lines sharing (task, repeat) were merged, the last one winning — a ladder's rungs,
    a folder of forks — so a candidate wrong on one of them could pass."""
    rungs = [_run(f"b{r}", "lad", {"q1": True}, rung=r) for r in ("s0", "s1", "s2")]
    worse = [_run(f"c{r}", "lad", {"q1": r != "s0"}, rung=r) for r in ("s0", "s1", "s2")]
    result = gate(rungs, worse)
    assert result.verdict is Verdict.REJECT and result.groups["all"].compared == 3
    assert result.groups["all"].regressed == ["lad.s0.r1:q1"]
    forks = [_run(f"b{q}", "exam", {q: True}, exam="isolated", question=q, rollout=1) for q in ("q1", "q2")]
    wrong = [_run(f"c{q}", "exam", {q: q == "q1"}, exam="isolated", question=q, rollout=1) for q in ("q1", "q2")]
    assert gate(forks, wrong).groups["all"].regressed == ["exam.isolated:q2#1.r1:q2"]


def test_every_arm_of_an_experiment_and_its_ladder_runs_are_gated() -> None:
    """Before: a folder with an experiment gated only its B lines; its other runs weren't listed."""
    base = [_run("a", "t", {"q1": True}, variant="A"), _run("b", "t", {"q1": True}, variant="B"),
            _run("l", "lad", {"q1": True}, rung="s1")]  # fmt: skip
    cand = [_run("a2", "t", {"q1": False}, variant="A"), _run("b2", "t", {"q1": True}, variant="B"),
            _run("l2", "lad", {"q1": True}, rung="s1")]  # fmt: skip
    result = gate(base, cand)
    assert result.groups["all"].compared == 3 and result.groups["all"].regressed == ["t.r1.A:q1"]


def test_runs_that_share_an_identity_are_named_not_picked() -> None:
    twice = [_run("x1", "t", {"q1": True}), _run("x2", "t", {"q1": False})]
    result = gate([_run("b", "t", {"q1": True})], twice)
    assert result.verdict is Verdict.NO_DECISION
    assert "candidate: 2 runs share this identity — x1, x2" in result.unmatched[0]


def test_the_junit_file_is_valid_xml_whatever_the_ids_hold(tmp_path: Path) -> None:
    """A control character in a question id, a lone surrogate from a baseline: before, invalid
    XML or a traceback writing it."""
    base = [_run("b\x07", "t\udc80", {"q\x01": True})]
    result = gate(base, [_run("c", "t\udc80", {"q\x01": False})])
    text = junit_xml(result, 0)
    path = tmp_path / "junit.xml"
    path.write_text(text, encoding="utf-8")
    root = ET.parse(path).getroot()
    assert int(root.get("failures") or 0) >= 1 and "\ufffd" in text  # all, untagged


def test_a_baseline_holds_paths_relative_to_itself_and_every_regression_is_listed(tmp_path: Path) -> None:
    """Before: the shipped baseline held this machine's absolute path; the console cut the
    regressed questions at ten without saying so."""
    from gateway.report.gate import render_gate, write_baseline
    from gateway.report.run_line import read_lines

    line = replace(_run("b", "t", {"q1": True}), recording=str(tmp_path / "recordings" / "run"))
    (tmp_path / "ci").mkdir()
    write_baseline([line], tmp_path / "ci" / "baseline.runs.jsonl")
    (stored,) = read_lines(tmp_path / "ci" / "baseline.runs.jsonl")
    assert stored.recording == "../recordings/run"
    shipped = read_lines(REPO / "examples" / "ci" / "baseline.runs.jsonl")
    assert all(not Path(x.recording).is_absolute() for x in shipped)
    many = {f"q{n}": True for n in range(1, 26)}
    result = gate([_run("b", "t", many)], [_run("c", "t", dict.fromkeys(many, False))])
    text = render_gate(result)
    assert "t.r1:q1, t.r1:q2, t.r1:q3" in text and "… and 5 more" in text  # asked order, the rest counted


def test_the_shipped_baseline_was_graded_by_todays_grader() -> None:
    """A grading change moves the grader's identity (issue 61): the CI example's baseline is then
    written again, on purpose, with the verdicts it moved in view — never left to read as a
    regression of the agent."""
    from gateway.report.run_line import read_lines
    from persona.grading.identity import grader_identity

    shipped = read_lines(REPO / "examples" / "ci" / "baseline.runs.jsonl")
    today = grader_identity().digest
    assert [line.grader_identity for line in shipped] == [today] * len(shipped), (
        f"examples/ci/baseline.runs.jsonl was graded by another exact grader than today's ({today}): "
        "write it again as examples/ci/README.md says (run, then `compare recordings/ci --write-baseline`)"
    )
