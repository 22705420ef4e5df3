"""`marathon rescore RUN --traffic`: a run's traffic readings made again with today's rules.

A user who upgrades gets old runs' call shapes, background labels, compactions, memory charges
and evidence checks corrected without running the agent again. The log is never written: the
re-derived readings go to `traffic-rescore.msgpack` beside it (gateway/report/traffic_overlay.py:
how every reader then sees them), report.md is rewritten as the reports now read the run, and a
summary of what moved goes to `traffic-rescore.md`.
"""

from __future__ import annotations

from pathlib import Path

from gateway.log.lock import RunLock
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError, read_log
from gateway.report.markdown import refresh_run_report
from gateway.report.recordings import benchmark_of
from gateway.report.traffic_figures import TrafficFigures
from gateway.report.traffic_overlay import rederive_run, run_log, write_rederived

TRAFFIC_REPORT = "traffic-rescore.md"


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
    the summary's path). Raises `RunLogFormatError` (a log that is no run's, or damaged in the
    middle: `marathon repair` first), `RunInUse` (a run writes it now), `LineageError` (a fork
    whose parent can't be read), `BenchmarkErrors`, `OSError`. A torn tail (a killed run)
    is re-derived as far as it goes; the summary says so."""
    if not (run_dir / EVENTS_FILE).is_file():
        raise RunLogFormatError(f"not a run folder (no {EVENTS_FILE} in it): give one run's folder")
    lock = RunLock.acquire(run_dir)  # raises RunInUse: a run still writing its log can't be re-read
    try:
        log = read_log(run_dir / EVENTS_FILE)
        if log.damage:
            raise RunLogFormatError(f"its log is {log.damage_text()}; nothing was re-derived")
        result = rederive_run(run_dir, log, benchmark_of(log.header))
        write_rederived(run_dir, result)
    finally:
        lock.release()
    before, after = TrafficFigures.of(log.events), TrafficFigures.of(result.events)
    recorded = str(log.header.defines.get("traffic_analyzer", ""))
    now = run_log(run_dir)  # as every reader now reads it, its note included
    refresh_run_report(now, benchmark_of(now.header), run_dir)
    report = run_dir / TRAFFIC_REPORT
    text = render(log.header.run_id, before, after, result.identity, recorded)
    if log.torn:
        text += f"\nThe log's {log.damage_text()}: the figures stop there.\n"
    report.write_text(text, encoding="utf-8")
    return before, after, report
