"""The table of a run log's record tags and the reading of one record (design §6).

`event_from_record` turns a decoded msgpack map into its typed event: an unknown tag becomes an
`UnknownEvent` (older tools still show newer logs' known parts), a field of the wrong type or a
value that can't be (a time past any calendar, a kind off its list) an `InvalidEvent` that names
it — readers that display skip it, resume refuses to build on it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from gateway.log.events import (
    AgentInitiated,
    Asked,
    Blob,
    CanaryHit,
    CheckpointSaved,
    CompactionSeen,
    ErrorEvent,
    Evaluation,
    Event,
    EvidenceCheck,
    FactEdited,
    FactsMarked,
    FactTold,
    Header,
    InvalidEvent,
    LateReply,
    LLMExchange,
    MemoryCallFailed,
    MemoryCallSeen,
    MemoryResult,
    PersonaSlip,
    PersonaTurn,
    PhaseEntered,
    Replied,
    RunEnded,
    RunStart,
    Said,
    SessionChanged,
    UnknownEvent,
    enums_of,
)
from gateway.log.field_types import field_checks, problem

EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        FactsMarked,
        PersonaTurn,
        PersonaSlip,
        Blob,
        LLMExchange,
        CompactionSeen,
        MemoryCallSeen,
        MemoryCallFailed,
        MemoryResult,
        EvidenceCheck,
        CanaryHit,
        Header,
        RunStart,
        PhaseEntered,
        Said,
        Asked,
        Replied,
        FactTold,
        FactEdited,
        SessionChanged,
        CheckpointSaved,
        Evaluation,
        ErrorEvent,
        RunEnded,
        AgentInitiated,
        LateReply,
    )
}


# each type's field names, looked up once: dataclasses.fields() per record was a third of the
# time it takes to read a log
_FIELDS: dict[type[Event], frozenset[str]] = {
    cls: frozenset(f.name for f in dataclasses.fields(cls)) for cls in EVENT_TYPES.values()
}


# each type's field checks, built once from the declared types (an enum field: one of its values)
_CHECKS = {cls: field_checks(cls, _FIELDS[cls]) for cls in EVENT_TYPES.values()}


# a time any clock can show (1970 … 5138): `1e308` would overflow every date conversion
LATEST_TIME = 1e11


def _value_problem(cls: type[Event], record: dict[str, Any]) -> str:
    """A value of the right type that still can't be: a time past any calendar, a kind that is
    missing (every writer wrote each kind: an `end` without its reason is no completed run).
    Said in words, as a type problem is."""
    for name, enum in enums_of(cls).items():
        if name not in record:
            return f"field {name!r} is missing, expected one of {', '.join(repr(m.value) for m in enum)}"
    for name in ("ts", "created"):
        value = record.get(name)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue  # absent, or of another type: the type checks say so
        if not (math.isfinite(value) and 0 <= value < LATEST_TIME):
            return f"field {name!r} is {value!r}, not a time (seconds since 1970, below {LATEST_TIME:g})"
    return ""


def event_from_record(record: dict[str, Any]) -> Event:
    """A decoded msgpack map → its typed event; unknown tags and bad fields → `UnknownEvent`."""
    tag = record.get("t")
    cls = EVENT_TYPES.get(tag) if isinstance(tag, str) else None
    seq = record.get("seq", -1)
    ts = record.get("ts", 0.0)
    if cls is None:
        return UnknownEvent(tag=str(tag), data=record, seq=seq if isinstance(seq, int) else -1)
    names = _FIELDS[cls]
    wrong = problem(_CHECKS[cls], record) or _value_problem(cls, record)
    if wrong:
        return InvalidEvent(
            tag=str(tag),
            data=record,
            seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else -1,
            problem=f"a {tag!r} record: {wrong}",
        )
    try:  # enum values become members in Event.__post_init__
        return cls(**{k: v for k, v in record.items() if k in names})
    except TypeError:
        return UnknownEvent(
            tag=str(tag),
            data=record,
            seq=seq if isinstance(seq, int) else -1,
            ts=ts if isinstance(ts, float) else 0.0,
        )
