"""`marathon rescore RUN --traffic`: a run's traffic readings made again with today's rules.

A user who upgrades gets old runs' call shapes, background labels, compactions, memory charges
and evidence checks corrected without running the agent again. The log is never written: the
re-derived readings go to `traffic-rescore.msgpack` beside it (with the digest of the log they
were derived from and the analyzer's identity), and a summary of what moved to
`traffic-rescore.md`. Every reader that goes through `run_log` (reports, compare, the gate,
the autopsy, verify) then sees the log with those readings in place of the recorded ones.

A stored re-derivation applies only to the log it was made from: once the log grows (a resumed
run) or changes, it is ignored, and `marathon verify` names it stale.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from gateway.log.events import (
    Asked,
    Blob,
    CompactionSeen,
    ErrorEvent,
    Evaluation,
    Event,
    EvidenceCheck,
    LLMExchange,
    MemoryCallSeen,
)
from gateway.log.lineage import LineageError, inherited_events
from gateway.log.records import event_from_record
from gateway.log.runlog import EVENTS_FILE, RunLog, read_log
from gateway.log.vocabulary import CallKind
from gateway.traffic.profile import agent_profile
from gateway.traffic.rederive import DERIVED_WARNINGS, Rederived, is_derived, rederive
from persona.benchmark.directives import SetVar
from persona.benchmark.model import Benchmark
from persona.grading.exact import contains_expected

TRAFFIC_FILE = "traffic-rescore.msgpack"
TRAFFIC_REPORT = "traffic-rescore.md"
MAGIC = "marathonbench.traffic-rescore"
FORMAT = 1
OUTSIDE = "—"  # the label of calls made while no question was open


class TrafficRescoreError(ValueError):
    """A stored re-derivation can't be read (damaged, or of a newer format)."""


def log_digest(path: Path) -> tuple[int, str]:
    data = path.read_bytes()
    return len(data), hashlib.sha256(data).hexdigest()


def rederive_run(run_dir: Path, log: RunLog, benchmark: Benchmark) -> Rederived:
    """The run's events with today's traffic readings (its benchmark's canaries armed as the run
    armed them; a fork's exchanges may refer to blobs of its parent's log)."""
    declared = benchmark.settings.get("canaries", [])
    canaries = [str(c) for c in declared] if isinstance(declared, list) else []
    revoked: dict[int, list[str]] = {}
    for index, phase in enumerate(benchmark.phases):
        for d in phase.directives:
            if isinstance(d, SetVar) and d.name == "revoke_canary":
                revoked.setdefault(index, []).extend(
                    str(m) for m in (d.value if isinstance(d.value, list) else [d.value])
                )
    try:
        inherited = inherited_events(log.path, log.header)
    except LineageError:
        inherited = []
    blobs = {e.ref: e.data for e in inherited if isinstance(e, Blob)}
    return rederive(
        log.events,
        agent_profile(log.header.agent),
        canaries=canaries,
        revoked=revoked,
        evidence=contains_expected,
        inherited_blobs=blobs,
    )


def write_rederived(run_dir: Path, result: Rederived) -> Path:
    """Store `result` beside the run's log, tied to the log's current bytes."""
    size, digest = log_digest(run_dir / EVENTS_FILE)
    head = {
        "magic": MAGIC,
        "format": FORMAT,
        "identity": result.identity,
        "source_size": size,
        "source_sha256": digest,
        "created": time.time(),
    }
    out = run_dir / TRAFFIC_FILE
    tmp = out.with_suffix(".tmp")
    with tmp.open("wb") as f:
        f.write(msgpack.packb(head, use_bin_type=True))
        for anchor, event in result.derived:
            f.write(msgpack.packb({"after": anchor, "event": event.to_record()}, use_bin_type=True))
    tmp.replace(out)
    return out


@dataclass
class StoredRederivation:
    identity: str
    source_size: int
    source_sha256: str
    derived: list[tuple[int, Event]] = field(default_factory=list)

    def applies_to(self, events_file: Path) -> bool:
        return (self.source_size, self.source_sha256) == log_digest(events_file)


def read_rederived(run_dir: Path) -> StoredRederivation | None:
    """The stored re-derivation, or None when there is none. Raises `TrafficRescoreError`."""
    path = run_dir / TRAFFIC_FILE
    if not path.exists():
        return None
    try:
        unpacker = msgpack.Unpacker(path.open("rb"), raw=False, strict_map_key=False)
        head = next(unpacker)
        if not isinstance(head, dict) or head.get("magic") != MAGIC:
            raise TrafficRescoreError(f"{path}: not a traffic re-derivation")
        if head.get("format") != FORMAT:
            raise TrafficRescoreError(f"{path}: format {head.get('format')!r}, this tool reads {FORMAT}")
        stored = StoredRederivation(
            str(head.get("identity")), int(head["source_size"]), str(head["source_sha256"])
        )
        for record in unpacker:
            if not isinstance(record, dict) or not isinstance(record.get("event"), dict):
                raise TrafficRescoreError(f"{path}: a record is not a derived event")
            stored.derived.append((int(record.get("after", -1)), event_from_record(record["event"])))
    except (StopIteration, ValueError, KeyError, TypeError, msgpack.UnpackException) as exc:
        if isinstance(exc, TrafficRescoreError):
            raise
        raise TrafficRescoreError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from exc
    return stored


def overlaid(events: list[Event], derived: list[tuple[int, Event]]) -> list[Event]:
    """`events` with the recorder's readings replaced by `derived` (each after its anchor)."""
    after: dict[int, list[Event]] = {}
    for anchor, event in derived:
        after.setdefault(anchor, []).append(event)
    out = list(after.get(-1, []))
    for event in events:
        if is_derived(event):
            continue
        mine = after.get(event.seq, [])
        if (
            isinstance(event, LLMExchange)
            and mine
            and isinstance(mine[0], LLMExchange)
            and mine[0].seq == event.seq
        ):
            out.extend(mine)
        else:
            out.append(event)
            out.extend(mine)
    return out


def run_log(run_dir: Path) -> RunLog:
    """The run's log as every report reads it: with its stored traffic re-derivation in place,
    when one applies to this log (see the module's docstring); as recorded otherwise."""
    log = read_log(run_dir / EVENTS_FILE)
    try:
        stored = read_rederived(run_dir)
    except TrafficRescoreError:
        return log  # verify names it; the recorded readings stand
    if stored is not None and stored.applies_to(run_dir / EVENTS_FILE):
        log.events = overlaid(log.events, stored.derived)
    return log


# -- the figures a re-derivation moves (and the CI corpus holds) -------------------------------


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
            "memory calls in background work": sum(self.background_memory.values()),
            "questions with an evidence check": len(self.evidence),
            "warnings": sum(self.warnings.values()),
        }


def render(
    run_id: str, before: TrafficFigures, after: TrafficFigures, identity: str, recorded_identity: str
) -> str:
    """traffic-rescore.md: what the re-derivation moved, figure by figure and question by question."""
    lines = [
        f"# Traffic re-derived: {run_id}",
        "",
        f"Today's traffic rules (analyzer {identity}) over the recorded exchanges; the log is unchanged.",
        f"Recorded with: {recorded_identity or 'an analyzer from before identities were kept'}.",
        "",
        "| figure | as recorded | re-derived |",
        "|---|---|---|",
    ]
    b, a = before.totals(), after.totals()
    lines += [f"| {k} | {b[k]} | {a[k]} |" for k in a]
    moved = []
    questions = sorted(set(before.answering) | set(after.answering) | set(before.memory) | set(after.memory))
    for q in questions:
        was = (before.answering.get(q, 0), sum(before.memory.get(q, {}).values()))
        now = (after.answering.get(q, 0), sum(after.memory.get(q, {}).values()))
        if was != now:
            moved.append(f"| {q} | {was[0]} → {now[0]} | {was[1]} → {now[1]} |")
    if moved:
        lines += [
            "",
            "Moved, by question:",
            "",
            "| question | answering calls | memory calls charged |",
            "|---|---|---|",
            *moved,
        ]
    if before.compactions != after.compactions:
        lines += [
            "",
            f"Compactions as recorded: {', '.join(before.compactions) or 'none'}.",
            f"Re-derived: {', '.join(after.compactions) or 'none'}.",
        ]
    if before.warnings != after.warnings:
        lines += [
            "",
            f"Warnings as recorded: {_counts(before.warnings)}; re-derived: {_counts(after.warnings)}.",
        ]
    return "\n".join(lines) + "\n"


def _counts(found: dict[str, int]) -> str:
    return ", ".join(f"{k} ×{n}" for k, n in sorted(found.items())) or "none"


def rescore_traffic(run_dir: Path) -> tuple[TrafficFigures, TrafficFigures, Path]:
    """Re-derive, store and summarise one run's traffic readings: (as recorded, re-derived,
    the summary's path). Raises `RunLogFormatError`, `BenchmarkErrors`, `OSError`."""
    from gateway.report.markdown import refresh_run_report
    from gateway.report.recordings import benchmark_of

    log = read_log(run_dir / EVENTS_FILE)
    result = rederive_run(run_dir, log, benchmark_of(log.header))
    write_rederived(run_dir, result)
    before, after = TrafficFigures.of(log.events), TrafficFigures.of(result.events)
    recorded = str(log.header.defines.get("traffic_analyzer", ""))
    log.events = result.events
    refresh_run_report(log, benchmark_of(log.header), run_dir)  # report.md as the reports now read it
    report = run_dir / TRAFFIC_REPORT
    report.write_text(render(log.header.run_id, before, after, result.identity, recorded), encoding="utf-8")
    return before, after, report
