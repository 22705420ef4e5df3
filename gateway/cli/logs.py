"""Commands that read one run's log: `inspect` (its timeline), `repair` (cut a damaged log
back to its intact records) and `state` (MarathonMemBench's state.json view, and the live
facts files written out). None of them takes the run's lock except `repair`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gateway.display import safe_text
from gateway.log.events import Blob, Event, InvalidEvent, LLMExchange, UnknownEvent
from gateway.log.lock import RunInUse
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError, read_log, repair_log, run_status
from gateway.report.recordings import benchmark_of
from gateway.report.state import run_state, write_facts
from gateway.report.traffic_overlay import run_log
from gateway.run.checkpoints import checkpoints_in
from persona.benchmark.errors import BenchmarkErrors


def _event_line(event: Event) -> str:
    fields = {k: v for k, v in event.to_record().items() if k not in ("t", "seq", "ts")}
    if isinstance(event, InvalidEvent):
        return f"INVALID, skipped — {event.problem}"
    if isinstance(event, UnknownEvent):
        return f"{event.tag} (unknown to this version)"
    if isinstance(event, Blob):
        return f"{event.ref[:12]} ({len(event.data):,} bytes)"
    if isinstance(event, LLMExchange):
        calls = ", ".join(str(c.get("name")) for c in event.tool_calls)
        new = len(event.message_refs)  # the request's messages: a stored prefix, then these
        return (
            f"{event.api} {event.model} {event.kind} status={event.status} "
            f"messages={event.base_len + new} ({new} new) "
            f"input_tokens={event.input_tokens}"
            + (f" tool_calls=[{calls}]" if calls else "")
            + (f" question={event.question_id}" if event.question_id else "")
        )
    text = fields.pop("text", None)
    parts = [f"{k}={v}" for k, v in fields.items() if v is not False and v not in (None, "", [], {})]
    if text is not None:
        parts.append(repr(text if len(text) <= 100 else text[:97] + "..."))
    return " ".join(parts)


def cmd_inspect(run: Path, limit: int) -> int:
    path = run / EVENTS_FILE if run.is_dir() else run
    try:  # a run folder is read as the reports read it: a `rescore --traffic` re-derivation in place
        log = run_log(path.parent) if path.name == EVENTS_FILE else read_log(path)
    except (OSError, RunLogFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    h = log.header
    print(f"run {h.run_id} — log format {log.format}, marathonbench {h.tool_version}")
    print(
        f"benchmark {h.benchmark.get('name')} ({str(h.benchmark.get('hash', ''))[:16]}); "
        f"persona {h.persona}; agent model {h.agent.get('model', '?')}"
    )
    if h.agent.get("offline_stand_in"):
        print("note: the agent's model is the offline rule-based stand-in, not an LLM")
    for note in log.notes:
        print(f"note: {note}")
    if h.parent:
        print(
            f"forked from {h.parent.get('run')} at checkpoint {h.parent.get('checkpoint')!r} (its event "
            f"{h.parent.get('seq')}; state {str(h.parent.get('state_hash'))[:12]}): the events before are the parent's"
        )
    t0 = h.created
    events = log.events[:limit] if limit else log.events
    for event in events:
        line = safe_text(
            _event_line(event), one_line=True
        )  # one event, one line: an answer can't pose as more
        print(f"{event.seq:>6} {event.ts - t0:>9.3f}s {event.type:<11} {line}")
    if limit and len(log.events) > limit:
        print(f"... {len(log.events) - limit} more events")
    for c in checkpoints_in(h.run_id, path.parent, log.events):
        print(
            f"checkpoint {c.name!r}: event {c.seq}, state {c.state_hash[:12]}, {c.archive} ({c.bytes:,} bytes) — "
            f"fork with: marathon fork {path.parent} --at {c.name}"
        )
    status = run_status(log)
    print(f"status: {status.value if status else 'running, or stopped without an end record (resumable)'}")
    if log.torn:
        print(f"warning: {log.damage_text()}")
    return 0


def cmd_repair(run: Path) -> int:
    path = run / EVENTS_FILE if run.is_dir() else run
    try:
        repair = repair_log(path)
    except (OSError, RunLogFormatError, RunInUse) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if repair is None:
        print(f"{path}: intact, nothing to repair")
        return 0
    print(
        f"{path}: kept {repair.kept_events} events ({repair.kept_bytes:,} bytes) before the damage; "
        f"dropped {repair.dropped_bytes:,} bytes"
        + (f" holding {repair.records_after_damage} intact record(s)" if repair.records_after_damage else "")
    )
    print(f"the log as it was: {repair.original} (kept; delete it yourself once you are sure)")
    if repair.records_after_damage:
        print(
            "note: the agent already saw what those records held; the resumed run re-sends from the "
            "damage, so its memory may hold that part twice — `--fresh` is the clean alternative"
        )
    print("`marathon run` (or `marathon demo`) now resumes the run from there")
    return 0


def cmd_state(run: Path, as_json: bool) -> int:
    path = run / EVENTS_FILE
    try:
        log = read_log(path)
        state = run_state(log, benchmark_of(log.header))
        written = write_facts(state, run / "facts")
    except (OSError, RunLogFormatError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BenchmarkErrors as exc:
        print(f"error: {run}: the run's benchmark no longer loads: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(state.to_json(), ensure_ascii=False, indent=2))
        return 0
    phase = state.phase
    print(f"run {state.run_id}: {state.status}")
    if state.forked_from:
        inherited = sum(1 for m in state.messages if m.get("inherited"))
        print(
            f"forked from {state.forked_from.get('run')} at checkpoint {state.forked_from.get('checkpoint')!r}: "
            f"{inherited} of the persona messages below are its parent's, inherited"
            + (f" ({state.forked_from['problem']})" if state.forked_from.get("problem") else "")
        )
    print(f"phase {phase['index']} of {phase['of']}: {phase['title']} ({phase['chapter']})")
    print(
        f"persona messages: {len(state.messages)}; facts told: {len(state.told)}; graded: {len(state.grades)}"
    )
    shown = state.messages[-3:]
    if shown:
        more = (
            f" (all {len(state.messages)}: marathon state {run} --json)"
            if len(state.messages) > len(shown)
            else ""
        )
        print(f"the last {len(shown)} persona messages{more}:")
    for message in shown:
        text = message["text"].replace("\n", " ")
        print(f"  [{message['purpose']}] {text[:117] + '...' if len(text) > 120 else text}")
    if state.grades:
        print("grades:")
    for qid, grade in state.grades.items():
        print(f"  {qid}: {grade['score']:g}/10 — {grade['reason']}")
    print(f"live facts files: {', '.join(str(p) for p in written) or 'none'}")
    return 0
