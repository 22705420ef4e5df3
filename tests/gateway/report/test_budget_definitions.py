"""Pass@B, p_exh, p_wrong, R(τ) and C(τ) on small hand-made logs, checked against values
worked out by hand from arXiv 2605.07313 (eq. 1): a mean over each question's rollouts, then
over questions; R counts retrieval calls (reads) of the question's first turn only."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.log.events import Asked, Evaluation, Header, LLMExchange, MemoryCallSeen, Said
from gateway.log.runlog import EVENTS_FILE, RunLogWriter, read_log
from gateway.report.budget import build_ladders, render_ladder
from gateway.report.recordings import RecordedRun
from gateway.report.summary import summarize
from persona.benchmark.loader import load_benchmark
from tests.conftest import TINY, BenchFactory

Graded = tuple[str, float, int, int, int, int]  # question, score, attempts, reads, writes, nudge-turn reads


def scaled(correct: str) -> str:
    return TINY["benchmark.json"].replace(
        "}\n",
        ' scale: { ladder: {s0: 0, s1: 2}, insert_before: "ch2.md", distractors: "../distractors",'
        f' seed: 1, budgets: [1], target: 0.8, correct: "{correct}" }},\n}}\n',
    )


def rollout(folder: Path, bench_dir: Path, name: str, graded: list[Graded]) -> RecordedRun:
    path = folder / name / EVENTS_FILE
    header = Header(run_id=name, benchmark={"rung": "s1"}, persona={"driver": "scripted"}, agent={"adapter": "x"})
    with RunLogWriter.create(path, header) as log:
        log.append(LLMExchange(kind="ordinary", model="m"))  # the agent's traffic was recorded
        for qid, score, attempts, reads, writes, nudge in graded:
            log.append(Asked(question_id=qid, text="?"))
            for _ in range(reads):
                log.append(MemoryCallSeen(tool="memory_search", operation="read", question_id=qid))
            for _ in range(writes):
                log.append(MemoryCallSeen(tool="memory_write", operation="write", question_id=qid))
            if attempts == 2:
                log.append(Said(text="Search your memory?", purpose="nudge", question_id=qid))
                for _ in range(nudge):
                    log.append(MemoryCallSeen(tool="memory_search", operation="read", question_id=qid))
            log.append(Evaluation(question_id=qid, score=score, attempts=attempts))
    bench = load_benchmark(bench_dir)
    run_log = read_log(path)
    return RecordedRun(path.parent, run_log, bench, summarize(run_log, bench))


ROLLOUTS: dict[str, list[Graded]] = {
    # q1 right at once with 1 read; q2 right but 2 reads; q3 right with writes only (R = 0)
    "r1": [("q1", 10, 1, 1, 0, 0), ("q2", 10, 1, 2, 0, 0), ("q3", 10, 1, 0, 3, 0)],
    # q1 "never told", right after the nudge (5 = 10 × 0.5) with 2 reads in the nudge turn
    "r2": [("q1", 5, 2, 0, 0, 2), ("q2", 10, 1, 0, 0, 0), ("q3", 0, 1, 1, 0, 0)],
    # stopped after q1: q2 and q3 never reached
    "r3": [("q1", 10, 1, 1, 0, 0)],
}


@pytest.fixture
def ladder_of(make_benchmark: BenchFactory, pool_beside: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    def build(correct: str):  # type: ignore[no-untyped-def]
        bench_dir = make_benchmark(benchmark__json=scaled(correct))
        runs = [rollout(tmp_path / correct, bench_dir, name, graded) for name, graded in ROLLOUTS.items()]
        (ladder,) = build_ladders(runs)
        (rung,) = ladder.rungs
        return ladder, rung

    return build


def test_pass_at_b_is_a_mean_over_questions_of_a_mean_over_their_rollouts(ladder_of) -> None:  # type: ignore[no-untyped-def]
    ladder, rung = ladder_of("first_try")
    cell = rung.cells[1]
    # per question, C ∧ R ≤ 1: q1 2/3 (r1, r3; r2 needed the nudge), q2 1/2 (r2), q3 1/2 (r1)
    assert cell.pass_rate == pytest.approx((2 / 3 + 1 / 2 + 1 / 2) / 3)  # 5/9; pooled would be 4/7
    # R > 1: only q2 on r1 → q2 1/2 → (0 + 1/2 + 0) / 3
    assert cell.p_exh == pytest.approx(1 / 6)
    assert cell.p_wrong == pytest.approx(1 - 5 / 9 - 1 / 6)
    assert rung.excluded == 2 and cell.rollouts == 7 and cell.questions == 3
    lo, hi = cell.interval
    assert 0 <= lo <= cell.pass_rate <= hi <= 1
    # R over the 7 pairs: 1, 2, 0, 0, 0, 1, 1 → sorted 0 0 0 1 1 1 2; rank 5.4 → 1.4
    assert rung.p90 == pytest.approx(1.4)
    assert (rung.writes, rung.nudge_calls) == (3, 2)
    text = render_ladder(ladder)
    assert "C(τ) = a fully correct answer at the first try (score 10, no nudge) (`correct: first_try`)" in text
    assert "linear interpolation" in text and "clustered by question" in text


@pytest.mark.parametrize(("rule", "q1_pass"), [("any_full", 1.0), ("score>=5", 1.0), ("score>=10", 2 / 3)])
def test_what_correct_means_is_the_ladders_choice(ladder_of, rule: str, q1_pass: float) -> None:  # type: ignore[no-untyped-def]
    """The nudged 5/10 (10 after the nudge) is correct under any_full and score>=5, not first_try."""
    _, rung = ladder_of(rule)
    assert rung.cells[1].pass_rate == pytest.approx((q1_pass + 1 / 2 + 1 / 2) / 3)
