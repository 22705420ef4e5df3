"""Issue 60's causes, each on a run of the reference agent with a fault keyed on the fact's
line: the autopsy believes what the memory holds and what the tool answered, not the call's
arguments, and a value other facts carry too decides nothing unless the line is tied to the fact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gateway.report.autopsy import QuestionAutopsy, Stage, StepKind, autopsy
from gateway.report.autopsy_render import render_timeline
from gateway.report.memory_state import Tie, any_text, topic_of
from gateway.report.recordings import load_run
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import DEMO, TINY, BenchFactory


async def _q(where: Path, bench: Path, faults: dict[str, Any], qid: str) -> QuestionAutopsy:
    agent = {"adapter": "reference", "context_tokens": 400, "faults": faults}
    await run_spec(RunSpec("r", bench, agent, {"driver": "scripted"}), where)
    return {q.question_id: q for q in autopsy(load_run(where / "r")).questions}[qid]


async def test_a_store_that_says_it_is_full_refused_the_write_though_no_error_was_flagged(tmp_path: Path) -> None:
    """Before: the result was never read, so "Memory full … not saved" was a write that stored."""
    q9 = await _q(tmp_path, DEMO, {"memory_full": ["Pixel"]}, "q9")
    assert q9.stage is Stage.WRITE_REFUSED, q9.verdict
    refused = [s for s in q9.steps if s.kind is StepKind.WRITE_REFUSED]
    assert refused and "Memory full" in refused[0].detail  # the timeline shows what the tool answered
    shown = render_timeline(q9)
    assert "Memory full" in shown and "decided by: told at" in shown and "write refused at" in shown


async def test_already_noted_wrote_nothing_and_is_never_stored_not_lost(tmp_path: Path) -> None:
    q9 = await _q(tmp_path, DEMO, {"already_noted": ["Pixel"]}, "q9")
    assert q9.stage is Stage.NEVER_STORED, q9.verdict
    kinds = [s.kind for s in q9.steps]
    assert StepKind.NOTHING_WRITTEN in kinds and StepKind.WRITTEN not in kinds, kinds
    assert any("Already noted." in s.detail for s in q9.steps if s.kind is StepKind.NOTHING_WRITTEN)


def _shared_name(make_benchmark: BenchFactory) -> Path:
    """The partner and a colleague are both called Marcus; only the partner's note is refused."""
    profile = (
        "# Me\n\n## 1. Basics\n1.1 My name is Ada and I am 36\n1.2 My partner is called Marcus\n"
        "1.3 My colleague at the office is also called Marcus\n"
    )
    exam = TINY["ch2.md"].replace(
        "❓ q1 What is my cat called? Correct answer: Miso\n",
        "❓ q1 What is my cat called? Correct answer: Miso\n❓ q4 What is my partner called? Correct answer: Marcus\n",
    )
    return make_benchmark(profile__md=profile, ch2__md=exam)


async def test_a_name_another_fact_carries_is_not_taken_for_the_lost_fact(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """Before: the colleague's note ("… also called Marcus") counted as the partner's, so the
    refused partner note came out "stored but not retrieved" (or "not used" from the
    colleague's line in context) — a stage too late."""
    q4 = await _q(tmp_path, _shared_name(make_benchmark), {"refuse_writes": ["partner"]}, "q4")
    assert q4.stage is Stage.WRITE_REFUSED, q4.verdict
    assert q4.facts == ("profile:1.2",)
    shown = " ".join(s.detail for s in q4.steps)
    assert "colleague" not in shown  # the timeline lists this fact's lines, not the other's


def test_a_line_tied_to_neither_fact_is_unsure_and_one_tied_to_the_other_is_not_a_match() -> None:
    ours = topic_of("What is my partner called?", "My partner is called Marcus", leaving="Marcus")
    theirs = topic_of("", "My colleague at the office is also called Marcus", leaving="Marcus")
    tie = Tie(ours - theirs, theirs - ours)
    assert any_text("Marcus", ["- partner: Marcus"], tie) is True
    assert any_text("Marcus", ["- colleague (office): Marcus"], tie) is False
    assert any_text("Marcus", ["- called Marcus"], tie) is None  # "called" is in both facts
    assert any_text("Marcus", ["- partner: Marcus"], frozenset({"partn"})) is True  # the plain topic, as before


async def test_a_note_in_the_tellings_words_is_this_facts_note(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    """Before: "Where did we meet?" and the note "We met in Lisbon …" shared no word of four
    letters, so a note in memory was called never stored."""
    profile = "# Me\n\n## 1. Basics\n1.1 My name is Ada and I am 36\n1.2 We met in Lisbon in 2015\n"
    asked = "❓ q1 Where did we meet? Correct answer: Lisbon\n"
    exam = TINY["ch2.md"].replace("❓ q1 What is my cat called? Correct answer: Miso\n", asked)
    q1 = await _q(tmp_path, make_benchmark(profile__md=profile, ch2__md=exam), {"no_search": True}, "q1")
    assert q1.stage is Stage.NOT_RETRIEVED, q1.verdict
