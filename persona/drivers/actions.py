"""What a persona driver asks the runner to do, and what the runner hands back.

`persona` knows no transport and no log format: a driver returns these actions, the runner
performs them (sends, starts sessions) and logs them. Actions that need the agent's answer
(`Say`, `Ask`) are answered with the next call's `AgentReply`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Purpose(StrEnum):
    """Why a message was sent to the agent — the persona's (`Say.purpose`, logged as
    `Said.purpose`) or the gateway's own (`human` in `marathon chat`, `probe`)."""

    FACT = "fact"  # states facts of a file
    LINE = "line"  # a scripted line of a phase
    UPDATE = "update"  # tells a fact's new value
    NUDGE = "nudge"  # the retry rule's "search your memory" (the question's second try)
    DISTRACTOR = "distractor"  # a scale ladder's filler session
    GO_AHEAD = "go_ahead"  # lets the agent finish what it was doing before a question
    PERSONA = "persona"  # the LLM persona's own message
    HUMAN = "human"  # a person typing in `marathon chat`
    PROBE = "probe"  # `marathon probe`'s marker message


class SlipKind(StrEnum):
    """A rule of the persona's that the engine checks and the persona broke."""

    FACT_NOT_SAID = "fact_not_said"  # a fact marked told whose value was never said
    OUT_OF_CHARACTER = "out_of_character"
    STUCK = "stuck"  # tool rounds without a message
    ANSWER_LEAKED = "answer_leaked"  # the message asking a question holds its answer
    TWO_QUESTIONS = "two_questions"
    GRADE_DISPUTED = "grade_disputed"  # the exact grader is certain of another grade
    WRONG_LANGUAGE = "wrong_language"
    # facts marked told on a message written beside tool calls that was not sent: they stay untold
    MESSAGE_DROPPED = "message_dropped"
    # a fact's new value (`facts_edit`) never said to the agent: its questions are unscored
    UPDATE_NOT_SAID = "update_not_said"


@dataclass(frozen=True)
class AgentReply:
    """The agent's settled reply; `error` says why there is none (timeout, HTTP 500, ...)."""

    text: str
    error: str | None = None


@dataclass(frozen=True)
class EnterPhase:
    index: int
    chapter: str
    title: str
    require_all_facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Say:
    """A message to the agent, sent for `purpose`.

    `fact_ids` are `file:id` of the facts this message states; they count as told once the
    message was delivered.
    """

    text: str
    purpose: Purpose
    fact_ids: tuple[str, ...] = ()
    question_id: str | None = None


@dataclass(frozen=True)
class Ask:
    """An exam question, asked verbatim."""

    question_id: str
    text: str
    expected: str
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class NewSession:
    pass


@dataclass(frozen=True)
class Compact:
    """Ask the agent to compact its context (`await bench.compact();`)."""


@dataclass(frozen=True)
class Checkpoint:
    """Archive the agent's state here, between two settled turns (`await bench.checkpoint("NAME")`,
    or `checkpoint_at: "exam"`): runs can fork from it (docs/experiments.md)."""

    name: str


def phase_action(action: str) -> NewSession | Compact | Checkpoint:
    """A phase's opening directive (`Phase.actions`) as the action a driver yields for it."""
    if action == "new_session":
        return NewSession()
    if action.startswith("checkpoint:"):
        return Checkpoint(action.removeprefix("checkpoint:"))
    return Compact()


@dataclass(frozen=True)
class EditFact:
    """A live fact copy changes; `new` of `—` deletes it."""

    file: str
    fact_id: str
    old: str | None
    new: str


@dataclass(frozen=True)
class Evaluate:
    """The final grade of one question; `score` already includes the retry rule's ×0.5."""

    question_id: str
    score: float
    reason: str
    answer: str
    attempts: int = 1
    first_score: float = 0.0
    grader: str = "exact"
    certain: bool = True  # False: the grader's best guess; the question is unresolved until a judge decides
    # where an unresolved grade can lie, when that is known better than 0…10 (…5 after a nudge):
    # an unsure never-told reading spans the first try's grade and the nudged one's
    low: float | None = None
    high: float | None = None
    # the exact grader's rule that decided the counted try, and the rewrites before matching
    # (persona/grading/rules.py); "" and () when a judge or the LLM persona graded it
    decided_by: str = ""
    rewrites: tuple[str, ...] = ()


@dataclass(frozen=True)
class MarkTold:
    """Facts (`file:id`) the persona says it has told; the runner logs them as `fact_told`."""

    fact_ids: tuple[str, ...]


@dataclass(frozen=True)
class Slip:
    """The LLM persona broke a rule the engine can check (a fact marked told but never said,
    an out-of-character message, ...). Logged as `persona_slip`; the run goes on. `fact`
    (`file:id`) and `question_id` name what the slip is about, where it is about one."""

    kind: SlipKind
    detail: str
    fact: str = ""
    question_id: str = ""
    missing: tuple[str, ...] = ()  # fact_not_said: the fact's details never said


@dataclass(frozen=True)
class Finish:
    """The persona has nothing more to do: the run is complete."""


type PersonaAction = (
    EnterPhase
    | Say
    | Ask
    | NewSession
    | Compact
    | Checkpoint
    | EditFact
    | Evaluate
    | MarkTold
    | Slip
    | Finish
)
