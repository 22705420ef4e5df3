"""A recordings folder as data: every run's log, its benchmark as played, its summary.

Everything computed across runs (budget tables, A/B comparisons, the HTML report) starts
here, from the logs alone — re-running a report never needs an agent. A run whose log or
benchmark can't be read is skipped with the reason, never guessed at.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import multiprocessing
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from gateway.log.events import Asked, Header, LLMExchange, Said
from gateway.log.lineage import LineageError, inherited_events
from gateway.log.run_meta import RunMeta
from gateway.log.runlog import EVENTS_FILE, RunLog, RunLogFormatError, read_header
from gateway.report.run_cards import CardIndex, RunCard, Stamp, stamp_of
from gateway.report.summary import RunSummary, summarize
from gateway.report.traffic_overlay import run_log
from gateway.step_progress import StepProgress
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.forks import as_played
from persona.benchmark.ladder import benchmark_for
from persona.benchmark.model import Benchmark
from persona.grading.restate import restating_evidence

EVIDENCE_PURPOSES = ("fact", "update", "line")
PARALLEL_FROM = 64  # logs to read before worker processes are worth their start-up (~1 s)


# plain runs the report reads whole (the newest, charted one by one in report.html); every
# other plain run is a line (`RunCard`): 10,000 demo runs took 8.1 GB
CHARTED_RUNS = 40


@dataclass
class RecordedRun:
    run_dir: Path
    log: RunLog
    benchmark: Benchmark
    summary: RunSummary
    released: bool = False  # its log's events were dropped (`release`): no per-run charts
    # views of the run computed once by whoever needs them (the memory autopsy: the run line,
    # report.md and report.html all show it — gateway/report/autopsy.py `autopsy_of`)
    derived: dict[str, Any] = field(default_factory=dict)

    def release(self) -> None:
        """Drop the log's events, keeping what the ladder tables need of them (`observed`,
        `evidence_hash`) and the summary. A run of an experiment is never released: its run
        line reads the events."""
        _ = self.observed, self.evidence_hash
        self.log.events = []
        self.released = True

    @property
    def header(self) -> Header:
        return self.log.header

    @property
    def meta(self) -> RunMeta:
        """Where the run sits in its matrix, typed."""
        return self.log.header.run_meta

    @property
    def rung(self) -> str:
        return str(self.log.header.benchmark.get("rung", ""))

    @cached_property
    def observed(self) -> bool:
        """Did any model call of the agent reach the recorder, so that memory calls could be seen at
        all? A recorder that listened but saw nothing (the agent bypassed it) observed nothing."""
        return any(isinstance(e, LLMExchange) and e.kind.conversational for e in self.log.events)

    @cached_property
    def evidence_hash(self) -> str:
        """sha256 of what the persona stated and asked of the evidence, in order (re-sends and
        nudges left out): equal across rungs exactly when the evidence was played identically."""
        digest = hashlib.sha256()
        try:  # a fork: its parent's evidence first (its prefix); without the parent, its own only
            inherited = inherited_events(self.log.path, self.log.header)
        except LineageError:
            inherited = []
        for event in [*inherited, *self.log.events]:
            if isinstance(event, Said) and event.purpose in EVIDENCE_PURPOSES and not event.resent:
                digest.update(b"say\0" + event.text.encode() + b"\0")
            elif isinstance(event, Asked) and not event.resent:
                digest.update(b"ask\0" + event.text.encode() + b"\0")
        return digest.hexdigest()


def run_dirs(recordings: Path) -> list[Path]:
    return sorted(p.parent for p in recordings.glob(f"*/{EVENTS_FILE}"))


def benchmark_of(header: Header) -> Benchmark:
    """The benchmark as the logged run played it (its rung's distractors in place).
    Raises `BenchmarkErrors` when it no longer loads."""
    pool = header.benchmark.get("pool")
    bench = benchmark_for(
        header.benchmark["path"],
        str(header.benchmark.get("rung", "")),
        pool if isinstance(pool, str) else None,
    )
    questions = header.benchmark.get("questions")
    at = str(header.benchmark.get("checkpoint_at", ""))
    played = as_played(
        bench,
        at,
        str(header.benchmark.get("until", "")),
        [str(q) for q in questions] if isinstance(questions, list) else None,
    )
    return restating_evidence(played, at) if header.benchmark.get("restate") else played


def load_run(run_dir: Path) -> RecordedRun:
    """Raises `RunLogFormatError`, `BenchmarkErrors` or `OSError` when the run can't be read."""
    log = run_log(run_dir)
    bench = benchmark_of(log.header)
    return RecordedRun(run_dir, log, bench, summarize(log, bench))


def read_card(run_dir: Path) -> RunCard | str | None:
    """The run's card; a problem line when its log or benchmark can't be read; None for a
    log with no benchmark (a probe, a typed chat: nothing to tabulate). Never raises for a bad
    run: it runs in a worker process."""
    try:
        log = run_log(run_dir)
        if not log.header.benchmark.get("path"):
            return None
        summary = summarize(log, benchmark_of(log.header))
    except (RunLogFormatError, OSError, KeyError) as exc:
        return f"{run_dir.name}: unreadable log ({exc})"
    except BenchmarkErrors as exc:
        return f"{run_dir.name}: its benchmark no longer loads ({exc.errors[0]})"
    return RunCard(
        run_dir.name, summary.run_id, summary.status, summary.describe_mean(), summary.stand_in, log.header.created
    )


def read_cards(run_dirs: list[Path]) -> list[RunCard | str | None]:
    """`read_card` of each, over worker processes when there are many and cores to spare
    (started fresh, never forked: `marathon run` calls this with threads running)."""
    workers = min(os.cpu_count() or 1, 4)
    with StepProgress("summarising runs", len(run_dirs)) as progress:
        if len(run_dirs) < PARALLEL_FROM or workers < 2:
            return [_counted(read_card(d), d, progress) for d in run_dirs]
        context = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            read = pool.map(read_card, run_dirs, chunksize=32)  # in order, as each is done
            return [_counted(card, d, progress) for card, d in zip(read, run_dirs, strict=True)]


def _counted(card: RunCard | str | None, run_dir: Path, progress: StepProgress) -> RunCard | str | None:
    progress.advance(run_dir.name)
    return card


def load_runs(
    recordings: Path, charted: int = CHARTED_RUNS
) -> tuple[list[RecordedRun], list[RunCard], list[str]]:
    """Every readable run under `recordings`: the runs read whole — those of a scale ladder
    or an experiment, and the `charted` newest others — then a card for each other run (its
    line: `gateway.report.run_cards`), and a line for each run that can't be read.

    Memory grows with the ladder and experiment runs' summaries, not with the logs: a ladder
    run's log is released once read; an experiment's runs keep theirs (their run lines read
    the events). A plain run's log is read only when the card index has no card for its
    current size and time."""
    index = CardIndex(recordings)
    runs: list[RecordedRun] = []
    problems: list[str] = []
    cards: dict[str, RunCard] = {}
    unread: list[Path] = []
    stamps: dict[str, Stamp] = {}
    folders = run_dirs(recordings)
    with StepProgress("reading runs", len(folders)) as progress:
        for run_dir in folders:
            _index_run(run_dir, index, runs, cards, unread, stamps, problems)
            progress.advance(run_dir.name)
    for run_dir, read in zip(unread, read_cards(unread), strict=True):
        if isinstance(read, RunCard):
            cards[run_dir.name] = read
            if run_dir.name in stamps:
                index.put(stamps[run_dir.name], read)
        elif read is not None:
            problems.append(read)
    index.keep_only(cards)
    index.save()
    newest = sorted(cards.values(), key=lambda c: (c.created, c.folder), reverse=True)[:charted]
    for card in newest:
        if (run := _read_whole(recordings / card.folder, problems)) is not None:
            runs.append(run)
            del cards[card.folder]
    runs.sort(key=lambda r: r.run_dir.name)
    return runs, sorted(cards.values(), key=lambda c: c.folder), problems


def _index_run(
    run_dir: Path,
    index: CardIndex,
    runs: list[RecordedRun],
    cards: dict[str, RunCard],
    unread: list[Path],
    stamps: dict[str, Stamp],
    problems: list[str],
) -> None:
    """Sort one run folder: a card the index still holds, a run read whole (a ladder's or an
    experiment's), or a plain run to card (`unread`); an unreadable log is a problem."""
    stamp = stamp_of(run_dir)
    card = index.get(run_dir.name, stamp) if stamp is not None else None
    if card is not None:
        cards[run_dir.name] = card
        return
    try:
        header = read_header(run_dir / EVENTS_FILE)
    except (RunLogFormatError, OSError) as exc:
        problems.append(f"{run_dir.name}: unreadable log ({exc})")
        return
    if not header.benchmark.get("path"):
        return  # a probe or a typed chat: no benchmark, nothing to tabulate
    where = header.run_meta
    if where.experiment or where.fork_of or where.prepares or header.benchmark.get("rung"):
        if (run := _read_whole(run_dir, problems)) is not None:
            runs.append(run)
            if not run.meta.experiment:
                run.release()
    else:
        unread.append(run_dir)
        if stamp is not None:
            stamps[run_dir.name] = stamp


def _read_whole(run_dir: Path, problems: list[str]) -> RecordedRun | None:
    try:
        return load_run(run_dir)
    except (RunLogFormatError, OSError, KeyError) as exc:
        problems.append(f"{run_dir.name}: unreadable log ({exc})")
    except BenchmarkErrors as exc:
        problems.append(f"{run_dir.name}: its benchmark no longer loads ({exc.errors[0]})")
    return None
