"""Run limits: the same for both variants of an experiment; a run that reaches one ends
`limit_reached`, stays in the log, is not run again, and counts as a failure for its variant."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.log.events import Asked, RunEnded, Said
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.comparison import compare
from gateway.report.run_line import RunLine
from gateway.run.config import ConfigError, RunSpec, load_config
from gateway.run.runner import run_spec
from tests.conftest import BenchFactory


async def test_a_run_that_reaches_its_turn_limit_ends_so_and_is_final(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    spec = RunSpec("r", make_benchmark(), {"adapter": "reference"}, limits={"agent_turns": 3})
    outcome = await run_spec(spec, tmp_path)
    assert outcome.reason == "limit_reached" and outcome.detail.startswith("agent_turns: 3 messages sent")
    events = read_log(tmp_path / "r" / EVENTS_FILE).events
    assert len([e for e in events if isinstance(e, (Said, Asked))]) == 3
    assert isinstance(events[-1], RunEnded) and events[-1].reason == "limit_reached"
    again = await run_spec(spec, tmp_path)  # not resumed: it used up its limits
    assert again.skipped and len(read_log(tmp_path / "r" / EVENTS_FILE).events) == len(events)


def test_experiment_limits_apply_to_both_variants_and_bad_ones_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.jsonc"
    config.write_text(
        '{ experiment: { name: "e", variants: { A: {adapter: "reference", memory: false}, B: {adapter: "reference"} },'
        ' tasks: ["b"], limits: { wall_seconds: 600, agent_turns: 200, spend_usd: 5 } } }'
    )
    runs = load_config(config).runs
    assert len(runs) == 2 and all(
        r.limits == {"wall_seconds": 600, "agent_turns": 200, "spend_usd": 5} for r in runs
    )
    config.write_text(
        '{ runs: [ { id: "r", benchmark: "b", agent: {adapter: "reference"}, limits: { turns: 5 } } ] }'
    )
    with pytest.raises(ConfigError, match=r"limits: unknown key `turns` \(did you mean `agent_turns`\?"):
        load_config(config)
    config.write_text(
        '{ runs: [ { id: "r", benchmark: "b", agent: {adapter: "reference"}, limits: { agent_turns: -5 } } ] }'
    )
    with pytest.raises(ConfigError, match="`limits` must be"):
        load_config(config)


def test_a_variant_that_reached_its_limit_is_counted_as_failing_not_dropped() -> None:
    def line(variant: str, status: str, questions: dict[str, bool]) -> RunLine:
        return RunLine.from_json({
            "experiment": "e", "task": "t", "pair": "e.t.r1", "variant": variant, "status": status,
            "active_seconds": 1.0, "cost_usd": 0.0,
            "questions": {q: {"correct": ok, "tags": []} for q, ok in questions.items()},
        })  # fmt: skip

    c = compare([line("A", "completed", {"q1": True, "q2": True}), line("B", "limit_reached", {"q1": True})])
    assert (
        not c.incomplete and c.groups["all"].n == 2 and c.groups["all"].wins_a == 1
    )  # q2: B never got there
