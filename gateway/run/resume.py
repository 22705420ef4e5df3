"""Resuming a run: its log read back into the conversation the runner continues.

A resumed run replays the logged replies into a fresh, deterministic persona driver and checks
each action the driver makes against the event it once logged (`same_action`). What a caller
may rely on: `conversation` pairs every logged persona action with the agent's answer to it
(or None), drops a send that a later resume re-sent, and leaves the last send unanswered when
the run paused on an agent error — so it is sent again, flagged `resent`.
"""

from __future__ import annotations

from gateway.log.events import (
    Asked,
    CheckpointSaved,
    ErrorEvent,
    Evaluation,
    Event,
    FactEdited,
    FactsMarked,
    FactTold,
    PersonaSlip,
    PhaseEntered,
    Replied,
    RunStart,
    Said,
    SessionChanged,
)
from gateway.log.vocabulary import ErrorKind, ErrorSource, SessionAction
from persona.drivers.actions import (
    AgentReply,
    Ask,
    Checkpoint,
    Compact,
    EditFact,
    EnterPhase,
    Evaluate,
    MarkTold,
    NewSession,
    PersonaAction,
    Say,
    Slip,
)

ACTION_EVENTS = (
    PhaseEntered,
    Said,
    Asked,
    SessionChanged,
    CheckpointSaved,
    FactEdited,
    Evaluation,
    FactsMarked,
    PersonaSlip,
)


def same_action(action: PersonaAction, event: Event) -> bool:
    """Does a replayed action match the logged event it once produced?"""
    match action, event:
        case EnterPhase(), PhaseEntered():
            return action.index == event.index and action.title == event.title
        case Say(), Said():
            return action.text == event.text and action.purpose == event.purpose
        case Ask(), Asked():
            return action.question_id == event.question_id and action.text == event.text
        case NewSession(), SessionChanged():
            return event.action is SessionAction.NEW_SESSION
        case Compact(), SessionChanged():
            return event.action is SessionAction.COMPACT
        case Checkpoint(), CheckpointSaved():
            return action.name == event.name
        case EditFact(), FactEdited():
            return (action.file, action.fact_id, action.new) == (event.file, event.fact_id, event.new)
        case Evaluate(), Evaluation():
            return action.question_id == event.question_id and action.score == event.score
        case MarkTold(), FactsMarked():
            return list(action.fact_ids) == event.fact_ids
        case Slip(), PersonaSlip():
            return action.kind == event.kind
    return False


def _resends(event: Said | Asked, earlier: Event) -> bool:
    return type(earlier) is type(event) and isinstance(earlier, (Said, Asked)) and earlier.text == event.text


def conversation(
    events: list[Event],
) -> tuple[list[tuple[Event, AgentReply | None]], str | None, list[tuple[str, str]]]:
    """Action events with their answers; the current session id; its (user, agent) turns."""
    pairs: list[tuple[Event, AgentReply | None]] = []
    session_id: str | None = None
    turns: list[tuple[str, str]] = []
    for event in events:
        if isinstance(event, RunStart) and event.session_id and session_id is None:
            session_id = event.session_id
        if isinstance(event, SessionChanged) and event.action is SessionAction.NEW_SESSION:
            session_id, turns = event.detail, []
        if isinstance(event, ACTION_EVENTS):
            if isinstance(event, (Said, Asked)) and event.resent and pairs and _resends(event, pairs[-1][0]):
                pairs.pop()  # the send, unanswered or failed, that a resume re-sent
            pairs.append((event, None))
        elif isinstance(event, Replied) and pairs and isinstance(pairs[-1][0], (Said, Asked)):
            pairs[-1] = (pairs[-1][0], AgentReply(event.text))
            sent = pairs[-1][0]
            assert isinstance(sent, (Said, Asked))
            turns.append((sent.text, event.text))
        elif (
            isinstance(event, ErrorEvent)
            and event.source is ErrorSource.AGENT_LLM
            and event.kind == ErrorKind.FAILED_ANSWER
            and pairs
            and isinstance(pairs[-1][0], (Said, Asked))
        ) or (
            (
                isinstance(event, ErrorEvent)
                and event.source is ErrorSource.AGENT
                and pairs
                and isinstance(pairs[-1][0], (Said, Asked))
            )
            and pairs[-1][1] is None
        ):
            pairs[-1] = (pairs[-1][0], AgentReply("", error=f"{event.kind}: {event.message}"))
    if pairs and pairs[-1][1] is not None and pairs[-1][1].error is not None:
        pairs[-1] = (pairs[-1][0], None)  # the run paused on this error: re-send it on resume
    return pairs, session_id, turns


def told_but_not_logged(events: list[Event], pairs: list[tuple[Event, AgentReply | None]]) -> list[str]:
    """Facts ("file:id") a message told — it was answered — or the LLM persona marked told, with
    no `fact_told` record: the run was killed between the reply and those records. A resumed
    run logs them, or the coverage audit would call them untold."""
    logged = {f"{e.file}:{e.fact_id}" for e in events if isinstance(e, FactTold)}
    told: list[str] = []
    for event, answer in pairs:
        if (isinstance(event, Said) and answer is not None and answer.error is None) or isinstance(
            event, FactsMarked
        ):
            told += event.fact_ids
    return [key for key in dict.fromkeys(told) if key not in logged]
