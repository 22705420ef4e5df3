"""`marathon judge-check`: how right a grader is, on a set of labelled answers — the shipped
calibration set or a user's own.

A set is JSON Lines, one item a line, of three kinds:
- an answer to a benchmark's question: `{"benchmark": DIR, "question_id": ID, "answer": TEXT, "gold": SCORE}`
  (DIR relative to the set's file, or to the working folder);
- an answer to a question given in full: `{"language": L, "question": TEXT, "expected": TEXT,
  "tags": [...], "answer": TEXT, "gold": SCORE}`;
- a reply to test the never-told detector on: `{"language": L, "question": TEXT, "reply": TEXT,
  "never_told": BOOL}` (and `"stall": true` for a reply that only promises to look).

What a caller may rely on: every item is graded or counted `unscored` with its reason (a judge
that can't be reached is unscored, never a silent 0); an uncertain verdict (the exact grader
abstaining) is counted apart from the certain ones, so `accuracy_certain` is the share of
*certain* verdicts equal to gold and `coverage` the share of graded answers that got one; a
bad line is a `SetError` naming the file and line. `false_pass`: gold below the pass mark
(5) but a certain verdict at or above it; `false_fail`: gold 10 but a certain verdict below
10. Never-told figures, per language, are the grader's own reading (`Judge.never_told`: the
offline detector for `exact`, the rubric `never_told.md` for an LLM judge) — the reading that
decides the scripted persona's retry when that grader is its judge; a reply it can't read is
unscored with the reason. The reading may be unsure (the detector, where a claim and what may be
the value stand side by side): the persona nudges such a reply too, so `recall` counts the claims
that get their nudge (sure or unsure), `false_positive` the answers *surely* read as claims, and
`unsure` and `best_guess` say what that costs and what a yes/no detector would score. Stalls are
always the offline stall rule's.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from gateway.step_progress import StepProgress
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.loader import load_benchmark
from persona.benchmark.model import Benchmark, FactUpdate, Question
from persona.grading.exact import with_evidence
from persona.grading.judge import ExamItem, Judge, superseded_values
from persona.grading.stall import is_stall
from persona.outcome import is_full, passed

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


@dataclass
class Tally:
    items: int = 0
    certain: int = 0
    uncertain: int = 0
    unscored: int = 0
    right: int = 0  # certain and equal to gold
    false_pass: int = 0
    false_fail: int = 0

    def to_json(self) -> dict[str, Any]:
        graded = self.items - self.unscored
        return {
            "items": self.items,
            "certain": self.certain,
            "uncertain": self.uncertain,
            "unscored": self.unscored,
            "accuracy_certain": self.right / self.certain if self.certain else None,
            "coverage": self.certain / graded if graded else None,
            "false_pass": self.false_pass,
            "false_fail": self.false_fail,
        }


@dataclass
class NeverToldTally:
    claims: int = 0
    detected: int = 0
    answers: int = 0
    false_positive: int = 0
    stalls: int = 0
    stalls_seen: int = 0
    unscored: int = 0
    unsure_claims: int = 0
    unsure_answers: int = 0
    guessed: int = 0  # claims whose best guess (sure or not) is a claim
    guessed_wrong: int = 0  # answers whose best guess is a claim

    def to_json(self) -> dict[str, Any]:
        def share(n: int, of: int) -> float | None:
            return n / of if of else None

        return {
            "claims": self.claims,
            "answers": self.answers,
            "stalls": self.stalls,
            "unscored": self.unscored,
            # claims that get their nudge: read as claims, surely or not
            "recall": share(self.detected, self.claims),
            # answers surely read as claims: nudged, and the nudged try counted as if sure
            "false_positive": share(self.false_positive, self.answers),
            # replies read unsure: nudged, both tries graded; a range where they differ
            "unsure": share(self.unsure_claims + self.unsure_answers, self.claims + self.answers),
            "unsure_claims": share(self.unsure_claims, self.claims),
            "unsure_answers": share(self.unsure_answers, self.answers),
            # the reading forced to yes/no (its best guess), as a two-valued detector would
            "best_guess": {
                "recall": share(self.guessed, self.claims),
                "false_positive": share(self.guessed_wrong, self.answers),
            },
            "stalls_recognised": share(self.stalls_seen, self.stalls),
        }


@dataclass
class SetResult:
    grader: str
    sets: list[str]
    total: Tally = field(default_factory=Tally)
    by_language: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_tag: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    never_told: dict[str, NeverToldTally] = field(default_factory=lambda: defaultdict(NeverToldTally))
    unscored: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)  # certain and wrong: what to look at first

    def to_json(self) -> dict[str, Any]:
        return {
            "grader": self.grader,
            "sets": self.sets,
            **self.total.to_json(),
            "by_language": {k: v.to_json() for k, v in sorted(self.by_language.items())},
            "by_tag": {k: v.to_json() for k, v in sorted(self.by_tag.items())},
            "never_told": {k: v.to_json() for k, v in sorted(self.never_told.items())},
            "unscored_items": self.unscored,
            "misses": self.misses,
        }


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
        if not isinstance(data.get("never_told"), bool):
            raise SetError(f'{where}: a reply item needs "never_told": true or false')
        return ReplyItem(
            n, str(data.get("language", "")), str(data.get("question", "")), str(data["reply"]),
            data["never_told"], bool(data.get("stall", False)), shape,
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


async def check_sets(judge: Judge, paths: list[Path]) -> SetResult:
    result = SetResult(judge.name, [str(p) for p in paths])
    sets = [(path, read_set(path)) for path in paths]  # a bad set fails before any is judged
    with StepProgress(f"judging with {judge.name}", sum(len(items) for _, items in sets)) as progress:
        for path, items in sets:
            for item in items:
                if isinstance(item, ReplyItem):
                    await _count_reply(result, judge, path, item)
                else:
                    await _count_answer(result, judge, path, item)
                progress.advance(f"{path.name}:{item.line}")
    return result


async def _count_reply(result: SetResult, judge: Judge, path: Path, item: ReplyItem) -> None:
    tally = result.never_told[item.language or "?"]
    if item.stall:
        tally.stalls += 1
        tally.stalls_seen += is_stall(item.reply)
        return
    reading = await judge.never_told(item.question, item.reply)
    if reading.claim is None:
        tally.unscored += 1
        result.unscored.append(f"{path.name}:{item.line}: {reading.reason}")
        return
    nudged = reading.claim or not reading.certain  # the retry rule nudges a claim and an unsure reply
    if item.never_told:
        tally.claims += 1
        tally.detected += nudged
        tally.unsure_claims += not reading.certain
        tally.guessed += reading.claim
    else:
        tally.answers += 1
        tally.false_positive += reading.claim and reading.certain
        tally.unsure_answers += not reading.certain
        tally.guessed_wrong += reading.claim
    if reading.certain and reading.claim != item.never_told:
        said = "taken for never-told" if reading.claim else "never-told missed"
        result.misses.append(f"{item.language}: {said}: {item.reply[:160]!r}")


async def _count_answer(result: SetResult, judge: Judge, path: Path, item: AnswerItem) -> None:
    tallies = [result.total, result.by_language[item.language or "?"]]
    tallies += [result.by_tag[t] for t in item.item.question.tags or ("untagged",)]
    verdict = await judge.judge(item.item)
    for t in tallies:
        t.items += 1
    where = f"{path.name}:{item.line}"
    if verdict.score is None:
        for t in tallies:
            t.unscored += 1
        result.unscored.append(f"{where}: {verdict.reason}")
        return
    if not verdict.certain:
        for t in tallies:
            t.uncertain += 1
        return
    right = round(verdict.score) == round(item.gold)
    false_pass = not passed(item.gold) and passed(verdict.score)
    false_fail = is_full(item.gold) and not is_full(verdict.score)
    for t in tallies:
        t.certain += 1
        t.right += right
        t.false_pass += false_pass
        t.false_fail += false_fail
    if not right:
        q = item.item.question
        result.misses.append(
            f"{where} {q.id} (gold {item.gold:g}, graded {verdict.score:g}: {verdict.reason}): {item.item.answers[-1][:160]!r}"
        )


def render_set_result(result: SetResult) -> str:
    """The figures a person reads: per language, then per tag, then what went wrong."""

    def pct(v: float | None) -> str:
        return "—" if v is None else f"{v:.0%}"

    def line(name: str, t: Tally) -> str:
        j = t.to_json()
        return (
            f"  {name:<14} {t.items:>4} answers: certain {t.certain} (coverage {pct(j['coverage'])}), right when "
            f"certain {pct(j['accuracy_certain'])}; uncertain {t.uncertain}; unscored {t.unscored}; "
            f"false pass {t.false_pass}, false fail {t.false_fail}"
        )

    lines = [f"{result.grader} on {', '.join(result.sets)}:", line("all", result.total)]
    lines += [line(lang, t) for lang, t in sorted(result.by_language.items())]
    if result.by_tag:
        lines.append("by tag:")
        lines += [line(tag, t) for tag, t in sorted(result.by_tag.items())]
    for lang, nt in sorted(result.never_told.items()):
        j = nt.to_json()
        lines.append(
            f"never-told, read by {result.grader} ({lang}): recall {pct(j['recall'])} of {nt.claims} claims, false positives "
            f"{pct(j['false_positive'])} of {nt.answers} answers; unsure {pct(j['unsure_claims'])} of claims, "
            f"{pct(j['unsure_answers'])} of answers (nudged, both tries graded); best guess alone: recall "
            f"{pct(j['best_guess']['recall'])}, false positives {pct(j['best_guess']['false_positive'])}"
            + (f"; stalls recognised {pct(j['stalls_recognised'])} of {nt.stalls}" if nt.stalls else "")
        )
    lines += [f"  unscored: {u}" for u in result.unscored]
    lines += [f"  miss: {m}" for m in result.misses[:40]]
    if len(result.misses) > 40:
        lines.append(f"  … and {len(result.misses) - 40} more misses (--json lists them all)")
    return "\n".join(lines)
