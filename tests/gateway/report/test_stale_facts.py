"""Misapplied old facts: a stale agent's answers are found from the run log alone."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from adapters.http_server import serve
from gateway.report.recordings import load_run
from gateway.report.stale_facts import misapplied_old_facts
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import TINY, BenchFactory


async def run_against(answers: dict[str, str], bench: Path, tmp_path: Path) -> list[str]:
    """A run of `bench` against an agent answering each question containing a key with its value."""

    async def agent(request: web.Request) -> web.Response:
        text = (await request.json())["message"]
        reply = next((a for key, a in answers.items() if key in text), "Noted.")
        return web.json_response({"reply": reply})

    app = web.Application()
    app.router.add_post("/chat", agent)
    served = await serve(app)
    try:
        agent_settings = {"adapter": "http", "url": f"{served.url}/chat"}
        await run_spec(RunSpec("r", bench, agent_settings, {"driver": "scripted"}), tmp_path)
    finally:
        await served.stop()
    return misapplied_old_facts(load_run(tmp_path / "r"))


async def test_an_answer_with_a_replaced_value_counts(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    # the benchmark updates "Miso is 4 years old" to "Miso turned 5 years old"
    stale = {"How old": "Miso is 4 years old.", "cat called": "Miso."}
    assert await run_against(stale, make_benchmark(), tmp_path) == ["q2"]


async def test_an_answer_with_a_replaced_name_counts_wherever_the_name_stands(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    renamed = TINY["ch1.md"].replace(
        "✎ pets 1.2 Miso turned 5 years old", "✎ pets 1.1 My cat is called Pumpkin now"
    )
    exam = TINY["ch2.md"].replace("Correct answer: Miso", "Correct answer: Pumpkin")
    bench = make_benchmark(ch1__md=renamed, ch2__md=exam)
    stale = {"cat called": "Miso, of course.", "How old": "Four."}
    assert await run_against(stale, bench, tmp_path) == ["q1"]


async def test_right_answers_and_a_name_the_update_kept_are_not_stale(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    right = {"cat called": "Your cat is Miso.", "How old": "Miso is 5 now.", "dog": "You never told me."}
    assert await run_against(right, make_benchmark(), tmp_path) == []


async def test_a_right_answer_that_names_the_history_is_not_misapplied(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """Issue 62: "Misapplied old facts" flagged answers graded right — one that names the old
    value as history ("5 now — she was 4 before") applies the update, it doesn't misapply it."""
    right = {"cat called": "Miso.", "How old": "Miso is 5 now — she was 4 years old before."}
    assert await run_against(right, make_benchmark(), tmp_path) == []
