"""The exact grader on the shipped calibration set (the set it was tuned on; the held-out
figures are bench/grading_figures.py's): floors that keep a later change from quietly making
grading worse, and the shape of what a set item is."""

from __future__ import annotations

import pytest

from gateway.report.judge_check import check_sets
from gateway.report.labelled_sets import calibration_sets, read_set
from persona.grading.judge import ExactJudge


def test_the_calibration_set_is_large_and_covers_every_tag() -> None:
    items = [item for path in calibration_sets() for item in read_set(path)]
    answers = [i for i in items if hasattr(i, "gold")]
    assert len(answers) >= 1200 and len(items) - len(answers) >= 650
    tags = {t for a in answers for t in a.item.question.tags}  # type: ignore[union-attr]
    assert {
        "abstain",
        "aggregation",
        "conflict",
        "correction",
        "deleted",
        "rule",
        "temporal",
        "update",
    } <= tags


@pytest.mark.parametrize("language", ["en", "ru"])
async def test_certain_verdicts_are_mostly_right_and_claims_are_caught(language: str) -> None:
    result = await check_sets(ExactJudge(), [p for p in calibration_sets() if p.stem.endswith(language)])
    answers = result.by_language[language].to_json()
    never = result.never_told[language].to_json()
    # the second tuning set (answers2-*, never-told2-*) is weighted to the hard wrong kinds (a
    # right value beside a wrong extra claim), the third (answers3-*) to right answers in
    # unusual forms, the sixth (answers6-*) to issue 49's families: floors a little under today's figures
    assert answers["accuracy_certain"] >= 0.97 and answers["coverage"] >= 0.74, answers
    # the retry rule's reading: claims nudged (sure or unsure), answers surely taken for claims,
    # and a ceiling on the unsure share (each costs a nudge, and a range where the tries differ)
    assert never["recall"] >= 0.96 and never["false_positive"] <= 0.01 and never["unsure"] <= 0.56, never
    assert answers["unscored"] == 0
