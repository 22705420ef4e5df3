"""A recordings folder as data: every run's log, its benchmark as played, its summary.

Everything computed across runs (budget tables, A/B comparisons, the HTML report) starts
here, from the logs alone — re-running a report never needs an agent. A run whose log or
benchmark can't be read is skipped with the reason, never guessed at.
"""

from __future__ import annotations

import hashlib
import heapq
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from gateway.log.events import Asked, Header, LLMExchange, Said
from gateway.log.runlog import EVENTS_FILE, RunLog, RunLogFormatError, read_log
from gateway.report.markdown import RunSummary, summarize
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.ladder import benchmark_for
from persona.benchmark.model import Benchmark

EVIDENCE_PURPOSES = ("fact", "update", "line")


# runs whose whole log the report keeps (the newest, charted one by one in report.html);
# every other run keeps its summary and what the tables need: 10,000 demo runs took 8.1 GB
CHARTED_RUNS = 40


@dataclass
class RecordedRun:
    run_dir: Path
    log: RunLog
    benchmark: Benchmark
    summary: RunSummary
    released: bool = False  # its log's events were dropped (`release`): no per-run charts

    def release(self) -> None:
        """Drop the log's events, keeping what the tables need of them (`observed`,
        `evidence_hash`) and the summary. A run of an experiment is never released: its run
        line reads the events."""
        _ = self.observed, self.evidence_hash
        self.log.events = []
        self.released = True

    @property
    def header(self) -> Header:
        return self.log.header

    @property
    def meta(self) -> dict[str, object]:
        return self.log.header.meta

    @property
    def rung(self) -> str:
        return str(self.log.header.benchmark.get("rung", ""))

    @cached_property
    def observed(self) -> bool:
        """Did any model call of the agent reach the recorder, so that memory calls could be seen at
        all? A recorder that listened but saw nothing (the agent bypassed it) observed nothing."""
        return any(isinstance(e, LLMExchange) and e.kind != "probe" for e in self.log.events)

    @cached_property
    def evidence_hash(self) -> str:
        """sha256 of what the persona stated and asked of the evidence, in order (re-sends and
        nudges left out): equal across rungs exactly when the evidence was played identically."""
        digest = hashlib.sha256()
        for event in self.log.events:
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
    return benchmark_for(
        header.benchmark["path"],
        str(header.benchmark.get("rung", "")),
        pool if isinstance(pool, str) else None,
    )


def load_run(run_dir: Path) -> RecordedRun:
    """Raises `RunLogFormatError`, `BenchmarkErrors` or `OSError` when the run can't be read."""
    log = read_log(run_dir / EVENTS_FILE)
    bench = benchmark_of(log.header)
    return RecordedRun(run_dir, log, bench, summarize(log, bench))


def load_runs(recordings: Path, charted: int = CHARTED_RUNS) -> tuple[list[RecordedRun], list[str]]:
    """Every readable run under `recordings`, and a line for each one that isn't. Only the
    `charted` newest runs outside experiments keep their whole log; the others are released
    as they are read, so memory grows with the summaries, not with the logs."""
    runs: list[RecordedRun] = []
    problems: list[str] = []
    newest: list[tuple[float, int]] = []  # a heap of (created, index in runs): the charted runs
    for run_dir in run_dirs(recordings):
        try:
            log = read_log(run_dir / EVENTS_FILE)
            if not log.header.benchmark.get("path"):
                continue  # a probe or a typed chat: no benchmark, nothing to tabulate
            bench = benchmark_of(log.header)
            run = RecordedRun(run_dir, log, bench, summarize(log, bench))
            runs.append(run)
            if not run.meta.get("experiment"):
                heapq.heappush(newest, (float(log.header.created), len(runs) - 1))
                if len(newest) > charted:
                    runs[heapq.heappop(newest)[1]].release()
        except (RunLogFormatError, OSError, KeyError) as exc:
            problems.append(f"{run_dir.name}: unreadable log ({exc})")
        except BenchmarkErrors as exc:
            problems.append(f"{run_dir.name}: its benchmark no longer loads ({exc.errors[0]})")
    return runs, problems
