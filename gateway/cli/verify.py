"""`marathon verify RECORDINGS [--json]`: may these results be trusted and published?

For every run folder under RECORDINGS, at any depth (or one run folder), it checks the
invariants every run keeps (gateway/cli/invariants.py) — logs whole, each header naming its own
folder's run and no run in two folders, every record known and numbered and every grade a number
from 0 to 10 (gateway/cli/record_checks.py), forks started from their checkpoint's state,
no question graded twice, every reader takes the folder, each report.md still what its log
renders (a report edited by hand or left stale is named; so are matrix.md and an experiment's
run lines), checkpoint archives intact — and
builds one manifest of what the figures depend on: per run the benchmark's hash (as logged, and
as its files hash today), marathonbench's version, the persona's and the grader's versions,
the agent's version, the state the agent started from (a fork: its checkpoint), and the digests
of the log and the report. The manifest's own `digest` is a sha256 over all of it.

Output: the manifest as JSON on stdout (`--json`: only it); on stderr one line per failure, or
that all held. Exit 0 when every invariant held, 1 when one did not (each failure named), 2 when
RECORDINGS holds no run.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from gateway import __version__
from gateway.cli.invariants import Violation, check_across_runs, check_run
from gateway.log.events import Evaluation, RunStart
from gateway.log.runlog import EVENTS_FILE, RunLog, RunLogFormatError, read_log, run_status
from gateway.report.grade_overlay import REGRADED_FILE, apply_regrading
from gateway.report.traffic_overlay import TrafficRescoreError, read_rederived
from gateway.run.checkpoints import file_sha256
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.loader import load_benchmark
from persona.grading.identity import identity_of

MANIFEST_VERSION = 1


def run_folders(recordings: Path) -> list[Path]:
    """Every run folder under `recordings`, at any depth (a folder of forks, an experiment's
    recordings kept inside another): a run not verified is a run not vouched for. `recordings`
    itself when it is one run's folder."""
    if (recordings / EVENTS_FILE).is_file():
        return [recordings]
    if not recordings.is_dir():
        return []
    return sorted(p.parent for p in recordings.rglob(EVENTS_FILE) if p.is_file())


def cmd_verify(recordings: Path, as_json: bool) -> int:
    folders = run_folders(recordings)
    if not folders:
        print(f"error: no run logs under {recordings}", file=sys.stderr)
        return 2
    single = folders == [recordings]
    violations: list[Violation] = []
    runs: list[dict[str, Any]] = []
    for n, run_dir in enumerate(folders, 1):
        shown = run_dir.name if single else str(run_dir.relative_to(recordings))
        if not as_json and sys.stderr.isatty():
            print(f"\rverifying {n}/{len(folders)}: {shown[:40]:<40}", end="", file=sys.stderr, flush=True)
        violations += [replace(v, run=shown) for v in check_run(run_dir)]
        runs.append(run_manifest(run_dir) | {"run": shown})
    if not single:  # each folder of runs: its cross-run files and its runs' ids
        for parent in sorted({run_dir.parent for run_dir in folders}):
            where = "" if parent == recordings else f"{parent.relative_to(recordings)}/"
            violations += [replace(v, run=f"{where}{v.run}") for v in check_across_runs(parent)]
    if not as_json and sys.stderr.isatty():
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    manifest = {
        "manifest": MANIFEST_VERSION,
        "marathonbench": __version__,
        "recordings": str(recordings.resolve()),
        "runs": runs,
        "failures": [{"run": v.run, "invariant": v.invariant.value, "message": v.message} for v in violations],
    }
    manifest["digest"] = hashlib.sha256(json.dumps(manifest["runs"], sort_keys=True).encode()).hexdigest()
    print(json.dumps(manifest, indent=1, ensure_ascii=False))
    if not as_json:
        for v in violations:
            print(f"✗ {v.line()}", file=sys.stderr)
        nested = len({run_dir.parent for run_dir in folders}) if not single else 1
        verdict = (
            f"✓ {len(folders)} run(s){f' in {nested} folders' if nested > 1 else ''}: every invariant held"
            if not violations
            else f"{len(violations)} failure(s) in {len({v.run for v in violations})} of {len(folders)} run(s)"
        )
        print(verdict, file=sys.stderr)
    return 1 if violations else 0


def run_manifest(run_dir: Path) -> dict[str, Any]:
    """What one run's figures depend on, as digests and versions."""
    entry: dict[str, Any] = {"run": run_dir.name}
    try:
        log = read_log(run_dir / EVENTS_FILE)
    except (OSError, RunLogFormatError) as exc:
        return entry | {"unreadable": str(exc)}
    h = log.header
    status = run_status(log)
    starts = [e for e in log.events if isinstance(e, RunStart)]
    report = run_dir / "report.md"
    entry |= {
        "status": status.value if status else "unfinished (no end record: resumable)",
        "log_sha256": file_sha256(log.path),
        "report_sha256": file_sha256(report) if report.is_file() else None,
        "benchmark": {
            "name": h.benchmark.get("name"),
            "hash": h.benchmark.get("hash"),
            "files_hash_today": _benchmark_hash_today(h.benchmark.get("path")),
        },
        "marathonbench": h.tool_version,
        "persona": h.defines.get("persona", h.persona),
        "grader": h.defines.get("grader", {}),
        "judge": h.defines.get("judge", {}),
        "agent_version": h.defines.get("agent_version", "not in this log"),
        "traffic_analyzer": h.defines.get("traffic_analyzer", "not in this log"),
        "traffic_rederived": _rederived_identity(run_dir),
        "grader_regraded": _regraded_identity(run_dir, log),
        "start_state": starts[0].state if starts else None,
        "questions_graded": sum(1 for e in log.events if isinstance(e, Evaluation)),
    }
    if h.parent:
        entry["forked_from"] = {k: h.parent.get(k) for k in ("run", "checkpoint", "state_hash", "archive_sha256")}
    return entry


def _rederived_identity(run_dir: Path) -> str | None:
    """The analyzer of a `rescore --traffic` result the reports read in place of the recorded
    readings (None: they read the recorded ones)."""
    try:
        stored = read_rederived(run_dir)
    except TrafficRescoreError:
        return None
    return stored.identity if stored is not None and stored.applies_to(run_dir / EVENTS_FILE) else None


def _regraded_identity(run_dir: Path, log: RunLog) -> str | None:
    """The exact grader of a `rescore --grader exact` the reports read in place of the recorded
    grades (None: they read the recorded ones)."""
    if not (run_dir / REGRADED_FILE).is_file():
        return None
    seen = replace(log, events=[], notes=[], header=replace(log.header))
    apply_regrading(run_dir, seen)
    grader = seen.header.defines.get("grader")
    return identity_of(grader) if isinstance(grader, dict) and grader.get("regraded") else None


def _benchmark_hash_today(path: object) -> str | None:
    """The benchmark's content hash from its files now (None: it can't be read here)."""
    if not isinstance(path, str):
        return None
    try:
        return load_benchmark(Path(path)).content_hash
    except (BenchmarkErrors, OSError, ValueError):
        return None
