"""The memory autopsy (issue 48) on failures we know: the reference agent with one stage of
its memory broken on purpose (adapters/reference/faults.py) — each wrong answer's stage is the
broken one, with its timeline; and where nothing can be seen, it says so instead of guessing."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from gateway.report.autopsy import NoStage, QuestionAutopsy, Stage, StepKind, autopsy
from gateway.report.recordings import load_run
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import DEMO, TINY
from tests.marathon_cli import marathon

SWITCHES: dict[str, dict[str, Any]] = {
    "refuses": {"refuse_writes": ["Pixel", "1,100"]},  # q9's write refused; q10's update refused
    "loses": {"lose": ["LH1173"]},  # q4: stored, dropped at the next compaction
    "no-search": {"no_search": True},
    "ignores": {"ignore_results": True},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, QuestionAutopsy]]:
    where = tmp_path_factory.mktemp("autopsy")

    async def play() -> None:
        for name, faults in {"clean": {}, **SWITCHES}.items():
            agent = {"adapter": "reference", "context_tokens": 400, "faults": faults}
            await run_spec(RunSpec(name, DEMO, agent, {"driver": "scripted"}), where)
        unrecorded = {"adapter": "reference", "context_tokens": 400, "record_llm": False, "faults": SWITCHES["loses"]}
        await run_spec(RunSpec("unrecorded", DEMO, unrecorded, {"driver": "scripted"}), where)

    asyncio.run(play())
    return {
        name: {q.question_id: q for q in autopsy(load_run(where / name)).questions}
        for name in ("clean", *SWITCHES, "unrecorded")
    } | {"_where": where}  # type: ignore[dict-item]


def test_every_graded_question_gets_a_verdict(runs: dict[str, dict[str, QuestionAutopsy]]) -> None:
    clean = runs["clean"]
    assert len(clean) == 15
    assert clean["q9"].no_stage is NoStage.RIGHT and clean["q4"].no_stage is NoStage.RIGHT
    assert clean["q12"].no_stage is NoStage.ABSTAIN  # nothing was told: no memory stage


def test_a_refused_write_is_its_own_stage_and_its_timeline_shows_the_refusals(
    runs: dict[str, dict[str, QuestionAutopsy]],
) -> None:
    q9 = runs["refuses"]["q9"]
    assert q9.stage is Stage.WRITE_REFUSED, q9.verdict
    kinds = [s.kind for s in q9.steps]
    assert kinds[0] is StepKind.TOLD and StepKind.WRITE_REFUSED in kinds and StepKind.WRITTEN not in kinds
    assert kinds[-2:] == [StepKind.ASKED, StepKind.GRADED]


def test_an_update_whose_new_value_was_refused_kept_the_old_value(runs: dict[str, dict[str, QuestionAutopsy]]) -> None:
    q10 = runs["refuses"]["q10"]  # the painter's 950 → 1,100: only 950 reached memory
    assert q10.stage is Stage.KEPT_OLD_VALUE, q10.verdict
    kinds = [s.kind for s in q10.steps]
    assert kinds[:4] == [StepKind.OLD_WRITTEN, StepKind.UPDATED, StepKind.TOLD, StepKind.WRITE_REFUSED], kinds


def test_a_note_dropped_at_compaction_is_unknown_without_a_state_that_saw_it_kept(
    runs: dict[str, dict[str, QuestionAutopsy]],
) -> None:
    """Issue 60: "stored" was believed from the write's acknowledgement. Dropped at compaction,
    with no checkpoint or search result between the write and the end, the note is as absent as
    one a tool said it saved and never did: unknown, and the reason names what would tell."""
    q4 = runs["loses"]["q4"]
    assert q4.stage is Stage.UNKNOWN, q4.verdict
    assert "a checkpoint (`checkpoint_at`) tells them apart" in q4.unseen
    assert StepKind.WRITTEN in [s.kind for s in q4.steps] and StepKind.IN_MEMORY not in [s.kind for s in q4.steps]


def test_without_search_what_memory_holds_is_not_retrieved(runs: dict[str, dict[str, QuestionAutopsy]]) -> None:
    wrong = [q for q in runs["no-search"].values() if q.stage is not None]
    assert wrong and all(q.stage is Stage.NOT_RETRIEVED for q in wrong if q.stage is not Stage.UNKNOWN)
    assert sum(q.stage is Stage.NOT_RETRIEVED for q in wrong) >= 3
    one = next(q for q in wrong if q.stage is Stage.NOT_RETRIEVED)
    assert [s.kind for s in one.steps][-1] is StepKind.IN_MEMORY  # the memory files, at the end


def test_a_found_value_ignored_in_the_answer_was_retrieved_but_not_used(
    runs: dict[str, dict[str, QuestionAutopsy]],
) -> None:
    wrong = [q for q in runs["ignores"].values() if q.stage is not None]
    assert len(wrong) >= 5 and all(q.stage is Stage.NOT_USED for q in wrong), [q.verdict for q in wrong]
    assert StepKind.READ in [s.kind for s in wrong[0].steps]


def test_with_the_traffic_unrecorded_the_stage_is_unknown_and_says_why(
    runs: dict[str, dict[str, QuestionAutopsy]],
) -> None:
    q4 = runs["unrecorded"]["q4"]
    assert q4.stage is Stage.UNKNOWN, q4.verdict
    # what the memory files say is still said (issue 60: they were ignored without traffic)
    assert q4.unseen == (
        "the agent's LLM traffic was not recorded — its memory files at the end don't hold it: never stored, "
        "or stored then lost"
    )


async def test_a_deleted_fact_answered_again_is_a_deleted_fact_still_kept(tmp_path: Path) -> None:
    """The reference agent has no way to forget: what it was asked to delete stays in its notes."""
    bench = tmp_path / "bench"
    bench.mkdir()
    for name, text in TINY.items():
        (bench / name).write_text(text)
    (bench / "pets.md").write_text(TINY["pets.md"].replace("Miso eats tuna", "Miso's vet is called Daniel Brooks"))
    (bench / "ch1.md").write_text(TINY["ch1.md"] + "✎ pets 1.3 —\n")
    question = "❓ q4 [deleted] Who is Miso's vet? Correct answer: you asked me to forget it\n"
    (bench / "ch2.md").write_text(TINY["ch2.md"] + question)
    await run_spec(RunSpec("r", bench, {"adapter": "reference", "context_tokens": 400}, {"driver": "scripted"}), tmp_path)
    q4 = {q.question_id: q for q in autopsy(load_run(tmp_path / "r")).questions}["q4"]
    assert q4.stage is Stage.DELETED_KEPT, q4.verdict
    assert {StepKind.DELETED, StepKind.IN_MEMORY} <= {s.kind for s in q4.steps}


def test_marathon_autopsy_prints_every_question_and_one_timeline(runs: dict[str, Any]) -> None:
    """`marathon autopsy RUN [--fact ID]`"""
    run = runs["_where"] / "refuses"
    table = marathon("autopsy", str(run), cwd=run.parent)
    assert table.returncode == 0, table.stderr
    (row,) = re.findall(r"^\| q9 \| (\S+) \| Pixel \| 0 \| write refused \|$", table.stdout, re.M)
    assert len(re.findall(r"^\| q\d+ \|", table.stdout, re.M)) == 15
    # in the order people read ids, not the order asked (q11 is asked first): issue 62
    listed = re.findall(r"^\| (q\d+) \|", table.stdout, re.M)
    assert listed == [f"q{n}" for n in range(1, 16)], listed
    assert "offline rule-based model stand-in" in table.stdout
    for wanted in (row, "q9"):  # the fact (FILE:ID) or the question asking it
        one = marathon("autopsy", str(run), "--fact", wanted, cwd=run.parent)
        assert one.returncode == 0 and one.stdout.startswith(f"q9 (fact {row}): expected 'Pixel' — write refused")
        assert "write refused" in one.stdout
    missing = marathon("autopsy", str(run), "--fact", "q99", cwd=run.parent)
    assert missing.returncode == 2 and "no graded question asks 'q99'" in missing.stderr


async def test_a_forks_autopsy_reads_the_teaching_it_inherited(tmp_path: Path) -> None:
    """A fork's facts were told and written in its parent's log: the trail follows them there."""
    agent = {"adapter": "reference", "context_tokens": 400, "faults": {"refuse_writes": ["Pixel"]}}
    await run_spec(RunSpec("teach", DEMO, agent, checkpoint_at="exam", until="exam"), tmp_path)
    await run_spec(RunSpec("teach.f1", DEMO, agent, checkpoint_at="exam", parent=("teach", "exam")), tmp_path)
    q9 = {q.question_id: q for q in autopsy(load_run(tmp_path / "teach.f1")).questions}["q9"]
    assert q9.stage is Stage.WRITE_REFUSED, q9.verdict
    refused = [s for s in q9.steps if s.kind is StepKind.WRITE_REFUSED]
    assert refused and all(s.at is not None and s.at.inherited for s in refused)
    asked = next(s for s in q9.steps if s.kind is StepKind.ASKED)
    assert asked.at is not None and not asked.at.inherited and str(refused[0].at).startswith("parent:")
    # the memory files as the checkpoint the fork started from archived them
    (saved,) = [s for s in q9.steps if s.kind is StepKind.AT_CHECKPOINT]
    assert saved.detail == "exam: did not hold it" and saved.at is not None and saved.at.inherited
    q4 = {q.question_id: q for q in autopsy(load_run(tmp_path / "teach.f1")).questions}["q4"]
    assert [s.detail for s in q4.steps if s.kind is StepKind.AT_CHECKPOINT] == ["exam: held it"]


def test_a_run_stopped_before_its_exam_says_there_is_nothing_to_trace(runs: dict[str, Any], tmp_path: Path) -> None:
    """Tried as a user: a demo killed in its first seconds printed "stages: " and a column of
    "no … to read it on", as if it were a result."""
    import shutil

    from tests.run_logs import cut_after

    run = tmp_path / "cut"
    shutil.copytree(runs["_where"] / "clean", run)
    cut_after(run / "events.msgpack", "reply", 3)  # killed while it was still teaching
    shown = marathon("autopsy", str(run), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "no graded question to trace: the run is " in shown.stdout and "stages:" not in shown.stdout


def test_the_autopsy_of_a_run_that_did_not_end_says_its_memory_was_read_as_it_is_now(tmp_path: Path) -> None:
    """Issue 60: an interrupted run's autopsy said its memory files were "read at the end of the
    run" — they were read as the folder stood when it was asked, which is no end state."""
    from gateway.log.events import RunEnded
    from gateway.log.runlog import EVENTS_FILE, RunLogWriter
    from gateway.log.vocabulary import TerminationReason
    from tests.run_logs import cut_after

    assert marathon("demo", "--recordings", "recordings", cwd=tmp_path).returncode == 0
    run = tmp_path / "recordings" / "demo"
    ended = marathon("autopsy", str(run), cwd=tmp_path)
    assert "Memory files: read at the end of the run" in ended.stdout
    cut_after(run / EVENTS_FILE, "evaluation", 5)  # killed mid-exam: no end record
    killed = marathon("autopsy", str(run), cwd=tmp_path)
    assert killed.returncode == 0, killed.stderr
    assert "not the run's end state: its log has no end record (killed, or still running)" in killed.stdout
    writer, _ = RunLogWriter.resume(run / EVENTS_FILE)
    with writer:
        writer.append(RunEnded(reason=TerminationReason.INTERRUPTED))
    interrupted = marathon("autopsy", str(run), cwd=tmp_path)
    assert "not the run's end state: it was interrupted, and a resume goes on from here" in interrupted.stdout
