"""The invariants every run keeps, whatever its kind and however it was interrupted (design §9c).

Features combine — a fork is resumed, a ladder is taught once, a run is killed while a checkpoint
is written — and each combination must still keep these. They are written once, here; the tests
check them over run kinds × interruptions (tests/test_invariants.py, bench/interruptions.py) and
`marathon verify` checks them on a user's recordings before results are trusted or published.

- `log_whole`: the log reads to its end — no torn tail, no damage in the middle.
- `started_as_claimed`: a fork's header names a checkpoint its parent's log holds, with the same
  state hash and archive digest, and the fork's agent answered nothing before a start that
  restored exactly that state (`RunStart.restored`, `state` the checkpoint's hash).
- `graded_once`: no question is graded twice — in the run's own log, nor again after its
  parent graded it (a fork's inherited grades are the parent's).
- `readable`: every reader takes the folder without an error: report, compare (its run line),
  state, inspect and the viewer's run page.
- `report_current`: the run's report.md is what its log renders today (a report edited by
  hand, or written before the log was cut or changed, is named).
- `archive_intact`: every checkpoint the log records has its archive, with the logged digest,
  holding the logged state (its members hash as the state folder did).
- `told_delivered`: every fact counted told was in a message the agent received (answered) —
  the message named it, or said its numbers, codes and names — or a persona slip names it
  (a fact marked told but never said is counted, and its questions are unscored).

It sits with the commands because one of its checks runs every reader over a folder, the
viewer's included (the flow's order lets only the last layer import them all).

What a caller may rely on: `check_run` never raises for a bad folder; each failure is a
`Violation` naming the run, the invariant and what was found.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import io
import tarfile
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from gateway.cli.record_checks import duplicate_runs, folder_problems, record_problems
from gateway.cli.traffic_seen import traffic_problems
from gateway.log.events import (
    Asked,
    CheckpointSaved,
    Evaluation,
    Event,
    FactEdited,
    FactTold,
    PersonaSlip,
    Replied,
    RunStart,
    Said,
)
from gateway.log.lineage import LineageError, inherited_events, parent_log_path
from gateway.log.runlog import EVENTS_FILE, RunLog, RunLogFormatError, read_header, read_log
from gateway.report.grade_overlay import apply_regrading
from gateway.report.recordings import run_dirs
from gateway.report.traffic_overlay import apply_rederivation
from gateway.run.checkpoints import archive_state_hash, checkpoints_in, file_sha256
from gateway.run.fork_start import restored_start
from persona.benchmark.model import DELETED_MARKERS, Benchmark
from persona.terms import missing_details


class Invariant(StrEnum):
    LOG_WHOLE = "log_whole"
    STARTED_AS_CLAIMED = "started_as_claimed"
    GRADED_ONCE = "graded_once"
    READABLE = "readable"
    REPORT_CURRENT = "report_current"
    ARCHIVE_INTACT = "archive_intact"
    TOLD_DELIVERED = "told_delivered"
    TRAFFIC_SEEN = "traffic_seen"  # the recorder's readings could see what they count (traffic_seen.py)
    IN_ITS_FOLDER = "in_its_folder"  # the header names this folder's run, once (record_checks.py)
    RECORDS_VALID = "records_valid"  # every record known, numbered, every grade in range (record_checks.py)


@dataclass(frozen=True)
class Violation:
    run: str
    invariant: Invariant
    message: str

    def line(self) -> str:
        return f"{self.run}: {self.invariant.value} — {self.message}"


def check_run(run_dir: Path, *, readers: bool = True) -> list[Violation]:
    """Every invariant on one run folder. `readers`: also run every reader over it (`readable`,
    `report_current`; slower — the tests' matrix and `marathon verify` do)."""
    name = run_dir.name
    try:
        log = read_log(run_dir / EVENTS_FILE)
    except (OSError, RunLogFormatError) as exc:
        return [Violation(name, Invariant.READABLE, f"its log can't be read: {exc}")]
    found: list[Violation] = []
    if log.torn:
        found.append(Violation(name, Invariant.LOG_WHOLE, log.damage_text() or f"{log.unread_bytes:,} bytes unread"))
    found += [Violation(name, Invariant.IN_ITS_FOLDER, m) for m in folder_problems(run_dir, log)]
    found += [Violation(name, Invariant.RECORDS_VALID, m) for m in record_problems(log)]
    inherited: list[Event] = []
    if log.header.parent:
        try:
            inherited = inherited_events(log.path, log.header)
        except LineageError as exc:
            found.append(Violation(name, Invariant.STARTED_AS_CLAIMED, str(exc)))
        found += [Violation(name, Invariant.STARTED_AS_CLAIMED, m) for m in fork_start_problems(log)]
    found += [Violation(name, Invariant.GRADED_ONCE, m) for m in grading_problems(log.events, inherited)]
    found += [Violation(name, Invariant.ARCHIVE_INTACT, m) for m in archive_problems(log, run_dir)]
    seen = dataclasses.replace(log, events=list(log.events), notes=[])  # as the reports read it
    if problem := apply_rederivation(run_dir, seen):
        found.append(Violation(name, Invariant.TRAFFIC_SEEN, problem))
    found += [Violation(name, Invariant.TRAFFIC_SEEN, m) for m in traffic_problems(seen.events)]
    if problem := apply_regrading(run_dir, seen):  # a `rescore --grader exact` of another state of the log
        found.append(Violation(name, Invariant.GRADED_ONCE, problem))
    if readers and log.header.benchmark.get("path"):
        benchmark = _benchmark(log)
        if benchmark is not None:
            found += [Violation(name, Invariant.TOLD_DELIVERED, m) for m in telling_problems(log.events, inherited, benchmark)]
        del log, seen, inherited  # each reader reads the log itself: one copy in memory at a time
        found += reader_problems(run_dir)
    return found


def _benchmark(log: RunLog) -> Benchmark | None:
    """The run's benchmark, or None when it can't be read (`readable` names that)."""
    from gateway.report.recordings import benchmark_of
    from persona.benchmark.errors import BenchmarkErrors

    try:
        return benchmark_of(log.header)
    except (BenchmarkErrors, OSError, KeyError):
        return None


def telling_problems(events: list[Event], inherited: list[Event], benchmark: Benchmark) -> list[str]:
    """Each `fact_told` against the messages the agent received before it: one that named the
    fact (a scripted fact message), or all of them together saying its current value's numbers,
    codes and names (the LLM persona's `facts_mark_told`), or a persona slip about the fact."""
    values = {f"{name}:{fid}": f.text for name, ff in benchmark.facts.items() for fid, f in ff.facts.items()}
    delivered: list[str] = []
    named: set[str] = set()
    slipped: set[str] = set()
    sent: Said | Asked | None = None
    problems: list[str] = []
    said, said_upto = "", 0
    for e in [*inherited, *events]:
        match e:
            case Said() | Asked():
                sent = e
            case Replied() if sent is not None:
                delivered.append(sent.text)
                if isinstance(sent, Said):
                    named.update(sent.fact_ids)
                sent = None
            case RunStart():
                sent = None
            case FactEdited():
                key = f"{e.file}:{e.fact_id}"
                if e.new.strip() in DELETED_MARKERS:
                    values.pop(key, None)
                else:
                    values[key] = e.new
            case PersonaSlip() if e.fact:
                slipped.add(e.fact)
            case FactTold():
                key = f"{e.file}:{e.fact_id}"
                value = values.get(key)
                if key in named or key in slipped or value is None:
                    continue
                if said_upto < len(delivered):
                    said, said_upto = "\n".join(delivered), len(delivered)
                if missing := missing_details(value, said):
                    problems.append(
                        f"{key} counted told (event {e.seq}), but no message the agent received said "
                        f"{', '.join(missing)}, and no persona slip names it"
                    )
    return problems


ACROSS_RUNS = "(across runs)"  # the run a violation of the cross-run files names


def check_across_runs(recordings: Path) -> list[Violation]:
    """`report_current` for the files that sum up several runs: matrix.md and each experiment's
    NAME.runs.jsonl, against what the logs render now (report.html is not compared: it records
    when it was made)."""
    from gateway.report.matrix import SUMMARY_FILE, write_matrix_report

    recordings = recordings.resolve()  # as `marathon report` renders it: the lines name runs by their full path
    found = [Violation(ACROSS_RUNS, Invariant.IN_ITS_FOLDER, m) for m in duplicate_runs(_run_ids(recordings))]
    summary = recordings / SUMMARY_FILE
    if not summary.is_file():
        return found
    try:
        rendered = write_matrix_report(recordings, write=False)
    except Exception as exc:  # a reader's failure is the finding
        return [*found, Violation(ACROSS_RUNS, Invariant.READABLE, f"the cross-run report: {type(exc).__name__}: {exc}")]
    printed = {summary: rendered.text, **rendered.lines}
    for path, text in printed.items():
        on_disk = path.read_text(encoding="utf-8") if path.is_file() else None
        fix = " — `marathon report` writes it again from the logs"  # a run stopped before rewriting it
        if on_disk is None:
            found.append(Violation(ACROSS_RUNS, Invariant.REPORT_CURRENT, f"{path.name} is missing{fix}"))
        elif on_disk != text:
            found.append(Violation(ACROSS_RUNS, Invariant.REPORT_CURRENT, _differs(on_disk, text, path.name) + fix))
    return found


def _run_ids(recordings: Path) -> dict[Path, str]:
    """Each run folder's logged run id (a folder whose header can't be read is left to `readable`)."""
    found: dict[Path, str] = {}
    for run_dir in run_dirs(recordings):
        with contextlib.suppress(OSError, RunLogFormatError):
            found[run_dir] = read_header(run_dir / EVENTS_FILE).run_id
    return found


def fork_start_problems(log: RunLog) -> list[str]:
    """Whether a fork's header matches its parent's checkpoint record, and whether its agent
    answered anything before a start that restored that checkpoint's state."""
    parent = log.header.parent
    problems: list[str] = []
    try:
        parent_path = parent_log_path(log.path, log.header)
    except LineageError as exc:
        return [str(exc)]
    claimed = str(parent.get("state_hash", ""))
    if parent_path is not None:
        try:
            parent_log = read_log(parent_path)
        except (OSError, RunLogFormatError) as exc:
            return [f"its parent's log {parent_path} can't be read: {exc}"]
        marker = next((e for e in parent_log.events if e.seq == parent.get("seq")), None)
        name = parent.get("checkpoint")
        if not isinstance(marker, CheckpointSaved) or marker.name != name:
            problems.append(
                f"its parent {parent.get('run')} holds no checkpoint {name!r} at event {parent.get('seq')} "
                "(was the parent started over?)"
            )
        elif marker.state_hash != claimed:
            problems.append(
                f"its header says it forked from state {claimed[:12]}…, but the parent's checkpoint "
                f"{marker.name!r} holds {marker.state_hash[:12]}…"
            )
        elif parent.get("archive_sha256") not in (None, marker.archive_sha256):
            problems.append(f"the parent's checkpoint {marker.name!r} is not the archive this run was forked from")
    first_message = next((e.seq for e in log.events if isinstance(e, (Said, Asked))), None)
    restored = restored_start(log.events, claimed)
    starts = [e for e in log.events if isinstance(e, RunStart)]
    if restored is None and starts:
        problems.append(
            f"no start of it restored its checkpoint's state {claimed[:12]}… (its agent started on "
            f"{starts[0].state[:12] or 'an unknown state'}…)"
        )
    elif restored is not None and restored.state != claimed:
        problems.append(f"its start restored state {restored.state[:12]}…, not the checkpoint's {claimed[:12]}…")
    elif restored is not None and first_message is not None and first_message < restored.seq:
        problems.append(f"it sent a message (event {first_message}) before its checkpoint was restored")
    return problems


def grading_problems(events: list[Event], inherited: list[Event]) -> list[str]:
    own = Counter(e.question_id for e in events if isinstance(e, Evaluation))
    before = {e.question_id for e in inherited if isinstance(e, Evaluation)}
    problems = [f"question {q} graded {n} times" for q, n in sorted(own.items()) if n > 1]
    problems += [f"question {q} graded again after its parent graded it" for q in sorted(set(own) & before)]
    return problems


def archive_problems(log: RunLog, run_dir: Path) -> list[str]:
    problems = []
    for checkpoint in checkpoints_in(log.header.run_id, run_dir, log.events):
        if not checkpoint.archive.is_file():
            problems.append(f"checkpoint {checkpoint.name!r}: its archive {checkpoint.archive} is missing")
        elif file_sha256(checkpoint.archive) != checkpoint.archive_sha256:
            problems.append(f"checkpoint {checkpoint.name!r}: {checkpoint.archive} changed since it was taken")
        else:  # the file is the logged one: does it hold the logged state? (a swapped archive, its digest rewritten)
            try:
                held = archive_state_hash(checkpoint.archive)
            except (tarfile.TarError, OSError, EOFError) as exc:
                problems.append(f"checkpoint {checkpoint.name!r}: its archive can't be read ({exc})")
                continue
            if held != checkpoint.state_hash:
                problems.append(
                    f"checkpoint {checkpoint.name!r}: its archive holds the state {held[:12]}…, not the logged "
                    f"{checkpoint.state_hash[:12]}… — a fork from it would start elsewhere than its log says"
                )
    return problems


def reader_problems(run_dir: Path) -> list[Violation]:
    """Each reader over the folder, in process: a failure is named with the reader."""
    from gateway.cli.logs import cmd_inspect
    from gateway.report.markdown import render_run_report
    from gateway.report.recordings import load_run
    from gateway.report.run_line import run_line
    from gateway.report.state import run_state
    from gateway.viewer.watch import RunWatch

    name = run_dir.name
    found: list[Violation] = []

    def reading(reader: str, call: object) -> object:
        try:
            assert callable(call)
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                return call()
        except Exception as exc:  # any reader's failure is the finding
            found.append(Violation(name, Invariant.READABLE, f"{reader}: {type(exc).__name__}: {exc}"))
            return None

    run = reading("report", lambda: load_run(run_dir))
    if run is not None:
        reading("compare", lambda: run_line(run))  # type: ignore[arg-type]
        # as the reports read the log: with a `rescore --traffic` re-derivation in place
        reading("state", lambda: run_state(run.log, run.benchmark))  # type: ignore[attr-defined]
        rendered = reading("report.md", lambda: render_run_report(run.log, run.benchmark, run_dir))  # type: ignore[attr-defined]
        report = run_dir / "report.md"
        if isinstance(rendered, str):
            on_disk = report.read_text(encoding="utf-8") if report.is_file() else None
            if on_disk is None:
                found.append(
                    Violation(name, Invariant.REPORT_CURRENT, "it has no report.md (`marathon report` writes it)")
                )
            elif on_disk != rendered:
                found.append(Violation(name, Invariant.REPORT_CURRENT, _differs(on_disk, rendered)))
    run = None  # each reader below reads the log itself: one copy at a time, not two
    if reading("inspect", lambda: cmd_inspect(run_dir, 0)) not in (0, None):
        found.append(Violation(name, Invariant.READABLE, "inspect: exited non-zero"))

    async def view() -> None:
        watch = RunWatch(run_dir)
        await watch.refresh()
        watch.summary()
        watch.series()

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # its own loop, whether or not one runs here
        reading("viewer", lambda: pool.submit(asyncio.run, view()).result())
    return found


def _differs(on_disk: str, rendered: str, name: str = "report.md") -> str:
    """Where a printed file parts from what the logs render: the first differing line, shown
    from a little before the first character that differs (a long JSON line's start is the
    same in both)."""
    for n, (a, b) in enumerate(zip(on_disk.splitlines(), rendered.splitlines(), strict=False), 1):
        if a != b:
            at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
            start = max(0, at - 20)
            where = f" (from character {start + 1})" if start else ""
            return (
                f"{name} line {n}{where} reads {a[start : start + 60]!r}, the log renders "
                f"{b[start : start + 60]!r} (stale or edited)"
            )
    return f"{name} is not what the log renders (lines added or missing: stale or edited)"
