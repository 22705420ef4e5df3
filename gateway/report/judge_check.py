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

import asyncio
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from gateway.report.labelled_sets import AnswerItem, ReplyItem, read_set
from gateway.step_progress import StepProgress
from persona.drivers.retry_rule import nudges
from persona.grading.grade import Grade
from persona.grading.judge import Judge, Verdict
from persona.grading.stall import is_stall
from persona.outcome import is_full, passed


@dataclass(frozen=True)
class ItemVerdict:
    """One item's verdict, for auditing a set without running items one by one (`--items`).
    An answer: `score`, `certain`, `low`…`high` (the score when certain) and the reason; a
    reply: the reading (`claim`, `certain`) against the label; a stall: whether the stall rule
    saw it. `nudged`: whether the retry rule would nudge this reply (answers and replies)."""

    set: str  # the set's path as given (two sets may share a file name)
    line: int
    kind: Literal["answer", "reply", "stall"]
    language: str
    question: str  # the question's id for a benchmark's question, else its text
    answer: str
    gold: float | bool  # the gold score of an answer; `never_told` of a reply; True for a stall
    certain: bool
    score: float | None = None
    low: float | None = None
    high: float | None = None
    claim: bool | None = None
    nudged: bool | None = None
    reason: str = ""
    shape: str = ""
    decided_by: str = ""  # the exact grader's rule (persona/grading/rules.py); "" from an LLM judge
    rewrites: tuple[str, ...] = ()

    def right(self) -> bool | None:
        """Whether a certain verdict equals gold; None when uncertain or unscored."""
        if self.kind == "stall":
            return bool(self.claim)
        if not self.certain:
            return None
        if self.kind == "reply":
            return None if self.claim is None else self.claim == self.gold
        return None if self.score is None else round(self.score) == round(float(self.gold))


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
    sure_detected: int = 0  # claims surely read as claims
    nudged_answers: int = 0  # answers nudged: surely read as claims, or read unsure
    graded: int = 0  # answer items (with a gold score) the retry rule read
    graded_nudged: int = 0  # … and would nudge: not right, and read as a claim or unsure

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
            # … of which surely: recall without the unsure readings
            "sure_recall": share(self.sure_detected, self.claims),
            # answers nudged all the same (sure claims and unsure readings): what a nudge costs
            "nudged_answers": share(self.nudged_answers, self.answers),
            # the set's graded answers the retry rule would nudge (not right; a claim or unsure)
            "graded_answers": self.graded,
            "graded_nudged": share(self.graded_nudged, self.graded),
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
    verdicts: list[ItemVerdict] = field(default_factory=list)  # every item, in the sets' order

    def replies(self) -> int:
        """The never-told and stall items (a never-told-only set has no answers to count)."""
        return sum(1 for v in self.verdicts if v.kind != "answer")

    def to_json(self, items: bool = False) -> dict[str, Any]:
        """The figures; with `items`, every item's verdict too (`verdicts`, in the sets' order)."""
        out = {
            "grader": self.grader,
            "sets": self.sets,
            **self.total.to_json(),
            "replies": self.replies(),
            "by_language": {k: v.to_json() for k, v in sorted(self.by_language.items())},
            "by_tag": {k: v.to_json() for k, v in sorted(self.by_tag.items())},
            "never_told": {k: v.to_json() for k, v in sorted(self.never_told.items())},
            "unscored_items": self.unscored,
            "misses": self.misses,
        }
        if items:
            out["verdicts"] = [{**asdict(v), "right": v.right()} for v in self.verdicts]
        return out


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
                # the offline grader never waits: yield now and then, so Ctrl-C stops the check
                await asyncio.sleep(0)
    return result


async def _count_reply(result: SetResult, judge: Judge, path: Path, item: ReplyItem) -> None:
    tally = result.never_told[item.language or "?"]
    said = partial(
        ItemVerdict,
        str(path),
        item.line,
        language=item.language,
        question=item.question,
        answer=item.reply,
        shape=item.shape,
    )
    if item.stall:
        tally.stalls += 1
        seen = is_stall(item.reply)
        tally.stalls_seen += seen
        why = "the stall rule sees a promise to look" if seen else "the stall rule sees no stall"
        result.verdicts.append(said(kind="stall", gold=True, certain=True, claim=seen, reason=why))
        return
    reading = await judge.never_told(item.question, item.reply)
    if reading.claim is None:
        tally.unscored += 1
        result.unscored.append(f"{path.name}:{item.line}: {reading.reason}")
        result.verdicts.append(said(kind="reply", gold=item.never_told, certain=False, reason=reading.reason))
        return
    nudged = reading.claim or not reading.certain  # the retry rule nudges a claim and an unsure reply
    result.verdicts.append(
        said(
            kind="reply",
            gold=item.never_told,
            certain=reading.certain,
            claim=reading.claim,
            nudged=nudged,
            reason=reading.reason,
        )
    )
    if item.never_told:
        tally.claims += 1
        tally.detected += nudged
        tally.sure_detected += reading.claim and reading.certain
        tally.unsure_claims += not reading.certain
        tally.guessed += reading.claim
    else:
        tally.answers += 1
        tally.false_positive += reading.claim and reading.certain
        tally.nudged_answers += nudged
        tally.unsure_answers += not reading.certain
        tally.guessed_wrong += reading.claim
    if reading.certain and reading.claim != item.never_told:
        said_as = "taken for never-told" if reading.claim else "never-told missed"
        result.misses.append(f"{item.language}: {said_as}: {item.reply[:160]!r}")


async def _count_answer(result: SetResult, judge: Judge, path: Path, item: AnswerItem) -> None:
    tallies = [result.total, result.by_language[item.language or "?"]]
    tallies += [result.by_tag[t] for t in item.item.question.tags or ("untagged",)]
    verdict = await judge.judge(item.item)
    answer = item.item.answers[-1] if item.item.answers else ""
    for t in tallies:
        t.items += 1
    where = f"{path.name}:{item.line}"
    q = item.item.question
    nudged = await _nudged(result, judge, path, item, verdict, answer) if verdict.score is not None else None
    low, high = verdict.range() or (None, None)
    asked = q.text if q.chapter == path.name else q.id  # a question given in full has no id of its own
    sure = verdict.certain and verdict.score is not None
    result.verdicts.append(
        ItemVerdict(
            str(path),
            item.line,
            "answer",
            item.language,
            asked,
            answer,
            item.gold,
            sure,
            verdict.score,
            low,
            high,
            nudged=nudged,
            reason=verdict.reason,
            shape=item.shape,
            decided_by=verdict.decided_by,
            rewrites=verdict.rewrites,
        )
    )
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
        result.misses.append(
            f"{where} {q.id} (gold {item.gold:g}, graded {verdict.score:g}: {verdict.reason}): {answer[:160]!r}"
        )


async def _nudged(
    result: SetResult, judge: Judge, path: Path, item: AnswerItem, verdict: Verdict, answer: str
) -> bool | None:
    """Whether the retry rule would nudge this answer, as a run would: a first reply not graded
    right, on a question that is no abstention, read as a never-told claim or read unsure (the
    grader's own reading — the offline detector, or the judge's rubric)."""
    q = item.item.question
    if q.abstain:  # never nudged: "you never told me" is the answer there
        return False
    tally = result.never_told[item.language or "?"]
    first = Grade(verdict.score or 0.0, verdict.reason, certain=verdict.certain)
    reading = None if first.correct else await judge.never_told(q.text, answer)
    if reading is not None and reading.claim is None:  # no reading: whether it is nudged can't be said
        tally.unscored += 1
        result.unscored.append(f"{path}:{item.line}: the never-told reading of the answer: {reading.reason}")
        return None
    tally.graded += 1
    nudge = reading is not None and nudges(
        first, abstain=False, claim=bool(reading.claim), sure=reading.certain
    )
    tally.graded_nudged += nudge
    return nudge


def render_set_result(result: SetResult, items: bool = False) -> str:
    """The figures a person reads: per language, then per tag, then what went wrong; with
    `items`, every item's verdict after them."""

    def pct(v: float | None) -> str:
        return "—" if v is None else f"{v:.0%}"

    def line(name: str, t: Tally) -> str:
        j = t.to_json()
        return (
            f"  {name:<14} {t.items:>4} answers: certain {t.certain} (coverage {pct(j['coverage'])}), right when "
            f"certain {pct(j['accuracy_certain'])}; uncertain {t.uncertain}; unscored {t.unscored}; "
            f"false pass {t.false_pass}, false fail {t.false_fail}"
        )

    lines = [f"{result.grader} on {', '.join(result.sets)}:"]
    replies = result.replies()
    if result.total.items or not replies:
        lines.append(
            line("all", result.total)
            + (f"; and {replies} never-told or stall replies (below)" if replies else "")
        )
    else:  # a never-told-only set: its replies are what is counted
        lines.append(f"  {replies} never-told or stall replies, no graded answers")
    lines += [line(lang, t) for lang, t in sorted(result.by_language.items())]
    if result.by_tag:
        lines.append("by tag:")
        lines += [line(tag, t) for tag, t in sorted(result.by_tag.items())]
    for lang, nt in sorted(result.never_told.items()):
        j = nt.to_json()
        if nt.claims or nt.answers or nt.stalls or nt.unscored:
            lines.append(
                f"never-told, read by {result.grader} ({lang}): recall {pct(j['recall'])} of {nt.claims} claims "
                f"(sure {pct(j['sure_recall'])}, unsure {pct(j['unsure_claims'])}); of {nt.answers} answers "
                f"{pct(j['false_positive'])} surely taken for claims, {pct(j['nudged_answers'])} nudged all the "
                f"same (sure or unsure); best guess alone: recall {pct(j['best_guess']['recall'])}, false "
                f"positives {pct(j['best_guess']['false_positive'])}"
                + (f"; stalls recognised {pct(j['stalls_recognised'])} of {nt.stalls}" if nt.stalls else "")
                + (f"; unscored {nt.unscored} (listed below)" if nt.unscored else "")
            )
        if nt.graded:
            lines.append(
                f"nudges ({lang}): the retry rule would nudge {nt.graded_nudged} of {nt.graded} graded answers "
                f"({pct(j['graded_nudged'])}): not right, and read as a claim or unsure"
            )
    lines += [f"  unscored: {u}" for u in result.unscored]
    lines += [f"  miss: {m}" for m in result.misses[:40]]
    if len(result.misses) > 40:
        lines.append(f"  … and {len(result.misses) - 40} more misses (--json lists them all)")
    if items:
        lines.append("every item:")
        lines += [f"  {_item_line(v)}" for v in result.verdicts]
    return "\n".join(lines)


def _item_line(v: ItemVerdict) -> str:
    mark = (
        "unscored"
        if v.kind != "stall" and (v.score if v.kind == "answer" else v.claim) is None
        else {True: "right", False: "WRONG", None: "unsure"}[v.right()]
    )
    nudged = ", nudged" if v.nudged else ""
    where = f"{v.set}:{v.line} {v.language} {v.question[:40]}"
    if v.kind == "stall":
        return f"{where} stall: {mark} ({v.reason}): {v.answer[:100]!r}"
    if v.kind == "reply":
        read = (
            "unscored" if v.claim is None else ("claim" if v.claim else "answer") + ("" if v.certain else "?")
        )
        return f"{where} reply, never-told {v.gold}: read {read} → {mark}{nudged} ({v.reason}): {v.answer[:100]!r}"
    score = (
        "unscored"
        if v.score is None
        else f"{v.score:g}"
        if v.certain
        else f"{v.low:g}–{v.high:g} (guess {v.score:g})"
    )
    rule = f" [{v.decided_by}{''.join(f' after {r}' for r in v.rewrites)}]" if v.decided_by else ""
    return (
        f"{where} answer, gold {float(v.gold):g}: {score} → {mark}{nudged}{rule} ({v.reason}): {v.answer[:100]!r}"
    )
