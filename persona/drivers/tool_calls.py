"""The LLM persona's tools at work: what each call does to the persona's state and which
actions it yields (`persona/drivers/tools.py` has their specs, as the model sees them).

Bad input never raises out of a tool: it comes back to the model as a tool error it can act
on (`ToolInputError`). The engine, not the model, keeps the agenda here: `next_phase` refuses
while the phase's required facts are untold or its questions ungraded; a fact marked told is
checked against what was said (a `Slip` if it never was), and one said only by the message
beside the call is told once the agent received that message; the retry rule's ×0.5 is applied
to a grade here, not by the model.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from persona.benchmark.model import DELETED_MARKERS, Benchmark, Phase, Question
from persona.drivers.actions import (
    EditFact,
    EnterPhase,
    Evaluate,
    MarkTold,
    PersonaAction,
    Purpose,
    Say,
    Slip,
    SlipKind,
    phase_action,
)
from persona.drivers.claims import disputed_grade
from persona.drivers.live_facts import LiveFacts
from persona.llm.types import ToolUse
from persona.outcome import RETRY_WEIGHT, weighted
from persona.terms import key_terms, missing_details, terms_match


@dataclass
class QuestionState:
    question: Question
    attempts: int = 0
    answer: str = ""
    graded: bool = False


@dataclass
class PersonaState:
    """What the persona holds between model calls (rebuilt exactly by a resume's replay)."""

    phase: int = -1
    messages: list[dict[str, Any]] = field(default_factory=list)
    boundaries: list[int] = field(default_factory=list)  # message index where each phase began
    files_read: list[str] = field(default_factory=list)
    read_mark: dict[str, int] = field(default_factory=dict)  # file → index into `sent` when read
    sent: list[str] = field(default_factory=list)
    questions: dict[str, QuestionState] = field(default_factory=dict)
    last_asked: str | None = None
    finished: bool = False
    # facts marked told on the message beside the tool calls being run (said only by it), then
    # on that message while it is in flight: told once the agent received it (issue 45 item 1)
    beside: list[str] = field(default_factory=list)
    in_flight: list[str] = field(default_factory=list)
    # facts changed this phase (`facts_edit`, `facts_add`): key → (new value, old value, index
    # into `sent` when changed); checked at the phase's end for a message that said the new value
    updates: dict[str, tuple[str, str | None, int]] = field(default_factory=dict)


class PersonaTools:
    """The tool calls and phase moves of `LLMPersonaDriver`, which holds these attributes."""

    benchmark: Benchmark
    facts: LiveFacts
    state: PersonaState
    queue: deque[PersonaAction]
    pending: str  # the message beside the tool calls being run, sent after them
    name: str

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
            waiting = [key for key in self.state.beside if key.startswith(f"{file}:")]
            if waiting:
                problems.append(
                    f"{', '.join(waiting)} are told only by your message beside these calls, which is sent "
                    "after them: send it first, then call next_phase"
                )
            untold = [(i, t) for i, t in self.facts.untold(file) if f"{file}:{i}" not in waiting]
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
        self._unsaid_updates()
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
        said = "\n".join(self.state.sent[self.state.read_mark.get(name, 0) :])
        marked, beside = [], []
        terms, pending = _Terms(said), _Terms(self.pending)
        for raw in ids:
            fid = str(raw).split(":")[-1]
            missing = missing_details(known[fid], said)
            if self.pending and _told_by_pending(known[fid], said, pending, bool(missing), terms):
                beside.append(f"{name}:{fid}")  # told by the message beside this call, once it is received
                continue
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
        if marked:
            self.facts.mark_told(marked)
            self.queue.append(MarkTold(tuple(marked)))
        self.state.beside += [key for key in beside if key not in self.state.beside]
        left = len(self.facts.untold(name)) - sum(key.startswith(f"{name}:") for key in self.state.beside)
        if beside:
            return (
                f"Marked {len(marked) + len(beside)} told ({len(beside)} once your message beside this call "
                f"reaches the assistant); {left} left in {name}."
            )
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
        if text in DELETED_MARKERS:
            self.state.updates.pop(f"{name}:{fid}", None)
        else:
            self.state.updates[f"{name}:{fid}"] = (text, old, len(self.state.sent))
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
        self.state.updates[f"{name}:{fid}"] = (text, None, len(self.state.sent))
        return f"Added {name} {fid}."

    def _unsaid_updates(self) -> None:
        """At a phase's end: each fact changed in it whose new value no message since the change
        said — its numbers, codes and names, or, a value without any, the words that changed —
        is an `update_not_said` slip naming what was never said (its questions are unscored:
        the agent answering the old value forgot nothing)."""
        for key, (new, old, at) in self.state.updates.items():
            said = "\n".join(self.state.sent[at:])
            missing = missing_details(new, said)
            if not missing and not missing_details(new, ""):  # no details: the words that changed
                before = key_terms(old or "")
                changed = [t for t in key_terms(new) if not any(terms_match(t, b) for b in before)]
                found = key_terms(said)
                if changed and not any(terms_match(c, f) for c in changed for f in found):
                    missing = changed
            if missing:
                self.queue.append(
                    Slip(
                        SlipKind.UPDATE_NOT_SAID,
                        f"{key} changed to {new!r}, but {', '.join(missing)} never said to the assistant after",
                        fact=key,
                        missing=tuple(missing),
                    )
                )
        self.state.updates.clear()

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


def _told_by_pending(fact: str, said: str, pending: _Terms, details_missing: bool, said_terms: _Terms) -> bool:
    """Whether the message beside the tool calls is what tells `fact`: it holds the details the
    messages sent so far lack, or — a fact said without details, or already said — more of the
    fact's key terms than they do (a batch marked told beside the next one rides on nothing)."""
    if details_missing:
        return not missing_details(fact, f"{said}\n{pending.text}")
    return pending.share(fact) > said_terms.share(fact)


class _Terms:
    """A text's key terms, found once: the share of a fact's it holds."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._found: list[str] | None = None

    def share(self, fact: str) -> float:
        wanted = key_terms(fact)
        if not wanted:
            return 0.0
        if self._found is None:
            self._found = key_terms(self.text)
        found = self._found
        return sum(any(terms_match(w, f) for f in found) for w in wanted) / len(wanted)


class ToolInputError(ValueError):
    """Bad tool input: returned to the model as a tool error."""
