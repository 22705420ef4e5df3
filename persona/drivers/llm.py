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
from pathlib import Path
from typing import Any

from persona.benchmark.model import Benchmark, Question, Utterance
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
)
from persona.drivers.claims import leaked_answer, questions_in, two_questions, wrong_language
from persona.drivers.give_up import GiveUp, PlayWatch, is_context_error
from persona.drivers.live_facts import LiveFacts
from persona.drivers.persona_compaction import Compaction, compacted
from persona.drivers.persona_prompt import language_part, reminder
from persona.drivers.protocol import PersonaCantPlay
from persona.drivers.tool_calls import PersonaState, PersonaTools, QuestionState
from persona.drivers.tools import TOOL_SPECS
from persona.llm.types import LLMClient, LLMError, LLMRequest, LLMResponse, estimate_tokens, probe, replayed

PROMPTS = Path(__file__).parent / "prompts"
# what the model did that moves the benchmark on, for `PlayWatch` (asking a question does too)
_PROGRESS = (MarkTold, EditFact, EnterPhase, Evaluate, Finish)
PROFILE_HEADING = "# Your profile (always current)"  # the one system part that changes in a run
MAX_TOOL_ROUNDS = 16
# the most of a model's window the persona's fixed prompt may take, the rest for the conversation
# (demo-en's ~2,000-token prompt failed in play in a 2,054-token request; its exam fits 4,500)
FIXED_SHARE = 0.75
_REASONING = re.compile(r"<(thinking|think|reasoning|scratchpad)>.*?</\1>", re.S | re.I)
_OUT_OF_ROLE = re.compile(
    r"\b(as an ai( language model| assistant)?|i am an ai|i'm an ai|how can i (help|assist) you( today)?|"
    r"как я могу (вам )?помочь|я (—|-)? ?ии)\b",
    re.I,
)

class LLMPersonaDriver(PersonaTools):
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
        self.state = PersonaState()
        self.queue: deque[PersonaAction] = deque()
        self.compactions = 0
        self.watch = PlayWatch(give_up or GiveUp())
        self.pending = ""  # the message beside the tool calls being run, sent after them
        self.window_known = False  # the config sized the compaction: the server's window can't override it
        self.window: int | None = None  # the model's window as the config says it (`context_tokens`)

    # -- the PersonaDriver protocol --------------------------------------------------------

    async def start(self) -> None:
        """Before the first message: one free call to the persona's model — unreachable, a
        refused key or an unknown model is said now, with the fix; the window the server
        reports sizes the compaction unless the config did; a window (the config's or the
        server's) that can't hold the persona's fixed prompt is refused before the agent starts."""
        try:
            window = await probe(self.client)
        except LLMError as exc:
            raise PersonaCantPlay(
                f"the persona model can't be used: {exc} — check its URL, model name and key (api_key_env)"
            ) from None
        if window and not self.window_known:
            self.compaction = Compaction.for_window(window)
        known = self.window or window
        if known and (fixed := self.fixed_prompt_tokens()) > known * FIXED_SHARE:
            said = "the config's persona `context_tokens`" if self.window else "the server"
            raise PersonaCantPlay(
                f"the persona model's window of {known:,} tokens (as {said} says) can't hold the persona's "
                f"fixed prompt of about {fixed:,} tokens (its rules, the scenario, the profile, the tools and "
                f"the first phase) with room for a conversation — use a model with a window of at least "
                f"{int(fixed / FIXED_SHARE) + 1:,} tokens"
            )

    def fixed_prompt_tokens(self) -> int:
        """About how many tokens every request of the persona holds before any conversation:
        the system parts, the tool specs and the first phase's text (estimated as the
        compaction estimates)."""
        tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in TOOL_SPECS]
        first = self._phase_text(self.benchmark.phases[0]) if self.benchmark.phases else ""
        return estimate_tokens({"system": self.system_parts(), "tools": tools, "messages": [first]})

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
        riding, self.state.in_flight = self.state.in_flight, []
        if reply.error is not None:
            text = f"(The assistant did not answer: {reply.error})"
            if riding:
                text += f"\n(So the facts marked told on that message are not told: {', '.join(riding)}.)"
        else:
            text = f"The assistant replied:\n{reply.text}"
            if riding:  # the message that told them reached the agent: now they are told
                self.facts.mark_told(riding)
                self.queue.append(MarkTold(tuple(riding)))
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
                phase = self.state.phase
                results = [self._run_tool(t) for t in response.tool_uses]
                self._append("user", results)
                text, self.pending = self.pending, ""
                unsent = self._unsent(text, results, moved=self.state.phase != phase)
                if text and not unsent:
                    self.state.in_flight, self.state.beside = self.state.beside, []
                    self._send(text)
                    return
                self._dropped(unsent)
                if self.state.finished:
                    self.queue.append(Finish())
                    return
                if any(isinstance(a, Say) for a in self.queue):  # `ask_again` sent a message: await its reply
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

    def _unsent(self, text: str, results: list[dict[str, Any]], moved: bool) -> str:
        """Why the message written beside tool calls is not sent ("" when it is). (`moved`: the
        calls ended the phase. Not "an `EnterPhase` is queued": the first phase's is, while
        the model writes its first response, and a message there was dropped.)"""
        if not text:
            return ""
        if self.state.finished:
            return "the conversation ended"
        if any(isinstance(a, Say) for a in self.queue):
            return "`ask_again` sent its own message"
        if moved:
            return "it was written for the phase before `next_phase`"
        if _OUT_OF_ROLE.search(text):
            return "it speaks as an assistant, not as the person"
        if any(r["is_error"] for r in results):
            return "a tool call beside it failed"
        return ""

    def _dropped(self, why: str) -> None:
        """The message beside the tool calls was not sent: facts marked told on it stay untold
        (a `message_dropped` slip names them), and the model is told so in the tool results."""
        riding, self.state.beside = self.state.beside, []
        if not why:
            return
        note = f"(Your message beside these tool calls was not sent: {why}."
        if riding:
            note += f" The facts you marked told on it are not told: {', '.join(riding)}. Tell them again."
            self.queue.append(
                Slip(
                    SlipKind.MESSAGE_DROPPED,
                    f"{', '.join(riding)} marked told on a message that was never sent ({why})",
                )
            )
        if not self.state.finished:
            self._append("user", note + ")")

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
        progressed = asks or bool(self.state.in_flight) or any(isinstance(a, _PROGRESS) for a in self.queue)
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
