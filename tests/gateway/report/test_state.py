"""state.json as MarathonMemBench's users know it: written when a run stops, with the agent's
replies, each question's answers (both, for a nudged one) and grade."""

from __future__ import annotations

import json
from pathlib import Path

from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import BenchFactory


async def test_a_stopped_run_leaves_its_state_json_with_replies_and_both_answers_of_a_nudge(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    # no memory tools: the cat's name is gone after the new session, so q1 is nudged
    agent = {"adapter": "reference", "memory": False, "context_tokens": 100_000}
    outcome = await run_spec(RunSpec("s", make_benchmark(), agent), tmp_path)
    assert outcome.reason == "completed"
    state = json.loads((tmp_path / "s" / "state.json").read_text())
    assert state["status"] == "completed" and state["facts"]
    assert all("reply" in m for m in state["messages"])  # every message the agent answered
    q1 = state["questions"]["q1"]
    assert q1["text"] == "What is my cat called?" and q1["expected"] == "Miso"
    assert len(q1["answers"]) == 2 and q1["grade"]["score"] == state["grades"]["q1"]["score"]
    report = (tmp_path / "s" / "report.md").read_text()
    section = report.split("**❓ q1")[1].split("**❓")[0]
    assert "(after a nudge)" in section and f"- first answer: {q1['answers'][0]}" in section
    assert "- answer after the nudge:" in section
