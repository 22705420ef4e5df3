"""The scripted persona: no LLM, every word taken from the benchmark (design §4).

It tells facts verbatim in small batches, says `> ` lines, applies `✎` updates to its live
fact copies (and tells the new text), asks each `❓` verbatim, grades with the exact grader and
applies the retry rule: an agent that says it was never told is asked once to search its
memory, and a correct second answer counts ×0.5 (with a judge, the judge reads whether a wrong
answer claims it was never told; the offline detector otherwise). It is deterministic — same replies in, same
actions out — which is what lets a run resume by replaying its log, and what makes the
evidence utterances identical across runs.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, replace
from typing import Any

from persona.benchmark.model import Benchmark, FactUpdate, Phase, Question, Utterance
from persona.drivers.actions import (
    AgentReply,
    Ask,
    EditFact,
    EnterPhase,
    Evaluate,
    Finish,
    PersonaAction,
    Purpose,
    Say,
    phase_action,
)
from persona.drivers.live_facts import LiveFacts
from persona.drivers.retry_rule import nudges, retried
from persona.grading.exact import ExactGrader, Grader, with_evidence
from persona.grading.grade import Grade
from persona.grading.judge import ExamItem, Judge, superseded_values
from persona.grading.never_told_reading import NeverToldReading
from persona.grading.stall import is_stall
from persona.outcome import weighted
from persona.phrases import phrases_for


@dataclass(frozen=True)
class ReadNeverTold:
    """The script asks its judge whether `reply` claims it was never told `question`; answered
    with a `NeverToldReading` by `next_action`, never seen by the runner."""

    question: str
    reply: str


type Step = PersonaAction | ReadNeverTold
type Script = Generator[Step, AgentReply | NeverToldReading | None, None]

DELIVERY_ATTEMPTS = 3  # sends of one message while the agent answers with errors


class ScriptedDriver:
    name = "scripted"
    deterministic = True

    def __init__(
        self,
        benchmark: Benchmark,
        *,
        facts_per_message: int = 3,
        grader: Grader | None = None,
        judge: Judge | None = None,
    ) -> None:
        """`judge`: decides the questions the exact grader is not sure of, live (so the retry
        rule still applies), and reads whether each first answer not graded right claims it was
        never told (the retry rule's nudge); without one, the grades it would decide stay
        unresolved and the offline detector reads the claims (unsure ones are nudged too)."""
        self.benchmark = benchmark
        self.facts_per_message = max(1, facts_per_message)
        self.grader = grader or ExactGrader()
        self.judge = judge
        self.facts = LiveFacts(benchmark)
        self._earlier: dict[tuple[str, str], list[str]] = {}  # a fact's values before its updates
        self._answers: dict[str, list[str]] = {}  # a question's answers: first, after the nudge
        self.phrases = phrases_for(benchmark.language)
        self._script: Script = self._run()
        self._started = False
        self._finished = False

    @staticmethod
    def settings(options: dict[str, Any]) -> dict[str, Any]:
        return {"driver": "scripted", "facts_per_message": int(options.get("facts_per_message", 3))}

    async def next_action(self, reply: AgentReply | None) -> PersonaAction:
        if self._finished:
            return Finish()
        try:
            if not self._started:
                self._started = True
                step = next(self._script)
            else:
                step = self._script.send(reply)
            while isinstance(step, ReadNeverTold):
                assert self.judge is not None  # the script asks only when it has one
                step = self._script.send(await self.judge.never_told(step.question, step.reply))
            action = step
        except StopIteration:
            action = Finish()
        if isinstance(action, Finish):
            self._finished = True
        if isinstance(action, Evaluate) and not action.certain and self.judge is not None:
            action = await self._judged(action)
        return action

    async def _judged(self, action: Evaluate) -> Evaluate:
        """The judge's verdict in place of the exact grader's guess; unscored, it stays a guess."""
        assert self.judge is not None
        if action.low is not None:  # which try counts is open: a never-told reading the judge didn't give
            return action
        q = next(q for q in self.benchmark.questions if q.id == action.question_id)
        live = {(f, i): t for f, facts in self.facts.files.items() for i, t in facts.items()}
        superseded = superseded_values(q.expected, self._earlier, live)
        verdict = await self.judge.judge(ExamItem(q, q.expected, self._answers.get(q.id, []), superseded))
        if verdict.score is None:
            return replace(action, reason=f"{action.reason}; the judge gave no verdict: {verdict.reason}")
        return replace(
            action,
            score=round(weighted(verdict.score, action.attempts), 2),
            reason=f"judge: {verdict.reason} — for the exact grader, which was not sure ({action.reason})",
            grader=self.judge.name,
            certain=True,
            decided_by="",  # the judge decided it (`grader`), not an exact grader's rule
            rewrites=(),
        )

    # -- the script ------------------------------------------------------------------------

    def _run(self) -> Script:
        for phase in self.benchmark.phases:
            yield from self.play_phase(phase)
        yield Finish()

    def play_phase(self, phase: Phase) -> Script:
        """One phase, start to end. Also plays a scale ladder's distractor sessions for drivers
        that don't (the LLM persona), so every rung's distractors read the same."""
        yield EnterPhase(phase.index, phase.chapter, phase.title, phase.require_all_facts)
        for action in phase.actions:
            yield phase_action(action)
        for file in phase.require_all_facts:
            yield from self._tell_file(file)
        for item in phase.items:
            if isinstance(item, Utterance):
                yield from self._deliver(Say(item.text, Purpose.DISTRACTOR if phase.distractor else Purpose.LINE))
            elif isinstance(item, FactUpdate):
                yield from self._update(item)
            elif isinstance(item, Question):
                yield from self._examine(item)

    def _deliver(
        self, action: Say | Ask
    ) -> Generator[Step, AgentReply | NeverToldReading | None, AgentReply | None]:
        """Send `action`, again while the agent answers with an error (up to DELIVERY_ATTEMPTS).

        A message the agent never got would silently turn a delivery failure into a memory
        failure; the runner pauses the run if the errors go on.
        """
        reply: AgentReply | None = None
        for _ in range(DELIVERY_ATTEMPTS):
            sent = yield action
            assert not isinstance(sent, NeverToldReading)  # only a ReadNeverTold is answered with one
            reply = sent
            if reply is not None and reply.error is None:
                break
        return reply

    def _tell_file(self, file: str) -> Script:
        """Tell each untold fact once, in batches; a batch that never got through stays untold
        (the coverage audit shows it)."""
        topic = self.facts.titles.get(file, file)
        untold = self.facts.untold(file)
        for start in range(0, len(untold), self.facts_per_message):
            batch = untold[start : start + self.facts_per_message]
            lines = "\n".join(f"- {text}" for _, text in batch)
            keys = tuple(f"{file}:{fid}" for fid, _ in batch)
            reply = yield from self._deliver(
                Say(f"{self.phrases['facts_intro'].format(topic=topic)}\n{lines}", Purpose.FACT, keys)
            )
            if reply is not None and reply.error is None:
                self.facts.mark_told(keys)

    def _update(self, update: FactUpdate) -> Script:
        old = self.facts.edit(update.file, update.fact_id, update.text)
        if old is not None:
            self._earlier.setdefault((update.file, update.fact_id), []).append(old)
        yield EditFact(update.file, update.fact_id, old, update.text)
        if not update.deletes:
            key = f"{update.file}:{update.fact_id}"
            reply = yield from self._deliver(
                Say(self.phrases["update"].format(text=update.text), Purpose.UPDATE, (key,))
            )
            if reply is not None and reply.error is None:
                self.facts.mark_told((key,))

    def _examine(self, q: Question) -> Script:
        reply = yield from self._deliver(Ask(q.id, q.text, q.expected, q.tags))
        if reply is not None and reply.error is None and is_stall(reply.text):
            # "let me check — one moment": not an answer yet; go ahead once, grade what follows
            reply = yield from self._deliver(Say(self.phrases["go_ahead"], Purpose.GO_AHEAD, question_id=q.id))
        first = self._grade(q, reply)
        answer = reply.text if reply else ""
        self._answers[q.id] = [answer]
        # the retry rule's reading of the first reply: the judge's where one is configured, else
        # the offline detector's, which may be unsure (then the reply is nudged too)
        claim, sure = first.never_told, first.never_told_certain
        why = "" if sure else first.never_told_reason
        if (
            self.judge is not None
            and not (first.correct or q.abstain)
            and reply is not None
            and reply.error is None
        ):
            reading = yield ReadNeverTold(q.text, reply.text)
            assert isinstance(reading, NeverToldReading)
            if reading.claim is None:
                gave = f"the judge gave no never-told reading ({reading.reason}), so the offline detector's stands"
                why = f"; {gave}" if sure else f"{why}; {gave}"
            else:
                claim, sure = reading.claim, reading.certain
                why = f"; never-told: {'yes' if claim else 'no'}, read by {self.judge.name}"
        if not nudges(first, abstain=q.abstain, claim=claim, sure=sure):
            note = why if sure else ""  # unsure, a right or [abstain] answer: no reading was needed
            yield Evaluate(
                q.id,
                first.score,
                first.reason + note,
                answer,
                1,
                first.score,
                self._grader_name,
                first.certain,
                decided_by=first.decided_by,
                rewrites=first.rewrites,
            )
            return
        nudge = self.phrases["nudge"].format(question=q.text)
        second_reply = yield from self._deliver(Say(nudge, Purpose.NUDGE, question_id=q.id))
        second = self._grade(q, second_reply)
        self._answers[q.id].append(second_reply.text if second_reply else "")
        yield retried(
            q.id,
            first,
            second,
            (answer, second_reply.text if second_reply else ""),
            self._grader_name,
            claim=claim,
            sure=sure,
            why=why,
        )

    @property
    def _grader_name(self) -> str:
        return type(self.grader).__name__

    def _grade(self, q: Question, reply: AgentReply | None) -> Grade:
        if reply is None or reply.error is not None:
            why = reply.error if reply else "no reply"
            return Grade(0.0, f"agent error: {why}")
        facts = {(f, i): t for f, facts in self.facts.files.items() for i, t in facts.items()}
        live = with_evidence(q, facts, self._earlier)
        return self.grader.grade(live, q.expected, reply.text)
