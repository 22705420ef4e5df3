"""Labelled sets for `marathon judge-check`: reading them (a bad line is a `SetError` naming
the file and line) and the benchmark questions they point at, with each question's evidence
and superseded values as the persona knows them when it asks.

A set is JSON Lines, one item a line, of three kinds (docs/grading.md):
- an answer to a benchmark's question: `{"benchmark": DIR, "question_id": ID, "answer": TEXT, "gold": SCORE}`
  (DIR relative to the set's file, or to the working folder);
- an answer to a question given in full: `{"language": L, "question": TEXT, "expected": TEXT,
  "tags": [...], "answer": TEXT, "gold": SCORE}`;
- a reply to test the never-told detector on: `{"language": L, "question": TEXT, "reply": TEXT,
  "never_told": BOOL}`, or `"stall": true` (no `never_told` needed) for a reply that only
  promises to look.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.loader import load_benchmark
from persona.benchmark.model import Benchmark, FactUpdate, Question
from persona.grading.exact import with_evidence
from persona.grading.judge import ExamItem, superseded_values

CALIBRATION = Path(__file__).resolve().parents[2] / "persona" / "grading" / "calibration"


def calibration_sets() -> list[Path]:
    """The shipped calibration sets (the grader's tuning sets; the held-out ones are apart)."""
    return sorted(CALIBRATION.glob("*.jsonl"))


class SetError(ValueError):
    """A set that can't be read: the file, the line and what was expected."""


@dataclass(frozen=True)
class AnswerItem:
    line: int
    language: str
    item: ExamItem
    gold: float
    shape: str = ""


@dataclass(frozen=True)
class ReplyItem:
    line: int
    language: str
    question: str
    reply: str
    never_told: bool
    stall: bool
    shape: str = ""


def read_set(path: Path) -> list[AnswerItem | ReplyItem]:
    """Every item of a set file, or SetError at the first bad line. Items are read once per
    version of the file (a benchmark item resolves its question's evidence, the slow part):
    callers share them and must not change them."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise SetError(f"{path}: can't read the set: {exc}") from None
    return list(_read_set(path, stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=64)
def _read_set(path: Path, mtime_ns: int, size: int) -> tuple[AnswerItem | ReplyItem, ...]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SetError(f"{path}: can't read the set: {exc}") from None
    out: list[AnswerItem | ReplyItem] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("//"):
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise SetError(f"{path}:{n}: not a JSON object on one line ({exc.msg})") from None
        if not isinstance(data, dict):
            raise SetError(f"{path}:{n}: expected a JSON object, got {type(data).__name__}")
        out.append(_item(path, n, data))
    return tuple(out)


def _item(path: Path, n: int, data: dict[str, Any]) -> AnswerItem | ReplyItem:
    where = f"{path}:{n}"
    shape = str(data.get("shape", ""))
    if "reply" in data:
        stall = data.get("stall", False)
        if not isinstance(stall, bool):
            raise SetError(f'{where}: "stall" must be true or false, got {stall!r}')
        never_told = data.get("never_told", False if stall else None)  # a stall claims nothing
        if not isinstance(never_told, bool):
            raise SetError(f'{where}: a reply item needs "never_told": true or false (or "stall": true)')
        if stall and never_told:
            raise SetError(f'{where}: a stall only promises to look: it can\'t be "never_told": true')
        return ReplyItem(
            n, str(data.get("language", "")), str(data.get("question", "")), str(data["reply"]),
            never_told, stall, shape,
        )  # fmt: skip
    gold = data.get("gold")
    if isinstance(gold, bool) or not isinstance(gold, (int, float)) or not 0 <= gold <= 10:
        raise SetError(f'{where}: "gold" must be a score in 0–10, got {gold!r}')
    if not isinstance(data.get("answer"), str):
        raise SetError(f'{where}: an answer item needs "answer": TEXT (or "reply" for a never-told item)')
    if "benchmark" in data:
        bench = _benchmark(_resolve(path, str(data["benchmark"])), where)
        question = next((q for q in bench.questions if q.id == data.get("question_id")), None)
        if question is None:
            raise SetError(f"{where}: no question {data.get('question_id')!r} in {bench.root}")
        graded, olds = _as_asked(bench.root.resolve(), question.id)
        item = ExamItem(graded, question.expected, [data["answer"]], list(olds))
        return AnswerItem(n, bench.language, item, float(gold), shape)
    if not isinstance(data.get("question"), str) or not isinstance(data.get("expected", ""), str):
        raise SetError(f'{where}: expected "benchmark" and "question_id", or "question" and "expected"')
    tags = data.get("tags", [])
    if not isinstance(tags, list):
        raise SetError(f'{where}: "tags" must be a list of strings')
    q = Question(f"line{n}", data["question"], data.get("expected", ""), tuple(map(str, tags)), path.name, n)
    superseded = [str(s) for s in data.get("superseded", [])]
    return AnswerItem(
        n,
        str(data.get("language", "")),
        ExamItem(q, q.expected, [data["answer"]], superseded),
        float(gold),
        shape,
    )


def _resolve(path: Path, folder: str) -> Path:
    beside = path.parent / folder
    return beside if beside.is_dir() else Path(folder)


@cache
def _benchmark_at(root: Path) -> Benchmark:
    return load_benchmark(root)


def _benchmark(root: Path, where: str) -> Benchmark:
    try:
        return _benchmark_at(root.resolve())
    except BenchmarkErrors as exc:
        raise SetError(f"{where}: the benchmark {root} doesn't load: {exc.errors[0]}") from None


@cache
def _as_asked(root: Path, question_id: str) -> tuple[Question, tuple[str, ...]]:
    """The question with its evidence, and the values superseded before it (once per question)."""
    bench = _benchmark_at(root)
    question = next(q for q in bench.questions if q.id == question_id)
    olds, now, earlier = facts_at(bench, question)
    if question.deleted:
        return with_evidence(question, now, earlier), ()
    return replace(with_evidence(question, now), superseded=tuple(olds)), tuple(olds)


def facts_at(
    bench: Benchmark, question: Question
) -> tuple[list[str], dict[tuple[str, str], str], dict[tuple[str, str], list[str]]]:
    """When `question` is asked: the values superseded before (`superseded_values`), every
    fact's current text by (file, fact id), and every updated fact's earlier texts."""
    current = {(f.file, f.id): f.text for ff in bench.facts.values() for f in ff.facts.values()}
    earlier: dict[tuple[str, str], list[str]] = defaultdict(list)
    for item in (i for phase in bench.phases for i in phase.items):
        if item is question:
            break
        if isinstance(item, FactUpdate):
            key = (item.file, item.fact_id)
            if key in current:
                earlier[key].append(current[key])
            current[key] = item.text
    return superseded_values(question.expected, earlier, current), current, earlier
