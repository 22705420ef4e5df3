"""The LLM persona: a model plays the person, the engine keeps the agenda (design §4).

The model gets the universal prompt (`prompts/system.md`), the benchmark's scenario and the
live profile as its system parts, the current phase as a message, and seven tools. Its plain
text is its next message to the agent; its tool calls change the persona's state and may
yield actions for the runner (phase changes, fact edits, grades, slips). The engine decides
what the model can't be trusted with: when a phase may end, whether a message asks a
question, which attempt a grade belongs to and its ×0.5, and whether a fact marked told was
actually said (a `Slip` if not).

Given the same model responses and agent replies, the driver produces the same actions: the
runner logs each model response and, on resume, replays them before calling the model again.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from persona.benchmark.model import DELETED_MARKERS, Benchmark, Phase, Question, Utterance
from persona.drivers.actions import (
    AgentReply,
    Ask,
    EditFact,
    EnterPhase,
    Evaluate,
    Finish,
    MarkTold,
    PersonaAction,
    Purpose,
    Say,
    Slip,
    SlipKind,
    phase_action,
)
from persona.drivers.claims import disputed_grade, leaked_answer, questions_in, two_questions, wrong_language
from persona.drivers.give_up import GiveUp, PlayWatch, is_context_error
from persona.drivers.live_facts import LiveFacts
from persona.drivers.persona_compaction import Compaction, compacted
from persona.drivers.persona_prompt import language_part, reminder
from persona.drivers.protocol import PersonaCantPlay
from persona.drivers.tools import TOOL_SPECS
from persona.llm.types import LLMClient, LLMError, LLMRequest, LLMResponse, ToolUse, probe, replayed
from persona.outcome import RETRY_WEIGHT, weighted
from persona.terms import missing_details

PROMPTS = Path(__file__).parent / "prompts"
# what the model did that moves the benchmark on, for `PlayWatch` (asking a question does too)
_PROGRESS = (MarkTold, EditFact, EnterPhase, Evaluate, Finish)
PROFILE_HEADING = "# Your profile (always current)"  # the one system part that changes in a run
MAX_TOOL_ROUNDS = 16
_REASONING = re.compile(r"<(thinking|think|reasoning|scratchpad)>.*?</\1>", re.S | re.I)
_OUT_OF_ROLE = re.compile(
    r"\b(as an ai( language model| assistant)?|i am an ai|i'm an ai|how can i (help|assist) you( today)?|"
    r"как я могу (вам )?помочь|я (—|-)? ?ии)\b",
    re.I,
)


@dataclass
class QuestionState:
    question: Question
    attempts: int = 0
    answer: str = ""
    graded: bool = False


@dataclass
class _State:
    phase: int = -1
    messages: list[dict[str, Any]] = field(default_factory=list)
    boundaries: list[int] = field(default_factory=list)  # message index where each phase began
    files_read: list[str] = field(default_factory=list)
    read_mark: dict[str, int] = field(default_factory=dict)  # file → index into `sent` when read
    sent: list[str] = field(default_factory=list)
    questions: dict[str, QuestionState] = field(default_factory=dict)
    last_asked: str | None = None
    finished: bool = False


class LLMPersonaDriver:
    deterministic = True  # given the same model responses (the runner replays them)

    def __init__(
        self,
        benchmark: Benchmark,
        client: LLMClient,
        *,
        compaction: Compaction | None = None,
        temperature: float | None = None,
        give_up: GiveUp | None = None,
    ) -> None:
        self.benchmark = benchmark
        self.client = client
        self.name = f"llm:{client.name}"
        self.compaction = compaction or Compaction()
        self.temperature = temperature
        self.facts = LiveFacts(benchmark)
        self.universal = (PROMPTS / "system.md").read_text(encoding="utf-8")
        self.state = _State()
        self.queue: deque[PersonaAction] = deque()
        self.compactions = 0
        self.watch = PlayWatch(give_up or GiveUp())
        self.pending = ""  # the message beside the tool calls being run, sent after them
        self.window_known = False  # the config sized the compaction: the server's window can't override it

    # -- the PersonaDriver protocol --------------------------------------------------------

    async def start(self) -> None:
        """Before the first message: one free call to the persona's model — unreachable, a
        refused key or an unknown model is said now, with the fix; the window the server
        reports sizes the compaction unless the config did."""
        try:
            window = await probe(self.client)
        except LLMError as exc:
            raise PersonaCantPlay(
                f"the persona model can't be used: {exc} — check its URL, model name and key (api_key_env)"
            ) from None
        if window and not self.window_known:
            self.compaction = Compaction.for_window(window)

    async def next_action(self, reply: AgentReply | None) -> PersonaAction:
        if self.queue:
            return self.queue.popleft()
        if self.state.finished:
            return Finish()
        if self.state.phase < 0:
            self._enter(0)
            self._append("user", self._phase_text(self.benchmark.phases[0]))
        elif reply is not None:
            self._take_reply(reply)
        await self._think()
        return self.queue.popleft() if self.queue else Finish()

    # -- context ---------------------------------------------------------------------------

    def system_parts(self) -> list[str]:
        parts = [f"{self.universal.rstrip()}\n\n{language_part(self.benchmark.language)}"]
        if self.benchmark.instructions.strip():
            parts.append(f"# Your scenario\n\n{self.benchmark.instructions.strip()}")
        profile = self.facts.render("profile") if "profile" in self.facts.files else ""
        if profile:
            parts.append(f"{PROFILE_HEADING}\n\n{profile}")
        return parts

    def _append(self, role: str, content: str | list[dict[str, Any]]) -> None:
        """A message of `role`; one after a message of the same role joins it (the agent's
        reply to a message sent beside tool calls follows their results: roles alternate)."""
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        messages = self.state.messages
        if messages and messages[-1]["role"] == role and len(messages) not in self.state.boundaries:
            messages[-1] = {"role": role, "content": [*messages[-1]["content"], *blocks]}
            return
        messages.append({"role": role, "content": blocks})

    def _take_reply(self, reply: AgentReply) -> None:
        if reply.error is not None:
            text = f"(The assistant did not answer: {reply.error})"
        else:
            text = f"The assistant replied:\n{reply.text}"
        qid = self.state.last_asked
        if qid is not None:
            q = self.state.questions[qid]
            q.answer = reply.text if reply.error is None else ""
            self.state.last_asked = None
        self._append("user", text)

    def _maybe_compact(self, force: bool = False) -> bool:
        """Past `max_tokens` (or `force`d), cut the messages at a phase boundary
        (`persona_compaction.compacted`); whether anything was cut."""
        cut = compacted(self.state.messages, self.state.boundaries, self.compaction, self._recap, force)
        if cut is None:
            return False
        self.state.messages, self.state.boundaries = cut
        self.compactions += 1
        return True

    def _recap(self) -> str:
        lines = ["(Earlier conversation was trimmed to save space. What you need to know:)"]
        if "profile" in self.facts.files:
            lines += ["", "Your profile, current values:", self.facts.render("profile")]
        for name in self.state.files_read:
            if name != "profile":
                lines += ["", f"Facts file {name!r}, current values:", self.facts.render(name)]
        return "\n".join(lines)

    # -- thinking: model calls until a message (or the end) --------------------------------

    async def _think(self) -> None:
        nudged = False
        for _ in range(MAX_TOOL_ROUNDS):
            self._maybe_compact()
            response = await self._call()
            blocks: list[dict[str, Any]] = []
            if response.text:
                blocks.append({"type": "text", "text": response.text})
            blocks += [
                {"type": "tool_use", "id": t.id, "name": t.name, "input": t.arguments}
                for t in response.tool_uses
            ]
            if response.tool_uses:
                self._append("assistant", blocks)
                # a message beside the tool calls is sent once they ran: one model call, not two
                self.pending = _REASONING.sub("", response.text).strip()
                results = [self._run_tool(t) for t in response.tool_uses]
                self._append("user", results)
                text, self.pending = self.pending, ""
                if self.state.finished:
                    self.queue.append(Finish())
                    return
                if any(isinstance(a, Say) for a in self.queue):  # `ask_again` sent a message: await its reply
                    return
                moved = any(isinstance(a, EnterPhase) for a in self.queue)  # written for the phase before
                if text and not moved and not _OUT_OF_ROLE.search(text) and not any(r["is_error"] for r in results):
                    self._send(text)
                    return
                continue
            text = _REASONING.sub("", response.text).strip()
            if not text or (_OUT_OF_ROLE.search(text) and not nudged):
                if not nudged:  # one regeneration, with a reminder that stays out of the transcript
                    nudged = True
                    response = await self._call(reminder=reminder(empty=not text))
                    text = _REASONING.sub("", response.text).strip()
                    if response.tool_uses or not text:
                        self._append("assistant", blocks or [{"type": "text", "text": "..."}])
                        self._append("user", "(Please write your next message to the assistant.)")
                        continue
                if _OUT_OF_ROLE.search(text):
                    self.queue.append(Slip(SlipKind.OUT_OF_CHARACTER, text[:200]))
            self._append("assistant", text)
            self._send(text)
            return
        self.queue.append(Slip(SlipKind.STUCK, f"{MAX_TOOL_ROUNDS} tool rounds without a message"))
        self.watch.stuck(MAX_TOOL_ROUNDS, self.benchmark.phases[self.state.phase].title)
        self._append(
            "user", "(You have used many tools in a row. Write your next message to the assistant now.)"
        )

    async def _call(self, reminder: str | None = None) -> LLMResponse:
        messages = self.state.messages
        if reminder:
            messages = [*messages, {"role": "user", "content": [{"type": "text", "text": reminder}]}]
            if len(messages) >= 2 and messages[-2]["role"] == "user":  # keep roles alternating
                merged = {"role": "user", "content": [*messages[-2]["content"], *messages[-1]["content"]]}
                messages = [*messages[:-2], merged]
        system = self.system_parts()
        stable = len(system) - system[-1].startswith(PROFILE_HEADING)  # the live profile, last, changes
        request = LLMRequest(
            system=system, messages=messages, tools=TOOL_SPECS, temperature=self.temperature, stable_system=stable
        )
        try:
            return await self.client.complete(request)
        except LLMError as exc:
            if not is_context_error(str(exc)):
                raise PersonaCantPlay(f"the persona model failed: {exc}") from None
            # past the model's window: compact earlier from now on, cut now, and try once more
            self.compaction = Compaction(self.compaction.max_tokens // 2, self.compaction.trim_to_tokens // 2)
            if reminder is None and self._maybe_compact(force=True):
                try:
                    return await self._call()
                except PersonaCantPlay:
                    pass
            raise PersonaCantPlay(
                f"the persona model's context window can't hold the conversation ({exc}); "
                "give the model a larger window, or set persona `context_tokens` to the one it has"
            ) from None

    # -- what a message is -----------------------------------------------------------------

    def _send(self, text: str) -> None:
        asked = self._questions_in(text)
        question = asked[0] if asked else None
        asks = question is not None and not getattr(self.state.questions.get(question.id), "attempts", 0)
        lines = tuple(i.text for i in self.benchmark.phases[self.state.phase].items if isinstance(i, Utterance))
        checks = [two_questions(asked, text), wrong_language(self.benchmark.language, text, lines)]
        if asks and question is not None:
            checks.append(leaked_answer(question, text))
        self.queue.extend(slip for slip in checks if slip is not None)
        progressed = asks or any(isinstance(a, _PROGRESS) for a in self.queue)
        live = not replayed(self.client)  # a resume replays the log first
        self.watch.message(text, progressed, self.benchmark.phases[self.state.phase].title, live)
        self.state.sent.append(text)
        if question is not None:
            q = self.state.questions.setdefault(question.id, QuestionState(question))
            if q.attempts == 0:
                q.attempts = 1
                self.state.last_asked = q.question.id
                self.queue.append(Ask(q.question.id, text, q.question.expected, q.question.tags))
                return
        self.queue.append(Say(text, Purpose.PERSONA))

    def _questions_in(self, text: str) -> list[Question]:
        """The questions of the current phase that `text` asks, the one it asks first."""
        if self.state.phase < 0:
            return []
        asked = {qid for qid, q in self.state.questions.items() if q.attempts}
        return questions_in(self.benchmark.phases[self.state.phase].questions, asked, text)

    # -- phases ----------------------------------------------------------------------------

    def _enter(self, index: int) -> None:
        phase = self.benchmark.phases[index]
        self.state.phase = index
        self.state.boundaries.append(len(self.state.messages))
        self.queue.append(EnterPhase(phase.index, phase.chapter, phase.title, phase.require_all_facts))
        for action in phase.actions:
            self.queue.append(phase_action(action))

    def _phase_text(self, phase: Phase) -> str:
        total = len(self.benchmark.phases)
        lines = [f"Phase {phase.index + 1} of {total}: {phase.title}"]
        if "new_session" in phase.actions:
            lines.append(
                "(A new chat session with the assistant starts now: it sees none of the earlier messages, "
                "only what it remembers.)"
            )
        if phase.require_all_facts:
            lines.append(f"Before this phase ends, tell every fact of: {', '.join(phase.require_all_facts)}.")
        if phase.description:
            lines += ["", phase.description]
        return "\n".join(lines)

    def _unfinished(self) -> list[str]:
        phase = self.benchmark.phases[self.state.phase]
        problems = []
        for file in phase.require_all_facts:
            untold = self.facts.untold(file)
            if untold:
                problems.append(
                    f"{len(untold)} facts of {file} are not marked told yet ({', '.join(i for i, _ in untold[:12])})"
                )
        ungraded = [
            q.id
            for q in phase.questions
            if not (self.state.questions.get(q.id) and self.state.questions[q.id].graded)
        ]
        if ungraded:
            problems.append(f"questions not yet asked and graded: {', '.join(ungraded)}")
        return problems

    # -- tools -----------------------------------------------------------------------------

    def _run_tool(self, use: ToolUse) -> dict[str, Any]:
        handler = getattr(self, f"_tool_{use.name}", None)
        try:
            if handler is None:
                raise ToolInputError(f"unknown tool {use.name!r}")
            content, is_error = handler(use.arguments), False
        except ToolInputError as exc:
            content, is_error = f"Error: {exc}", True
        return {"type": "tool_result", "tool_use_id": use.id, "content": content, "is_error": is_error}

    def _file(self, args: dict[str, Any]) -> str:
        name = str(args.get("file", "")).removesuffix(".md")
        if name not in self.facts.files:
            raise ToolInputError(f"no facts file {name!r}; files: {', '.join(sorted(self.facts.files))}")
        return name

    def _tool_next_phase(self, args: dict[str, Any]) -> str:
        problems = self._unfinished()
        if problems:
            raise ToolInputError("this phase is not done: " + "; ".join(problems))
        if self.state.phase + 1 >= len(self.benchmark.phases):
            self.state.finished = True
            return "That was the last phase. The conversation is over; thank you."
        self._enter(self.state.phase + 1)
        return self._phase_text(self.benchmark.phases[self.state.phase])

    def _tool_facts_read(self, args: dict[str, Any]) -> str:
        name = self._file(args)
        if name not in self.state.files_read:
            self.state.files_read.append(name)
            self.state.read_mark[name] = len(self.state.sent)
        return self.facts.render(name)

    def _tool_facts_get_untold(self, args: dict[str, Any]) -> str:
        name = self._file(args)
        untold = self.facts.untold(name)
        if not untold:
            return f"All facts of {name} are told."
        return "\n".join(f"{fid} {text}" for fid, text in untold)

    def _tool_facts_mark_told(self, args: dict[str, Any]) -> str:
        name = self._file(args)
        ids = args.get("ids")
        if not isinstance(ids, list) or not ids:
            raise ToolInputError('`ids` must be a non-empty list of fact ids such as ["1.2"]')
        known = self.facts.files[name]
        unknown = [str(i) for i in ids if str(i).split(":")[-1] not in known]
        if unknown:
            raise ToolInputError(f"no fact {', '.join(unknown)} in {name}")
        said = "\n".join([*self.state.sent[self.state.read_mark.get(name, 0) :], self.pending])
        marked = []
        for raw in ids:
            fid = str(raw).split(":")[-1]
            missing = missing_details(known[fid], said)
            if missing:
                self.queue.append(
                    Slip(
                        SlipKind.FACT_NOT_SAID,
                        f"{name}:{fid} marked told, but {', '.join(missing)} never said since the file was read",
                        fact=f"{name}:{fid}",
                        missing=tuple(missing),
                    )
                )
            marked.append(f"{name}:{fid}")
        self.facts.mark_told(marked)
        self.queue.append(MarkTold(tuple(marked)))
        left = len(self.facts.untold(name))
        return f"Marked {len(marked)} told; {left} left in {name}."

    def _tool_facts_edit(self, args: dict[str, Any]) -> str:
        name = self._file(args)
        fid, text = str(args.get("id", "")), str(args.get("text", "")).strip()
        if fid not in self.facts.files[name]:
            raise ToolInputError(f"no fact {fid} in {name}; use facts_add for a new fact")
        if not text:
            raise ToolInputError("`text` is empty; write the new value, or — to delete the fact")
        old = self.facts.edit(name, fid, text)
        self.queue.append(EditFact(name, fid, old, text))
        return f"{name} {fid} {'deleted' if text in DELETED_MARKERS else 'updated'}."

    def _tool_facts_add(self, args: dict[str, Any]) -> str:
        name = self._file(args)
        section, text = str(args.get("section", "")).rstrip("."), str(args.get("text", "")).strip()
        if not section.isdigit():
            raise ToolInputError('`section` must be a section number such as "2"')
        if not text or text in DELETED_MARKERS:
            raise ToolInputError("`text` must be the new fact")
        used = {int(f.split(".")[1]) for f in self.facts.files[name] if f.split(".")[0] == section}
        fid = f"{section}.{next(n for n in range(1, len(used) + 2) if n not in used)}"
        self.facts.edit(name, fid, text)
        self.queue.append(EditFact(name, fid, None, text))
        return f"Added {name} {fid}."

    def _tool_ask_again(self, args: dict[str, Any]) -> str:
        """The persona's own decision that the assistant claimed not to know: its message
        asking it to search its memory is the question's second attempt (graded ×0.5)."""
        qid = str(args.get("question_id", ""))
        text = str(args.get("message", "")).strip()
        q = self.state.questions.get(qid)
        if q is None or q.attempts == 0:
            raise ToolInputError(f"question {qid!r} has not been asked; ask it first, exactly as written")
        if q.graded:
            raise ToolInputError(f"question {qid} is already graded")
        if q.attempts >= 2:
            raise ToolInputError(f"question {qid} was already asked again once; grade the answer now")
        if not text:
            raise ToolInputError("`message` is what you say to the assistant: ask it to search its memory")
        q.attempts = 2
        self.state.sent.append(text)
        self.state.last_asked = qid
        self.queue.append(Say(text, Purpose.NUDGE, question_id=qid))
        return f"Asked again; grade {qid} on the answer to this."

    def _tool_log_evaluation(self, args: dict[str, Any]) -> str:
        qid = str(args.get("question_id", ""))
        q = self.state.questions.get(qid)
        if q is None or q.attempts == 0:
            raise ToolInputError(f"question {qid!r} has not been asked; ask it first, exactly as written")
        if q.graded:
            raise ToolInputError(f"question {qid} is already graded")
        try:
            score = float(args.get("score"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ToolInputError("`score` must be a number from 0 to 10") from None
        if not 0 <= score <= 10:
            raise ToolInputError(f"score {score:g} is outside 0–10")
        q.graded = True
        if (disputed := disputed_grade(q.question, q.answer, score)) is not None:
            self.queue.append(disputed)
        comment = str(args.get("comment", ""))
        reason = comment if q.attempts == 1 else f"after a search-memory nudge (×{RETRY_WEIGHT}): {comment}"
        self.queue.append(
            Evaluate(
                qid,
                round(weighted(score, q.attempts), 2),
                reason,
                q.answer,
                q.attempts,
                0.0 if q.attempts == 2 else score,
                self.name,
            )
        )
        return f"Grade for {qid} logged."


class ToolInputError(ValueError):
    """Bad tool input: returned to the model as a tool error."""
