"""`judge-check` on never-told items measures the grader's own reading: an LLM judge's (the
loopback fake provider here), not the offline detector's; a reading it can't give is
unscored with the reason, never counted as "no claim"."""

from __future__ import annotations

import json
from pathlib import Path

from adapters.http_server import serve
from fakes.persona_model import FakePersonaModel
from gateway.report.judge_check import check_sets
from persona.grading.judge import ExactJudge, LLMJudge
from persona.llm.anthropic_client import AnthropicClient

ITEMS = [
    {
        "language": "en",
        "question": "What is my cat called?",
        "reply": "That one is a mystery to me.",
        "never_told": True,
    },
    {
        "language": "en",
        "question": "What is my cat called?",
        "reply": "You never told me her name.",
        "never_told": True,
    },
    {"language": "en", "question": "How old is Miso?", "reply": "Miso is 5.", "never_told": False},
]


async def test_never_told_items_are_read_by_the_grader_under_check(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in ITEMS))
    offline = (await check_sets(ExactJudge(), [path])).never_told["en"].to_json()
    assert (
        offline["recall"] == 0.5 and offline["false_positive"] == 0
    )  # the detector misses "a mystery to me"
    model = FakePersonaModel()
    provider = await serve(model.app())
    judge = LLMJudge(AnthropicClient("judge-model", base_url=provider.url, api_key="k"))
    try:
        judged = await check_sets(judge, [path])
        model.garble_judge = True
        garbled = await check_sets(judge, [path])
    finally:
        await judge.client.close()
        await provider.stop()
    assert judged.never_told["en"].to_json()["recall"] == 1.0 and not judged.unscored
    assert len(model.requests) == 6 and all("Reply: " in json.dumps(r["messages"]) for r in model.requests)
    unread = garbled.never_told["en"].to_json()
    assert unread["unscored"] == 3 and unread["recall"] is None
    assert garbled.unscored == [
        f"set.jsonl:{n}: unparseable judge output: 'Hard to say, honestly.'" for n in (1, 2, 3)
    ]


async def test_the_offline_reading_says_when_it_is_unsure(tmp_path: Path) -> None:
    """A claim beside a figure is nudged (it counts toward recall) but is no sure false positive
    when it was an answer; `unsure` and `best_guess` say what that costs."""
    items = [
        {"language": "en", "question": "When is my sister's birthday?", "never_told": True,
         "reply": "I don't have your sister's birthday saved. I only have your mum's, which is 3 May."},
        {"language": "en", "question": "Which hotel in Lisbon?", "never_told": False,
         "reply": "Casa do Rio. You didn't tell me the room number, though."},
        {"language": "en", "question": "What is my cat called?", "never_told": True, "reply": "You never told me."},
        {"language": "en", "question": "How old is Miso?", "never_told": False, "reply": "Miso is 5."},
    ]  # fmt: skip
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    figures = (await check_sets(ExactJudge(), [path])).never_told["en"].to_json()
    assert figures["recall"] == 1.0 and figures["false_positive"] == 0.0
    assert figures["unsure_claims"] == 0.5 and figures["unsure_answers"] == 0.5 and figures["unsure"] == 0.5
    assert figures["best_guess"] == {"recall": 1.0, "false_positive": 0.0}
