"""Everything a recordings folder says across runs: scale ladders (budget tables and onset),
paired A/B experiments (run lines and comparison), and the HTML report with charts.

`write_matrix_report()` is what `marathon run` calls when its runs end and what `marathon
report` calls on its own: both read only the recordings. Raises OSError when the folder
can't be written (a full disk); the run logs are never touched.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from gateway.display import safe_text
from gateway.report.budget import Ladder, build_ladders, render_ladder
from gateway.report.comparison import Comparison, compare, render_comparison
from gateway.report.decision import plan_decision, render_verdict
from gateway.report.forks import ForkGroup, build_fork_groups, render_forks, render_preparation
from gateway.report.recordings import load_runs
from gateway.report.results_table import results_table
from gateway.report.run_line import RunLine, lines_jsonl, run_line, write_lines
from gateway.step_progress import StepProgress
from gateway.whole_file import write_whole

SUMMARY_FILE = "matrix.md"
HTML_FILE = "report.html"


@dataclass
class MatrixReport:
    markdown: Path
    html: Path
    ladders: list[Ladder]
    comparisons: list[Comparison]
    run_lines: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    runs: int = 0
    verdicts: list[str] = field(default_factory=list)  # per comparison: its decision rule's verdict
    forks: list[ForkGroup] = field(default_factory=list)  # exams forked from one checkpoint each
    text: str = ""  # matrix.md as rendered (what `marathon verify` compares the file with)
    lines: dict[Path, str] = field(default_factory=dict)  # each experiment's NAME.runs.jsonl as rendered


def _replace(path: Path, text: str) -> None:
    """Write whole or not at all: a reader (or a browser) never sees half a report."""
    write_whole(path, safe_text(text) if path.suffix == ".md" else text)


def write_matrix_report(recordings: Path, seed: int = 0, *, write: bool = True) -> MatrixReport:
    """`write` False: render only (matrix.md's text and the run lines), writing no report — how
    `marathon verify` tells a stale or edited printed file from the logs."""
    runs, cards, problems = load_runs(recordings)
    ladders = build_ladders(runs)
    by_experiment: dict[str, list[RunLine]] = defaultdict(list)
    in_experiments = [run for run in runs if run.meta.experiment]
    with StepProgress("tabulating experiment runs", len(in_experiments)) as progress:
        for run in in_experiments:  # each answer's diagnostic chain: the slow part of a report
            by_experiment[str(run.meta.experiment)].append(run_line(run))
            progress.advance(run.run_dir.name)
    comparisons = []
    verdicts = []
    written: list[Path] = []
    rendered: dict[Path, str] = {}
    for name, lines in sorted(by_experiment.items()):
        jsonl = recordings / f"{name}.runs.jsonl"
        rendered[jsonl] = lines_jsonl(lines)
        if write:
            written += write_lines(lines, recordings / name)
        comparisons.append(compare(lines, seed=seed))
        compared = [line for line in lines if line.split in comparisons[-1].splits]
        verdicts.append(
            results_table(compared, comparisons[-1].names)
            + render_verdict(plan_decision(jsonl), comparisons[-1], lines)
            + render_preparation([r for r in runs if r.meta.prepares == name], lines)
        )
    parts = ["# Across runs", ""]
    if any(r.summary.stand_in for r in runs) or any(c.stand_in for c in cards):
        parts += ["> Some agents ran on the offline rule-based model stand-in, not an LLM.", ""]
    parts += [render_ladder(ladder) for ladder in ladders]
    forks = build_fork_groups(runs)
    parts += [render_forks(group) for group in forks]
    parts += [render_comparison(c) + v for c, v in zip(comparisons, verdicts, strict=True)]
    if not ladders and not comparisons and not forks:
        parts.append("No scale-ladder runs and no experiment here; each run's report.md has its scores.\n")
    parts += [f"- skipped {p}" for p in problems]
    markdown, html = recordings / SUMMARY_FILE, recordings / HTML_FILE
    text = safe_text("\n".join(parts) + "\n")
    if write:
        _replace(markdown, text)
        from gateway.report.html import render_html  # plotly takes a while to import; only needed here

        _replace(html, render_html(recordings, runs, ladders, comparisons, problems, verdicts, cards, forks))
    return MatrixReport(
        markdown, html, ladders, comparisons, written, problems, len(runs) + len(cards), verdicts, forks, text, rendered
    )
