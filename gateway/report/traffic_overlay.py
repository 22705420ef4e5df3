"""A run's log as the reports read it: with a stored `rescore --traffic` re-derivation in place.

`marathon rescore RUN --traffic` (gateway/report/traffic_rescore.py) makes a run's traffic
readings again with today's rules and stores them beside the log in `traffic-rescore.msgpack`,
tied to the digest of the log they were derived from. `run_log(run_dir)` — what `load_run` and
every report, compare, the gate, the autopsy and verify's readers go through — returns the log
with those readings in place of the recorded ones. A stored re-derivation applies only to the
log it was made from: once the log grows (a resumed run) or changes, it is ignored, and
`marathon verify` names it stale.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import msgpack

from gateway.log.events import (
    Event,
    LLMExchange,
)
from gateway.log.lineage import inherited_events
from gateway.log.records import event_from_record
from gateway.log.runlog import EVENTS_FILE, RunLog, read_log
from gateway.report.grade_overlay import apply_regrading, log_digest
from gateway.traffic.profile import agent_profile
from gateway.traffic.rederive import Rederived, is_derived, rederive
from persona.benchmark.model import Benchmark
from persona.grading.exact import contains_expected

TRAFFIC_FILE = "traffic-rescore.msgpack"
MAGIC = "marathonbench.traffic-rescore"
FORMAT = 1


class TrafficRescoreError(ValueError):
    """A stored re-derivation can't be read (damaged, or of a newer format)."""


def rederive_run(run_dir: Path, log: RunLog, benchmark: Benchmark) -> Rederived:
    """The run's events with today's traffic readings. A fork's recorder starts from its parent's
    teaching, as the live one did (its exchanges may also refer to the parent's blobs). Raises
    `LineageError` (a `ValueError`) when a fork's parent can't be read: its readings can't be
    made again without it."""
    return rederive(
        log.events,
        benchmark,
        agent_profile(log.header.agent),
        evidence=contains_expected,
        inherited=inherited_events(log.path, log.header),
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
        if events_file.stat().st_size != self.source_size:
            return False  # grown (a resumed run): no need to hash it
        return (self.source_size, self.source_sha256) == log_digest(events_file)


def read_rederived(run_dir: Path) -> StoredRederivation | None:
    """The stored re-derivation, or None when there is none. Raises `TrafficRescoreError`."""
    path = run_dir / TRAFFIC_FILE
    if not path.exists():
        return None
    try:
        unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
        unpacker.feed(path.read_bytes())
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
    when one applies to this log (see the module's docstring), and its stored exact re-grading
    (gateway/report/grade_overlay.py); as recorded otherwise. Either way `log.notes` says which,
    when one exists."""
    log = read_log(run_dir / EVENTS_FILE)
    apply_rederivation(run_dir, log)
    apply_regrading(run_dir, log)  # and its grades, graded again by today's exact grader
    return log


def apply_rederivation(run_dir: Path, log: RunLog) -> str:
    """Put the run's stored re-derivation in place in `log` (read from `run_dir`), noting how in
    `log.notes`. Returns why one that exists could not be used (unreadable, or made from another
    state of the log — `marathon verify` names it), "" otherwise."""
    try:
        stored = read_rederived(run_dir)
    except TrafficRescoreError as exc:
        problem = f"{exc}: the traffic readings are the recorded ones — run `marathon rescore RUN --traffic` again"
        log.notes.append(problem)
        return problem
    if stored is None:
        return ""
    if not stored.applies_to(run_dir / EVENTS_FILE):
        problem = (
            f"{TRAFFIC_FILE} was derived from another state of the log (it grew or changed since): the traffic "
            "readings are the recorded ones — run `marathon rescore RUN --traffic` again"
        )
        log.notes.append(problem)
        return problem
    log.events = overlaid(log.events, stored.derived)
    log.notes.append(
        f"traffic readings re-derived by `marathon rescore RUN --traffic` (analyzer {stored.identity}), not as recorded"
    )
    return ""
