"""The figures of a run's traffic readings, by question: what `rescore --traffic` reports as
moved and what the CI corpus of real agents' traffic holds each recorded run to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gateway.log.events import (
    Asked,
    CompactionSeen,
    ErrorEvent,
    Evaluation,
    Event,
    EvidenceCheck,
    LLMExchange,
    MemoryCallSeen,
)
from gateway.log.vocabulary import CallKind
from gateway.traffic.rederive import DERIVED_WARNINGS

OUTSIDE = "—"  # the label of calls made while no question was open


@dataclass
class TrafficFigures:
    """What a run's traffic readings say, by question (the label `OUTSIDE` for calls made while
    no question was open): model calls that answered the persona, background calls by what
    decided them, a compaction's own calls (summary, memory flush); compactions by kind and
    where; memory calls charged, by operation; the evidence check; the warnings."""

    answering: dict[str, int] = field(default_factory=dict)
    background: dict[str, dict[str, int]] = field(default_factory=dict)
    compaction_calls: dict[str, int] = field(default_factory=dict)
    compactions: list[str] = field(default_factory=list)
    memory: dict[str, dict[str, int]] = field(default_factory=dict)
    background_memory: dict[str, int] = field(default_factory=dict)
    evidence: dict[str, bool] = field(default_factory=dict)
    warnings: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, events: list[Event]) -> TrafficFigures:
        figures = cls()
        asking: str | None = None
        exchanges: dict[int, LLMExchange] = {}
        for event in events:
            match event:
                case Asked():
                    asking = event.question_id
                case Evaluation():
                    asking = None
                case LLMExchange() if event.kind.conversational:
                    exchanges[event.seq] = event
                    where = asking or OUTSIDE
                    if event.kind is CallKind.BACKGROUND:
                        by = figures.background.setdefault(where, {})
                        label = event.decided_by or "unlabelled"
                        by[label] = by.get(label, 0) + 1
                    elif event.kind is CallKind.ORDINARY:
                        figures.answering[where] = figures.answering.get(where, 0) + 1
                    else:  # a compaction's summary or memory-flush call
                        figures.compaction_calls[where] = figures.compaction_calls.get(where, 0) + 1
                case CompactionSeen():
                    figures.compactions.append(
                        f"{event.kind} @ {event.question_id or f'phase {event.phase}'}"
                    )
                case MemoryCallSeen():
                    if event.background:
                        figures.background_memory[event.operation] = (
                            figures.background_memory.get(event.operation, 0) + 1
                        )
                    else:
                        by = figures.memory.setdefault(event.question_id or OUTSIDE, {})
                        by[event.operation] = by.get(event.operation, 0) + 1
                case EvidenceCheck():
                    figures.evidence.setdefault(event.question_id, event.in_context)
                case ErrorEvent() if event.kind in DERIVED_WARNINGS:
                    figures.warnings[str(event.kind)] = figures.warnings.get(str(event.kind), 0) + 1
        return figures

    def as_json(self) -> dict[str, Any]:
        return {
            "answering": dict(sorted(self.answering.items())),
            "background": {k: dict(sorted(v.items())) for k, v in sorted(self.background.items())},
            "compaction_calls": dict(sorted(self.compaction_calls.items())),
            "compactions": list(self.compactions),
            "memory": {k: dict(sorted(v.items())) for k, v in sorted(self.memory.items())},
            "background_memory": dict(sorted(self.background_memory.items())),
            "evidence": dict(sorted(self.evidence.items())),
            "warnings": dict(sorted(self.warnings.items())),
        }

    def totals(self) -> dict[str, int]:
        return {
            "answering calls": sum(self.answering.values()),
            "background calls": sum(sum(v.values()) for v in self.background.values()),
            "summary and memory-flush calls": sum(self.compaction_calls.values()),
            "compactions": len(self.compactions),
            "memory calls charged to a question": sum(
                sum(v.values()) for k, v in self.memory.items() if k != OUTSIDE
            ),
            "memory calls of the conversation outside a question": sum(self.memory.get(OUTSIDE, {}).values()),
            "memory calls in background work": sum(self.background_memory.values()),
            "questions with an evidence check": len(self.evidence),
            "warnings": sum(self.warnings.values()),
        }
