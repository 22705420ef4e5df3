"""Returned-item parity (paper 003, issue 30 item 4): what each memory read gave the model,
counted from the tool result the agent sent next, shown per rung and compared between arms."""

from __future__ import annotations

import re
from pathlib import Path

from gateway.log.events import MemoryCallSeen, MemoryResult
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.comparison import compare, render_comparison
from gateway.report.recordings import load_run
from gateway.report.run_line import RunLine, run_line
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from gateway.traffic.tool_results import result_items
from tests.conftest import BenchFactory


def test_a_results_items_are_counted_by_its_shape() -> None:
    assert result_items('[{"text": "a"}, {"text": "b"}]') == 2
    assert result_items('{"results": [1, 2, 3], "query": "cat"}') == 3
    assert result_items("- Miso is the cat\n\n- Miso eats tuna\n") == 2
    assert result_items('{"ok": true}') == 1 and result_items("") == 0


async def test_every_read_s_result_is_logged_and_a_question_s_exposure_summed(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    await run_spec(RunSpec("x", make_benchmark(), {"adapter": "reference"}), tmp_path)
    events = read_log(tmp_path / "x" / EVENTS_FILE).events
    reads = {e.seq: e for e in events if isinstance(e, MemoryCallSeen) and e.operation == "read"}
    results = {e.call: e for e in events if isinstance(e, MemoryResult)}
    assert reads and set(reads) <= set(results)  # every read's result came back and was counted
    summary = load_run(tmp_path / "x").summary
    q1 = summary.memory_for("q1")
    assert q1.reads >= 1 and q1.returned_chars > 0 and q1.returned_items >= 1
    # the run line names what each read returned, not only the tool (before: ["memory_search"])
    retrieved = run_line(load_run(tmp_path / "x")).retrieved or ()
    assert retrieved and all(re.search(r" \(\d+ items?, [\d,]+ chars\)$", r) for r in retrieved), retrieved


def _line(variant: str, chars: int) -> RunLine:
    return RunLine.from_json({
        "experiment": "e", "task": "t", "pair": "e.t.r1", "variant": variant, "status": "completed",
        "variant_name": variant, "active_seconds": 1.0, "cost_usd": 0.0, "graded": 1, "returned_chars": chars,
        "questions": {"q1": {"correct": True, "tags": []}},
    })  # fmt: skip


def test_a_comparison_whose_arms_read_back_different_amounts_is_flagged() -> None:
    alike = render_comparison(compare([_line("A", 1000), _line("B", 1100)]))
    assert "exposure (what memory reads returned" in alike and "differ in exposure" not in alike
    unlike = render_comparison(compare([_line("A", 1000), _line("B", 3000)]))
    assert "**the arms differ in exposure (×3.0)**" in unlike
    # an arm without memory reads nothing by design: no warning (it fired on every with/without pair)
    without = render_comparison(compare([_line("A", 0), _line("B", 3000)]))
    assert "exposure (what memory reads returned" in without and "differ in exposure" not in without
