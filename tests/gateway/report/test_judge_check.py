"""`judge-check` on never-told items measures the grader's own reading: an LLM judge's (the
loopback fake provider here), not the offline detector's; a reading it can't give is
unscored with the reason, never counted as "no claim"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from adapters.http_server import serve
from fakes.persona_model import FakePersonaModel
from gateway.report.judge_check import check_sets, render_set_result
from gateway.report.labelled_sets import SetError, read_set
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


async def test_what_a_nudge_costs_is_counted_sure_apart_from_unsure(tmp_path: Path) -> None:
    """Issue 49 item 6: recall is split into sure and unsure readings; the answers that merely
    look like claims and the set's graded answers say how many get nudged all the same."""
    items = [
        {"language": "en", "question": "When is my sister's birthday?", "never_told": True,
         "reply": "I don't have your sister's birthday saved. I only have your mum's, which is 3 May."},
        {"language": "en", "question": "What is my cat called?", "never_told": True, "reply": "You never told me."},
        {"language": "en", "question": "Which hotel in Lisbon?", "never_told": False,
         "reply": "Casa do Rio. You didn't tell me the room number, though."},
        {"language": "en", "question": "How old is Miso?", "never_told": False, "reply": "Miso is 5."},
        {"language": "en", "question": "What is my cat called?", "expected": "Miso", "answer": "Miso.", "gold": 10},
        {"language": "en", "question": "What is my cat called?", "expected": "Miso", "answer": "You never told me.",
         "gold": 0},
        {"language": "en", "question": "What is my cat called?", "expected": "Miso", "answer": "Mochi.", "gold": 0},
    ]  # fmt: skip
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    result = await check_sets(ExactJudge(), [path])
    figures = result.never_told["en"].to_json()
    assert figures["recall"] == 1.0 and figures["sure_recall"] == 0.5
    assert figures["false_positive"] == 0.0 and figures["nudged_answers"] == 0.5
    # of three graded answers, the never-told one is nudged; the right one and "Mochi." are not
    assert figures["graded_answers"] == 3 and figures["graded_nudged"] == 1 / 3
    assert [v.nudged for v in result.verdicts if v.kind == "answer"] == [False, True, False]


async def test_every_items_verdict_can_be_audited(tmp_path: Path) -> None:
    """Issue 49 item 7: `--items` gives every item's verdict (certain, score, low/high, reason);
    a never-told-only set's replies are counted; a stall item needs no never_told flag."""
    items = [
        {"language": "en", "question": "What is my cat called?", "expected": "Miso", "answer": "Miso.", "gold": 10},
        {"language": "en", "question": "What is my cat called?", "expected": "Miso", "answer": "Miso or Mochi, not sure.",
         "gold": 0},
        {"language": "en", "question": "Dog?", "reply": "You never told me about a dog.", "never_told": True},
        {"language": "en", "question": "Car serviced?", "reply": "Give me a second to look that up.", "stall": True},
    ]  # fmt: skip
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    result = await check_sets(ExactJudge(), [path])
    listed = result.to_json(items=True)["verdicts"]
    assert [(i["line"], i["kind"]) for i in listed] == [(1, "answer"), (2, "answer"), (3, "reply"), (4, "stall")]
    right, unsure, reply, stall = listed
    assert right["certain"] and right["score"] == right["low"] == right["high"] == 10.0 and right["right"]
    assert right["question"] == "What is my cat called?" and right["reason"] == "found 'Miso'"
    assert not unsure["certain"] and (unsure["low"], unsure["high"]) == (0.0, 10.0) and unsure["right"] is None
    assert unsure["score"] == 10.0 and unsure["reason"].startswith("not sure: a hedged answer")
    assert reply["claim"] is True and reply["certain"] and reply["right"] and reply["gold"] is True
    assert stall["claim"] is True and stall["right"] and result.never_told["en"].stalls_seen == 1
    assert "verdicts" not in result.to_json()  # only when asked: a set may have thousands
    assert result.to_json()["replies"] == 2
    only_replies = tmp_path / "replies.jsonl"
    only_replies.write_text("".join(json.dumps(i) + "\n" for i in items[2:]))
    text = render_set_result(await check_sets(ExactJudge(), [only_replies]), items=True)
    assert "2 never-told or stall replies, no graded answers" in text and "  all " not in text
    assert "replies.jsonl:2 en Car serviced? stall: right" in text


async def test_a_stall_flag_must_be_a_boolean_and_no_claim(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    for line, says in (
        ({"question": "Q", "reply": "One moment.", "stall": "yes"}, '"stall" must be true or false'),
        ({"question": "Q", "reply": "One moment.", "stall": True, "never_told": True}, "can't be \"never_told\""),
        ({"question": "Q", "reply": "One moment."}, 'needs "never_told": true or false (or "stall": true)'),
    ):
        path.write_text(json.dumps(line) + "\n")
        with pytest.raises(SetError, match=re.escape(f"{path}:1: ")) as raised:
            read_set(path)
        assert says in str(raised.value)


async def test_an_answer_whose_nudge_reading_fails_is_unscored_and_listed(tmp_path: Path) -> None:
    """A judge that grades an answer but can't read whether it claims never-told: whether the
    retry rule nudges it is unknown — unscored with the reason (exit 1), never counted as no."""
    path = tmp_path / "set.jsonl"
    item = {"language": "en", "question": "What is my cat called?", "expected": "Miso", "answer": "You never told me.", "gold": 0}
    path.write_text(json.dumps(item) + "\n")
    model = FakePersonaModel(garble_never_told=True)
    provider = await serve(model.app())
    judge = LLMJudge(AnthropicClient("judge-model", base_url=provider.url, api_key="k"))
    try:
        result = await check_sets(judge, [path])
    finally:
        await judge.client.close()
        await provider.stop()
    (verdict,) = result.verdicts
    assert verdict.score == 0.0 and verdict.certain and verdict.nudged is None
    why = "the never-told reading of the answer: unparseable judge output: 'Hard to say, honestly.'"
    assert result.unscored == [f"{path}:1: {why}"]
    figures = result.never_told["en"].to_json()
    assert figures["graded_answers"] == 0 and figures["unscored"] == 1
