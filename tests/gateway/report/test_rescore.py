"""Blind re-grading of a recorded run, and a judge's calibration check."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from adapters.http_server import ServedApp, serve
from fakes.persona_model import FakePersonaModel
from gateway.log.events import Evaluation
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.rescore import exam_items, judge_check, kappa, rescore
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.grading.judge import ExactJudge, LLMJudge, parse_verdict
from persona.llm.anthropic_client import AnthropicClient
from tests.conftest import DEMO, BenchFactory


@pytest.fixture
async def demo_run(tmp_path: Path) -> Path:
    await run_spec(RunSpec("demo", DEMO, {"adapter": "reference"}, {"driver": "scripted"}), tmp_path)
    return tmp_path / "demo"


@pytest.fixture
async def judge_model() -> AsyncIterator[tuple[FakePersonaModel, ServedApp]]:
    model = FakePersonaModel()
    served = await serve(model.app())
    yield model, served
    await served.stop()


async def test_exam_items_rebuild_each_exchange_and_its_superseded_values(demo_run: Path) -> None:
    items, persona = exam_items(demo_run)
    assert len(items) == 15 and len(persona) == 15
    rent = next(i for i in items if i.question.id == "q2")
    assert rent.answers and rent.superseded == ["The rent is 1,840 euros a month"]
    dentist = next(i for i in items if i.question.id == "q3")
    assert dentist.superseded == [
        "My dentist appointment is on 14 May",
        "My dentist appointment moved to 21 May",
    ]


async def test_rescore_with_a_blind_llm_judge(
    demo_run: Path, judge_model: tuple[FakePersonaModel, ServedApp]
) -> None:
    model, served = judge_model
    judge = LLMJudge(AnthropicClient("judge-model", base_url=served.url, api_key="k"))
    results, report = await rescore(demo_run, judge)
    await judge.client.close()
    assert len(results) == 15 and all(r.judge_score is not None for r in results)
    text = report.read_text()
    assert "agreement with the persona's grades" in text and "Cohen's kappa" in text
    sent = json.dumps(model.requests)
    assert (
        "reference" not in sent and "stand-in" not in sent and "demo" not in sent
    )  # blind: no agent, no run
    rubrics = [r["system"][1]["text"] for r in model.requests]
    assert any(r.startswith("Rubric for an updated fact") for r in rubrics)
    assert any(r.startswith("Rubric for a question about something the user never said") for r in rubrics)
    saved = json.loads((demo_run / "rescore-judge_anthropic_judge-model.json").read_text())
    assert saved["usage"]["input"] > 0
    run_report = (demo_run / "report.md").read_text()
    assert "| judge | 15 calls;" in run_report and "price unknown for judge-model" in run_report


async def test_rescore_reads_the_retry_rule_anew_a_nudged_answer_counts_in_full(
    make_benchmark: BenchFactory, tmp_path: Path, judge_model: tuple[FakePersonaModel, ServedApp]
) -> None:
    """The persona nudged "Mochi — I don't have her birthday saved, though" (the detector can't
    tell a claim from an answer there) and got "Miso." back: unresolved, 0 … 5. The judge reads
    the first reply as an answer, so the first try counts in full — a wrong 0, not the nudged
    try's 5."""

    async def chat(request: web.Request) -> web.Response:
        text = (await request.json())["message"]
        if "search your memory" in text:
            return web.json_response({"reply": "Miso."})
        if "cat called" in text:
            return web.json_response({"reply": "Mochi — I don't have her birthday saved, though."})
        return web.json_response({"reply": "Noted."})

    app = web.Application()
    app.router.add_post("/chat", chat)
    agent = await serve(app)
    try:
        await run_spec(RunSpec("r", make_benchmark(), {"adapter": "http", "url": f"{agent.url}/chat"}), tmp_path)
    finally:
        await agent.stop()
    graded = next(
        e for e in read_log(tmp_path / "r" / EVENTS_FILE).events if isinstance(e, Evaluation) and e.question_id == "q1"
    )
    assert not graded.certain and graded.bounds() == (0.0, 5.0)
    model, served = judge_model
    judge = LLMJudge(AnthropicClient("judge-model", base_url=served.url, api_key="k"))
    results, _ = await rescore(tmp_path / "r", judge)
    await judge.client.close()
    q1 = next(r for r in results if r.question_id == "q1")
    assert q1.attempts == 1 and q1.judge_score == 0 and q1.reason.startswith("the first reply answered")
    readings = [r for r in model.requests if "You are reading one reply" in json.dumps(r["system"])]
    assert len(readings) == 1  # only the nudged question's first reply is read for a claim
    saved = json.loads((tmp_path / "r" / "rescore-judge_anthropic_judge-model.json").read_text())
    assert saved["calls"] == len(model.requests) == 4  # three verdicts and one reading


async def test_a_garbled_judge_reply_leaves_the_item_unscored_not_zero(
    demo_run: Path, judge_model: tuple[FakePersonaModel, ServedApp]
) -> None:
    model, served = judge_model
    model.garble_judge = True
    judge = LLMJudge(AnthropicClient("judge-model", base_url=served.url, api_key="k"))
    results, report = await rescore(demo_run, judge)
    await judge.client.close()
    assert all(r.judge_score is None and "unparseable" in r.reason for r in results)
    assert "unscored (judge output unusable, or which try counts unresolved): 15" in report.read_text()


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ('{"score": 7, "reason": "ok"}', 7.0),
        ('```json\n{"score": 10, "reason": "ok"}\n```', 10.0),
        ('{"score": 11}', None),
        ('{"score": "10"}', None),
        ('{"score": true}', None),
        ("The answer is correct. Score: 10", None),
        ('Sure! {"score": 10}', None),
    ],
)
def test_verdicts_are_parsed_strictly(text: str, score: float | None) -> None:
    assert parse_verdict(text).score == score


async def test_judge_check_reports_recall_and_specificity() -> None:
    result = await judge_check(ExactJudge())
    assert result.total == 14 and result.unscored == 0
    assert result.recall == 1.0 and result.specificity is not None and result.specificity < 1.0
    assert any(
        "Lia and Nora" in m for m in result.misses
    )  # a list half right passes at ≥ 5: shown, not hidden


def test_kappa() -> None:
    assert kappa([(True, True), (False, False)]) == 1.0
    assert kappa([(True, False), (False, True)]) == -1.0
    assert kappa([]) is None
