"""`marathon rescore` and `marathon judge-check`: grading again, blind, and checking a judge.

Rescoring reads a run's log, rebuilds each exam exchange (question, answer, nudge, second
answer) and the values superseded before it, and asks a judge for a verdict — and, for a nudged
question, first whether the first reply was a never-told claim at all (if it answered, that
answer counts, in full). It never writes
to the run's log: results go to `rescore-<grader>.json` and `.md` beside it. The score of
record for a retried question is the judge's score ×0.5, as for the persona's grades.
Agreement with the persona's grades is reported as a rate and Cohen's kappa over
correct/incorrect (score ≥ 5), unscored items apart.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import json5

from gateway.log.events import Asked, Evaluation, FactEdited, Replied, Said
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import Purpose
from gateway.report.cost import RoleCost
from gateway.report.grade_overlay import log_digest
from gateway.report.markdown import refresh_run_report
from gateway.report.recordings import benchmark_of
from gateway.report.traffic_overlay import run_log
from gateway.step_progress import StepProgress
from persona.benchmark.model import Question
from persona.grading.identity import grader_identity
from persona.grading.judge import CALIBRATION, ExactJudge, ExamItem, Judge, Verdict, superseded_values
from persona.outcome import PASS_SCORE, passed, weighted


@dataclass
class Rescored:
    question_id: str
    persona_score: float | None
    judge_score: float | None
    attempts: int
    reason: str
    certain: bool = True  # False: the judge's best guess (the exact grader was not sure)
    decided_by: str = ""  # the exact grader's rule (persona/grading/rules.py); "" from an LLM judge


def exam_items(run_dir: Path) -> tuple[list[ExamItem], dict[str, float]]:
    """The run's exam exchanges, and the persona's grades by question."""
    log = read_log(run_dir / EVENTS_FILE)
    bench = benchmark_of(log.header)
    questions = {q.id: q for q in bench.questions}
    items: dict[str, ExamItem] = {}
    persona: dict[str, float] = {}
    earlier: dict[tuple[str, str], list[str]] = {}  # fact → its earlier values
    current: dict[tuple[str, str], str] = {}  # fact → its value now (of the facts edited)
    awaiting: str | None = None
    for event in log.events:
        match event:
            case FactEdited() if event.old:
                earlier.setdefault((event.file, event.fact_id), []).append(event.old)
                current[(event.file, event.fact_id)] = event.new
            case Asked() if event.question_id in questions and event.question_id not in items:
                q = questions[event.question_id]
                items[q.id] = ExamItem(q, q.expected, [], superseded_values(q.expected, earlier, current))
                awaiting = q.id
            case Said() if event.purpose is Purpose.NUDGE and event.question_id in items:
                awaiting = event.question_id
            case Said() if event.purpose is Purpose.GO_AHEAD and event.question_id in items:
                if items[event.question_id].answers:  # the stall ("let me check") is no answer
                    items[event.question_id].answers.pop()
                awaiting = event.question_id
            case Replied() if awaiting is not None:
                items[awaiting].answers.append(event.text)
                awaiting = None
            case Evaluation():
                persona.setdefault(event.question_id, event.score)
    return [i for i in items.values() if i.answers], persona


def kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    pa = sum(a for a, _ in pairs) / n
    pb = sum(b for _, b in pairs) / n
    expected = pa * pb + (1 - pa) * (1 - pb)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


async def rescore(run_dir: Path, judge: Judge) -> tuple[list[Rescored], Path]:
    items, persona = exam_items(run_dir)
    results = []
    calls = 0
    progress = StepProgress(f"re-grading with {judge.name}", len(items))  # an LLM judge: minutes
    for item in items:
        read = ""
        unsure: Verdict | None = None  # the first try's verdict, where the retry reading is unsure
        if len(item.answers) > 1:  # the retry rule, read anew: was the first reply a never-told claim?
            calls += 1
            reading = await judge.never_told(item.question.text, item.answers[0])
            if reading.claim is False and reading.certain:
                item = replace(item, answers=item.answers[:1])
                read = "the first reply answered (no never-told claim), so it counts; "
            elif reading.claim is None or not reading.certain:
                calls += 1
                unsure = await judge.judge(replace(item, answers=item.answers[:1]))
                read = f"the retry reading is unsure ({reading.reason}); "
        verdict: Verdict = await judge.judge(item)
        calls += 1
        score = verdict.score
        if score is not None and len(item.answers) > 1:
            score = round(weighted(score, 2), 2)
        if unsure is not None and unsure.score != score:  # which try counts is open: no figure
            read += f"first try {_shown(unsure.score)}, nudged try {_shown(score)} — unresolved; "
            score = None
        results.append(
            Rescored(
                item.question.id,
                persona.get(item.question.id),
                score,
                len(item.answers),
                read + verdict.reason,
                verdict.certain and score is not None,
                verdict.decided_by,
            )
        )
        progress.advance(item.question.id)
    progress.close()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", judge.name)[:60]
    out = run_dir / f"rescore-{slug}.md"
    record: dict[str, Any] = {
        "grader": judge.name,
        "calls": calls,
        "usage": vars(judge.usage),
        "items": [asdict(r) for r in results],
    }
    if isinstance(judge, ExactJudge):  # today's exact grader: its grades replace the recorded ones
        size, digest = log_digest(run_dir / EVENTS_FILE)
        record |= {"grader_identity": grader_identity().as_dict(), "log": {"bytes": size, "sha256": digest}}
    (run_dir / f"rescore-{slug}.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    cost = RoleCost()
    if judge.usage.input or judge.usage.output:
        cost.add(judge.name.rsplit(":", 1)[-1].rsplit("#", 1)[-1], vars(judge.usage), calls=calls)
    out.write_text(render(judge.name, results, cost), encoding="utf-8")
    log = run_log(run_dir)  # a `rescore --traffic` re-derivation stays in place
    refresh_run_report(log, benchmark_of(log.header), run_dir)
    return results, out


def _shown(score: float | None) -> str:
    return "unscored" if score is None else f"{score:g}"


def agreement(results: list[Rescored]) -> tuple[list[tuple[bool, bool]], int]:
    pairs = [
        (passed(r.persona_score), passed(r.judge_score))
        for r in results
        if r.persona_score is not None and r.judge_score is not None
    ]
    return pairs, sum(1 for r in results if r.judge_score is None)


def render(name: str, results: list[Rescored], cost: RoleCost) -> str:
    pairs, unscored = agreement(results)
    scored = [r.judge_score for r in results if r.judge_score is not None]
    k = kappa(pairs)
    rate = sum(a == b for a, b in pairs) / len(pairs) if pairs else None
    lines = [
        f"# Rescore with {name}",
        "",
        "The judge saw each question, its expected answer, superseded values and the agent's answers — not the agent.",
        "",
        f"- judge mean: {sum(scored) / len(scored):.2f} / 10 over {len(scored)} scored"
        if scored
        else "- judge mean: — (nothing scored)",
        f"- unscored (judge output unusable, or which try counts unresolved): {unscored}",
        f"- agreement with the persona's grades (correct = score ≥ {PASS_SCORE:g}): "
        + (
            f"{rate:.0%} of {len(pairs)}, Cohen's kappa {k:.2f}"
            if rate is not None and k is not None
            else "—"
        ),
        f"- judge usage and cost: {cost.describe() if cost.calls else 'no model calls'}",
        "",
        "| question | persona | judge | attempts | judge's reason |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        persona = "—" if r.persona_score is None else f"{r.persona_score:g}"
        judge = "unscored" if r.judge_score is None else f"{r.judge_score:g}"
        lines.append(
            f"| {r.question_id} | {persona} | {judge} | {r.attempts} | "
        + (f"[{r.decided_by}] " if r.decided_by else "")
        + f"{r.reason.replace('|', '/')} |"
        )
    return "\n".join(lines) + "\n"


@dataclass
class CheckResult:
    recall: float | None
    specificity: float | None
    unscored: int
    total: int
    misses: list[str]
    unscored_reasons: list[str] = field(default_factory=list)


async def judge_check(judge: Judge, calibration: Path | None = None) -> CheckResult:
    path = calibration or CALIBRATION
    data: list[dict[str, Any]] = json5.loads(path.read_text(encoding="utf-8"))
    positives = negatives = true_pos = true_neg = unscored = 0
    misses = []
    reasons = []
    for n, entry in enumerate(data, 1):
        q = Question(
            f"cal{n}",
            entry["question"],
            entry.get("expected", ""),
            tuple(entry.get("tags", [])),
            "calibration",
            n,
        )
        verdict = await judge.judge(
            ExamItem(q, q.expected, [entry["answer"]], list(entry.get("superseded", [])))
        )
        if verdict.score is None:
            unscored += 1
            reasons.append(f"item {n} ({entry['answer'][:60]!r}): {verdict.reason}")
            continue
        said_correct = passed(verdict.score)
        if entry["correct"]:
            positives += 1
            true_pos += said_correct
        else:
            negatives += 1
            true_neg += not said_correct
        if said_correct != entry["correct"]:
            misses.append(
                f"{entry['answer']!r} judged {'correct' if said_correct else 'wrong'} ({entry.get('kind', 'correct answer')})"
            )
    return CheckResult(
        true_pos / positives if positives else None,
        true_neg / negatives if negatives else None,
        unscored,
        len(data),
        misses,
        reasons,
    )
