"""Two graders never decide a comparison (issue 61): a run graded before a rule changed and one
graded after are not compared question by question — the gate says no decision, names the
graders and the rescore that makes them one; after it, the gate decides."""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import replace
from pathlib import Path

from gateway.log.runlog import EVENTS_FILE, RunLogWriter, read_log
from gateway.report.comparison import compare, render_comparison
from gateway.report.gate import gate
from gateway.report.run_line import RunLine
from gateway.report.verdict import Verdict
from persona.grading.identity import grader_identity
from tests.conftest import REPO
from tests.marathon_cli import marathon

OLD = "exact-00000000deadbeef"


def _graded_by(path: Path, identity: str) -> None:
    """The run's log written again as if an older exact grader had graded it."""
    log = read_log(path, blobs_in_memory=True)
    grader = {**log.header.defines["grader"], "identity": identity}
    header = dataclasses.replace(log.header, defines={**log.header.defines, "grader": grader})
    writer = RunLogWriter.create(path, header)
    for event in log.events:
        writer.append(event)
    writer.close()


def test_a_rule_change_is_no_regression_the_gate_names_the_rescore_then_decides(tmp_path: Path) -> None:
    for folder in ("examples", "benchmarks"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    assert marathon("run", "examples/ci/marathon.jsonc", "--fresh", cwd=tmp_path).returncode == 0
    shutil.copytree(tmp_path / "recordings" / "ci", tmp_path / "before")
    run = tmp_path / "before" / "memory"
    _graded_by(run / EVENTS_FILE, OLD)
    gate_cmd = ["compare", "recordings/ci", "--baseline", "before", "--gate"]
    refused = marathon(*gate_cmd, cwd=tmp_path)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "memory gate: NO DECISION" in refused.stdout
    assert f"graded by different graders — A {OLD}, B {grader_identity().digest}" in refused.stdout
    assert f"`marathon rescore {run} --grader exact`" in refused.stdout
    rescored = marathon("rescore", str(run), "--grader", "exact", cwd=tmp_path)
    assert rescored.returncode == 0, rescored.stderr
    record = json.loads((run / "rescore-exact.json").read_text())
    assert record["grader_identity"]["identity"] == grader_identity().digest
    decided = marathon(*gate_cmd, cwd=tmp_path)
    assert decided.returncode == 0 and "memory gate: ACCEPT" in decided.stdout, decided.stdout
    verified = marathon("verify", "before", cwd=tmp_path)  # the manifest names what graded it
    assert verified.returncode == 0, verified.stderr
    (entry,) = json.loads(verified.stdout)["runs"]
    assert entry["grader"]["identity"] == OLD and entry["grader_regraded"] == grader_identity().digest
    # the re-grading applies to the log it was made from only: made from another, it is ignored
    stale = json.loads((run / "rescore-exact.json").read_text())
    stale["log"]["sha256"] = "0" * 64
    (run / "rescore-exact.json").write_text(json.dumps(stale))
    assert marathon(*gate_cmd, cwd=tmp_path).returncode == 3
    named = marathon("verify", "before", cwd=tmp_path)
    assert named.returncode == 1 and "rescore-exact.json was graded from another state of the log" in named.stderr


def _line(variant: str, identity: str) -> RunLine:
    line = RunLine.from_json(
        {
            "task": "t",
            "repeat": 1,
            "status": "completed",
            "cluster": "t",
            "group": "all",
            "split": "heldout",
            "experiment": "x",
            "pair": "x.t.r1",
            "variant": variant,
            "variant_name": variant,
            "questions": {"q1": {"score": 10, "certain": True, "correct": True, "tags": []}},
        }
    )
    return replace(line, defines={"grader": {"name": "exact", "identity": identity}} if identity else {})


def test_compare_leaves_out_a_pair_two_graders_graded_and_says_so() -> None:
    today = grader_identity().digest
    one = compare([_line("A", today), _line("B", today)])
    assert one.graders == [] and one.groups["all"].n == 1
    two = compare([_line("A", OLD), _line("B", today)])
    assert two.groups == {} and len(two.graders) == 1
    assert "no decision on 1 pair(s): graded by different graders" in render_comparison(two)
    # a side from before the identity is no proof of one grader either
    assert compare([_line("A", ""), _line("B", today)]).graders
    # the gate: no decision, never a regression, across two graders
    def run(identity: str, right: bool) -> RunLine:  # a run of its own, as a gate's sides are
        line = replace(_line("", identity), experiment="", pair="", variant_name="")
        return replace(line, questions={"q1": replace(line.questions["q1"], correct=right, score=10 if right else 0)})

    assert gate([run(today, True)], [run(today, False)]).verdict is Verdict.REJECT
    across = gate([run(OLD, True)], [run(today, False)])
    assert across.verdict is Verdict.NO_DECISION and "graded by different graders" in " ".join(across.why)
