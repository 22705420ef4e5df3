"""Could the measurement see? The checks `marathon verify` makes of a run's traffic readings.

A run whose files are whole can still be blind: OpenClaw 2026.9.6's calls were all read as
background under one release's shape rule, so its runs had replies but no model call that
answered the persona, memory calls charged to no question, `/compact` answered "Compaction
finished" with no compaction seen — and verify said every invariant held. These checks read the
log as the reports do (with a `rescore --traffic` re-derivation in place, when one applies) and
name each blind spot with its figure:

- replies while the recorder listened, yet no model call answered the persona;
- a "recorder bypassed" warning beside recorded model calls (the two can't both be true);
- calls of a shape no rule knows (recorded as background, the profile names none of them);
- a compaction command the agent answered, with neither a compaction nor a summary call seen
  from its turn to the next turn's end;
- (and, in invariants.py, through `apply_rederivation`) a stored re-derivation that no longer
  applies to its log (the log grew or changed after it), or that can't be read.

What a caller may rely on: a run recorded without a recorder (no `llm_url` at any start) is not
judged by the first three; each problem is one line naming the figure.
"""

from __future__ import annotations

from gateway.log.events import (
    CompactionSeen,
    ErrorEvent,
    Event,
    LLMExchange,
    Replied,
    RunStart,
    SessionChanged,
)
from gateway.log.vocabulary import CallKind, ErrorKind, SessionAction


def traffic_problems(events: list[Event]) -> list[str]:
    """The blind spots of one run's readings (`events`: the log as the reports read it)."""
    if not any(isinstance(e, RunStart) and e.llm_url for e in events):
        return []
    problems: list[str] = []
    calls = [e for e in events if isinstance(e, LLMExchange) and e.kind.conversational]
    answering = [e for e in calls if e.kind is not CallKind.BACKGROUND]
    replies = [e for e in events if isinstance(e, Replied) and e.text.strip()]
    if replies and calls and not answering:
        problems.append(
            f"{len(replies)} replies while recording, {len(calls)} model calls recorded, none answered the "
            "persona (all background): the memory calls, compactions and evidence of this run were not "
            "measured — `marathon rescore RUN --traffic` re-reads them with today's rules"
        )
    bypassed = [e for e in events if isinstance(e, ErrorEvent) and e.kind is ErrorKind.RECORDER_BYPASSED]
    if bypassed and calls:
        problems.append(
            f"a 'recorder bypassed' warning beside {len(calls)} recorded model calls: the warning or the "
            "readings are wrong — `marathon rescore RUN --traffic` makes both again with today's rules"
        )
    unknown = [e for e in calls if e.decided_by == "shape"]
    noted = [e for e in events if isinstance(e, ErrorEvent) and e.kind is ErrorKind.BACKGROUND_UNRECOGNISED]
    if unknown or noted:
        count = f"{len(unknown)} model call(s)" if unknown else "model calls"
        problems.append(
            f"{count} of a shape no rule knows, recorded as the agent's own background work (not answering "
            "the persona, no background pattern names them): if they answered the persona under older rules, "
            "`marathon rescore RUN --traffic` re-reads them; if they are the agent's own work, add their "
            "prompt to `llm.background`"
        )
    problems += _unseen_compactions(events)
    return problems


def _unseen_compactions(events: list[Event]) -> list[str]:
    """Compaction commands the agent answered, with no compaction seen from the command's turn
    (the calls after the last reply before it) to the end of the next persona turn (an agent may
    compact when the next message arrives)."""
    found: list[str] = []
    replies = [i for i, e in enumerate(events) if isinstance(e, Replied)]
    for index, event in enumerate(events):
        if not (isinstance(event, SessionChanged) and event.action is SessionAction.COMPACT):
            continue
        if event.detail == "unsupported":
            continue
        start = max((i for i in replies if i < index), default=0)
        end = next((i for i in replies if i > index), len(events))
        window = events[start : end + 1]
        seen = any(isinstance(e, CompactionSeen) for e in window)
        # a summary call recorded: the agent tried, and its summary never reached an input (OpenClaw
        # answers "Compaction failed" when its check rejects one) — seen, not blind
        tried = any(isinstance(e, LLMExchange) and e.kind is CallKind.SUMMARY for e in window)
        if not seen and not tried:
            found.append(_unseen(event))
    return found


def _unseen(event: SessionChanged) -> str:
    said = " ".join(event.reply.split())[:80]
    return (
        f"the compaction command (event {event.seq}) was answered {said!r} but no compaction was seen in the "
        "recorded traffic: the compactions figure of this run is not what the agent did"
        if said
        else f"the compaction command (event {event.seq}) ran, but no compaction was seen in the recorded traffic"
    )
