"""The blind judge: re-grades an exam exchange without knowing whose it is.

It sees the question, the expected answer, the values that were true earlier and were
replaced, and the agent's answer(s) — never the agent's name, variant or the persona's grade.
Rubrics are data (`rubrics/*.md`): one per question type, chosen by the question's tags
(`[abstain]` routes explicitly, never by guessing). The verdict must be one JSON object with a
score in 0–10; anything else leaves the item **unscored** with the reason — never a silent 0.

A judge also reads whether a reply claims it was never told (`never_told`, rubric
`rubrics/never_told.md`): the reading that decides the retry rule's nudge, and the one
`marathon judge-check` measures on never-told items. An unreadable reading is `claim=None`
with the reason; the caller decides what stands in for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from persona.benchmark.model import DELETED_MARKERS, Question
from persona.grading.exact import ExactGrader, contains_expected
from persona.grading.never_told_reading import NeverToldReading, read_never_told
from persona.llm.types import LLMClient, LLMError, LLMRequest, Usage

RUBRICS = Path(__file__).parent / "rubrics"
CALIBRATION = RUBRICS / "calibration.json5"  # the set `marathon judge-check` measures a grader on
_RUBRIC_BY_TAG = ("deleted", "rule", "abstain", "update", "conflict", "temporal")  # the first tag found wins


@dataclass
class ExamItem:
    question: Question
    expected: str
    answers: list[str]  # first answer, then the answer after the nudge if there was one
    superseded: list[str] = field(default_factory=list)


@dataclass
class Verdict:
    score: float | None  # None: unscored (the reason says why)
    reason: str
    certain: bool = True  # False: the grader's best guess, not a verdict (the reason says why)
    # what the score may be: the score itself when certain; an uncertain grader may narrow its
    # range (None: 0–10 when uncertain)
    bounds: tuple[float, float] | None = None
    # the exact grader's rule that decided it and the rewrites before matching (rules.py); ""
    # and () from an LLM judge
    decided_by: str = ""
    rewrites: tuple[str, ...] = ()

    def range(self) -> tuple[float, float] | None:
        """The lowest and highest score this verdict allows; None when unscored."""
        if self.score is None:
            return None
        if self.certain:
            return (self.score, self.score)
        return self.bounds or (0.0, 10.0)


class Judge(Protocol):
    name: str
    usage: Usage

    async def judge(self, item: ExamItem) -> Verdict: ...

    async def never_told(self, question: str, reply: str) -> NeverToldReading:
        """Does `reply` claim it was never told what `question` asks, and give no value for it?
        `claim` None: no reading (the reason says why); `certain` False: a guess."""
        ...


def superseded_values[K](expected: str, earlier: Mapping[K, list[str]], current: Mapping[K, str]) -> list[str]:
    """The values replaced before a question was asked, of the facts (keyed alike in `earlier`
    and `current`) that now hold its `expected` answer: what a judge is shown as "earlier
    values, no longer true". Deleted facts hold nothing."""
    if not expected:
        return []
    return [
        old
        for key, olds in earlier.items()
        if key in current
        and current[key].strip() not in DELETED_MARKERS
        and contains_expected(expected, current[key])
        for old in olds
    ]


def rubric_for(question: Question) -> str:
    kind = next((t for t in _RUBRIC_BY_TAG if t in question.tags), "default")
    return (RUBRICS / f"{kind}.md").read_text(encoding="utf-8")


def render_item(item: ExamItem) -> str:
    lines = [f"Question: {item.question.text}"]
    lines.append(f"Expected answer: {item.expected or '(that the assistant was never told)'}")
    if item.superseded:
        lines.append(f"Earlier values, no longer true: {'; '.join(item.superseded)}")
    for n, answer in enumerate(item.answers, 1):
        lines.append(f"Answer {n}: {answer.strip() or '(no answer)'}")
    if len(item.answers) > 1:
        lines.append(
            "(Answer 2 came after the user asked the assistant to search its memory; grade answer 2.)"
        )
    return "\n".join(lines) + "\n"


def render_reply(question: str, reply: str) -> str:
    return f"Question: {question}\nReply: {reply.strip() or '(no reply)'}\n"


def _decoded(text: str) -> Any:
    """The judge's JSON, a ```json fence allowed; ValueError when it is none."""
    body = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.S)
    return json.loads(fenced.group(1) if fenced else body)


def parse_verdict(text: str) -> Verdict:
    """Strict: one JSON object with a numeric `score` in 0–10 (a ```json fence is allowed)."""
    try:
        data = _decoded(text)
    except ValueError:
        return Verdict(None, f"unparseable judge output: {text.strip()[:160]!r}")
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 10:
        return Verdict(None, f"judge gave no score in 0–10: {text.strip()[:160]!r}")
    return Verdict(float(score), str(data.get("reason", "")))


def parse_never_told(text: str) -> NeverToldReading:
    """Strict: one JSON object with a boolean `never_told` (a ```json fence is allowed)."""
    try:
        data = _decoded(text)
    except ValueError:
        return NeverToldReading(None, f"unparseable judge output: {text.strip()[:160]!r}")
    claim = data.get("never_told") if isinstance(data, dict) else None
    if not isinstance(claim, bool):
        return NeverToldReading(None, f"judge gave no never_told true/false: {text.strip()[:160]!r}")
    return NeverToldReading(claim, str(data.get("reason", "")))


class LLMJudge:
    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.name = f"judge:{client.name}"
        self.system = (RUBRICS / "system.md").read_text(encoding="utf-8")
        self.usage = Usage()

    async def judge(self, item: ExamItem) -> Verdict:
        text = await self._ask([self.system, rubric_for(item.question)], render_item(item), 300)
        return text if isinstance(text, Verdict) else parse_verdict(text)

    async def never_told(self, question: str, reply: str) -> NeverToldReading:
        rubric = (RUBRICS / "never_told.md").read_text(encoding="utf-8")
        text = await self._ask([rubric], render_reply(question, reply), 200)
        return NeverToldReading(None, text.reason) if isinstance(text, Verdict) else parse_never_told(text)

    async def _ask(self, system: list[str], text: str, max_tokens: int) -> str | Verdict:
        """The model's text, or an unscored Verdict saying why the call failed."""
        request = LLMRequest(
            system=system,
            messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
            max_tokens=max_tokens,
            temperature=None,
        )
        try:
            response = await self.client.complete(request)
        except LLMError as exc:
            return Verdict(None, f"judge call failed: {exc}")
        self.usage.add(response.usage)
        return response.text


class ExactJudge:
    """The exact grader behind the judge interface: offline, and a baseline for judge-check."""

    name = "exact"

    def __init__(self) -> None:
        self.grader = ExactGrader()
        self.usage = Usage()

    async def judge(self, item: ExamItem) -> Verdict:
        grade = self.grader.grade(item.question, item.expected, item.answers[-1] if item.answers else "")
        return Verdict(grade.score, grade.reason, grade.certain, grade.bounds(), grade.decided_by, grade.rewrites)

    async def never_told(self, question: str, reply: str) -> NeverToldReading:
        return read_never_told(reply, question)  # sure, or the detector's guess (`certain` False)


def make_judge(spec: str, base_url: str | None = None) -> Judge:
    if spec == "exact":
        return ExactJudge()
    from persona.llm.select import make_client, missing_key

    if problem := missing_key(spec, who="the judge"):
        raise ValueError(problem)  # said before any grading, not as the SDK's traceback
    return LLMJudge(make_client(spec, base_url=base_url))
