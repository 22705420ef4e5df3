"""`marathon compare`: an experiment's paired A/B comparison (`compare SOURCE`), and the memory
regression gate for CI — `compare SOURCE --baseline FILE [--gate] [--junit FILE] [--json]
[--tolerance N]` and `compare SOURCE --write-baseline FILE` (gateway/report/gate.py). For the
gate, SOURCE and the baseline are each a recordings folder (every run in it) or a `.runs.jsonl`.
Exit status with `--gate`: 0 accept, 1 regression, 3 no decision; 2 for an error (always).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gateway.log.runlog import RunLogFormatError
from gateway.report.comparison import compare, render_comparison
from gateway.report.decision import plan_decision, render_verdict
from gateway.report.gate import gate, junit_xml, lines_of_runs, render_gate, write_baseline
from gateway.report.matrix import write_matrix_report
from gateway.report.results_table import results_table
from gateway.report.run_line import RunLine, read_lines


def _lines(source: Path) -> list[RunLine]:
    if source.is_dir():
        return lines_of_runs(source.resolve())
    return read_lines(source)


def cmd_gate(
    source: Path,
    baseline: Path | None,
    write_to: Path | None,
    as_gate: bool,
    junit: Path | None,
    as_json: bool,
    tolerance: int,
) -> int:
    try:
        candidate = _lines(source)
    except (OSError, ValueError, RunLogFormatError) as exc:
        print(f"error: {source}: can't read its runs: {exc}", file=sys.stderr)
        return 2
    if not candidate:
        print(f"error: {source}: no runs with a benchmark to compare", file=sys.stderr)
        return 2
    if write_to is not None:
        write_baseline(candidate, write_to)
        print(f"baseline: {len(candidate)} run line(s) → {write_to}")
        if baseline is None:
            return 0
    if baseline is None:
        print("error: --gate, --junit and --json compare with a --baseline FILE", file=sys.stderr)
        return 2
    try:
        stored = _lines(baseline)  # a stored .runs.jsonl, or the baseline's recordings folder
    except (OSError, ValueError, RunLogFormatError) as exc:
        print(f"error: {baseline}: can't read the baseline's run lines: {exc}", file=sys.stderr)
        return 2
    result = gate(stored, candidate, tolerance)
    if junit is not None:
        junit.write_text(junit_xml(result, tolerance), encoding="utf-8")
    if as_json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=1))
    else:
        print(render_gate(result))
    return result.exit_code if as_gate else 0


def cmd_compare(source: Path, seed: int, splits: tuple[str, ...] = ("heldout",)) -> int:
    if source.is_dir():  # the lines rebuilt from the logs: a stored file may be stale (a log rescored)
        write_matrix_report(source.resolve())
        files = sorted(source.glob("*.runs.jsonl"))
    else:
        files = [source]
    if not files:
        print(f"error: no experiment under {source} (its runs carry no `experiment`)", file=sys.stderr)
        return 1
    for path in files:
        try:
            lines = read_lines(path)
        except (OSError, ValueError) as exc:
            print(f"error: {path}: can't read the run lines: {exc}", file=sys.stderr)
            return 1
        comparison = compare(lines, seed=seed, splits=splits)
        compared = [line for line in lines if line.split in comparison.splits]
        print(
            render_comparison(comparison)
            + results_table(compared, comparison.names)
            + render_verdict(plan_decision(path), comparison, lines)
        )
    return 0
