"""`await bench.compact()`: the reference agent compacts on its command over every surface,
the recorder sees the compaction it caused, and an agent that can't compact is refused before
a run starts instead of logging `unsupported` mid-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.log.events import CompactionSeen, ErrorEvent, Evaluation, SessionChanged
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.markdown import render_markdown
from gateway.report.summary import summarize
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.loader import load_benchmark
from tests.conftest import REPO, TINY, BenchFactory
from tests.marathon_cli import marathon

COMPACTING = TINY["ch2.md"].replace("await bench.newSession();", "await bench.compact();")


@pytest.mark.parametrize("surface", ["http", "websocket", "telegram"])
async def test_the_reference_agent_compacts_on_command_and_the_recorder_sees_it(
    make_benchmark: BenchFactory, tmp_path: Path, surface: str
) -> None:
    bench = make_benchmark(ch2__md=COMPACTING)
    agent = {"adapter": "reference", "surface": surface, "context_tokens": 100_000}  # never on its own
    outcome = await run_spec(RunSpec("c", bench, agent), tmp_path)
    events = read_log(tmp_path / "c" / EVENTS_FILE).events
    (asked,) = [e for e in events if isinstance(e, SessionChanged) and e.action == "compact"]
    assert asked.detail == "" and asked.reply == "Context compacted."
    seen = [e for e in events if isinstance(e, CompactionSeen)]
    assert len(seen) == 1 and seen[0].seq > asked.seq - 5  # caused by the command, not by size
    assert not [e for e in events if isinstance(e, ErrorEvent) and e.kind == "unsupported"]
    # the summary call the command caused is the command's turn, not unexplained background work
    assert not [e for e in events if isinstance(e, ErrorEvent) and e.kind == "background_unrecognised"]
    assert outcome.reason == "completed"


async def test_marathon_ru_compacts_the_reference_agent_before_its_c_questions(tmp_path: Path) -> None:
    root = REPO / "benchmarks" / "marathon-ru"
    agent = {"adapter": "reference", "context_tokens": 100_000}
    await run_spec(RunSpec("ru", root, agent), tmp_path)
    log = read_log(tmp_path / "ru" / EVENTS_FILE)
    (asked,) = [e for e in log.events if isinstance(e, SessionChanged) and e.action == "compact"]
    assert [e for e in log.events if isinstance(e, CompactionSeen) and e.seq > asked.seq][:1]
    report = render_markdown(summarize(log, load_benchmark(root)))
    assert "compactions seen: 1" in report
    c_questions = [e for e in log.events if isinstance(e, Evaluation) and e.question_id.startswith("к")]
    assert len(c_questions) == 5
    for qid in ("к1", "к2"):
        assert f"| {qid} |" in report and "beyond the boundary" in report.split(f"| {qid} |")[1].split("\n")[0]


def test_a_benchmark_that_needs_compact_is_refused_on_an_agent_that_cannot(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    bench = make_benchmark(ch2__md=COMPACTING)
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{ runs: [ {{ id: "x", benchmark: "{bench}", agent: {{ adapter: "http", url: "http://127.0.0.1:9/chat" }} }} ] }}'
    )
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 1
    assert "asks the agent to compact (`await bench.compact()` in ch2.md (Exam))" in result.stderr
    assert "newSession" in result.stderr and not (tmp_path / "recordings" / "x").exists()


async def test_an_agent_we_start_compacts_through_its_wrappers(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    """A started process is wrapped (watched, maybe restarted): its `compact_commands` must
    reach the agent, or the run logs `unsupported` and grades a [C] question that tested nothing."""
    from gateway.traffic.hub import free_port
    from tests.process_agent import http_process_agent

    bench = make_benchmark(ch2__md=COMPACTING)
    agent = {**http_process_agent(tmp_path, free_port()), "compact_commands": ["/compress"]}
    outcome = await run_spec(RunSpec("p", bench, agent), tmp_path)
    events = read_log(tmp_path / "p" / EVENTS_FILE).events
    assert not [e for e in events if isinstance(e, ErrorEvent) and e.kind == "unsupported"]
    (asked,) = [e for e in events if isinstance(e, SessionChanged) and e.action == "compact"]
    assert asked.reply == "Noted."  # the agent got "/compress" and answered it
    assert outcome.reason == "completed"
