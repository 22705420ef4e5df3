"""The live progress board: figures from the log's own events; a line per change off a terminal."""

from __future__ import annotations

import io
from pathlib import Path

from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.progress import ProgressBoard, RunProgress
from gateway.run.runner import run_spec
from tests.conftest import DEMO


async def test_progress_counts_what_the_log_holds(tmp_path: Path) -> None:
    await run_spec(RunSpec("d", DEMO, {"adapter": "reference", "context_tokens": 400}), tmp_path)
    progress = RunProgress("d", 5, 15, stand_in=True)
    for event in read_log(tmp_path / "d" / EVENTS_FILE).events:
        progress.observe(event)
    assert (progress.phase, progress.graded, progress.ended) == (4, 15, TerminationReason.COMPLETED)
    assert progress.status == "completed"
    assert progress.facts_told >= 40 and progress.tokens > 0 and progress.cost == "$0.0000"
    line = progress.line()
    assert "phase 5/5" in line and "graded  15/15" in line


def test_the_board_prints_only_changed_lines_off_a_terminal() -> None:
    out = io.StringIO()
    runs = [RunProgress("a", 3, 2), RunProgress("b", 3, 2)]
    board = ProgressBoard(runs, out=out)
    board.draw()
    assert out.getvalue() == ""  # nothing started yet
    runs[0].started, runs[0].phase = True, 0
    board.draw()
    board.draw()
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "[a] running" in lines[0] and "phase 1/3" in lines[0]


def test_a_fact_told_again_after_a_crash_counts_once() -> None:
    """A resumed run logs the facts of a message it re-sends again: the board counts facts, not records."""
    from gateway.log.events import FactTold

    progress = RunProgress("r", 3, 2)
    for event in (FactTold(file="family", fact_id="1.1"), FactTold(file="family", fact_id="1.1")):
        progress.observe(event)
    progress.observe(FactTold(file="home", fact_id="1.1"))
    assert progress.facts_told == 2 and "facts    2" in progress.line()


def test_tokens_never_counted_are_not_a_zero() -> None:
    """An HTTP agent whose model calls aren't recorded: the board says "—", as the report says
    "not observable" — never `tokens 0`."""
    progress = RunProgress("r", 3, 2)
    assert "tokens         —" in progress.line() and "tokens 0" not in " ".join(progress.line().split())


def test_a_run_that_ends_before_it_starts_still_gets_its_line() -> None:
    """An agent that would not start ends the run before any `run_start`: the board says so."""
    from gateway.log.events import RunEnded

    out = io.StringIO()
    run = RunProgress("r1", 3, 2)
    run.observe(RunEnded(reason=TerminationReason.PERSONA_FAILED))
    ProgressBoard([run], out=out).draw()
    assert "[r1] persona_failed" in out.getvalue()


async def test_off_a_terminal_the_board_says_at_once_what_is_coming() -> None:
    """A fresh-clone walkthrough: `marathon run … | tee log` printed nothing for 11.5 s."""
    import asyncio

    out = io.StringIO()
    board = ProgressBoard([RunProgress("a", 3, 2), RunProgress("b", 3, 2)], out=out)
    watching = asyncio.create_task(board.watch())
    await asyncio.sleep(0.05)
    watching.cancel()
    first = out.getvalue().splitlines()[0]
    assert first.endswith(" 2 runs to go: a line for each as it moves, at most every 10 s"), first


def test_a_fork_counts_the_facts_its_parent_told() -> None:
    """The board showed a fork's own "facts 3" while its report said 40 were told (inherited)."""
    from gateway.log.events import FactTold

    progress = RunProgress("m.seq.r1", 3, 2)
    progress.inherit([FactTold(file="family", fact_id=f"1.{n}") for n in range(40)])
    progress.observe(FactTold(file="home", fact_id="1.1"))
    assert progress.facts_told == 41
