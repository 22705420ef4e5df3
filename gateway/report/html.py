"""The self-contained HTML report of a recordings folder (design §7).

One file, viewable offline: plotly.js is inlined, every chart is a plotly figure built here
and drawn in the browser; per-run charts are drawn for the run picked in a list, so the file
stays one copy of plotly.js however many runs there are. Built from the recordings alone.
Text from agents and personas reaches the page only as JSON data shown with `textContent`,
never as markup.
"""

from __future__ import annotations

import html
import json
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from gateway import __version__
from gateway.report.autopsy import autopsy_of
from gateway.report.autopsy_render import render_autopsy_section
from gateway.report.budget import Ladder, render_ladder
from gateway.report.chart_layout import as_figure as _figure
from gateway.report.comparison import Comparison, render_comparison
from gateway.report.context_chart import context_over_time
from gateway.report.forks import ForkGroup, render_forks
from gateway.report.markdown import render_markdown
from gateway.report.question_order import question_order
from gateway.report.recordings import RecordedRun
from gateway.report.run_cards import RunCard
from gateway.report.summary import mean_range
from gateway.step_progress import StepProgress

TEMPLATE = Path(__file__).parent / "templates" / "report.html"
STAND_IN_NOTE = (
    "Some runs' agent ran on the offline rule-based model stand-in, not an LLM: their scores "
    "measure the platform, not a model."
)


def score_by_chapter(run: RecordedRun) -> dict[str, Any]:
    chapters: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for q in run.summary.planned:
        ev = run.summary.evaluations.get(q.id)
        if ev is not None:
            chapters[q.chapter].append(ev.bounds())
    return _mean_bars(chapters, "Score by chapter")


def score_by_tag(run: RecordedRun) -> dict[str, Any]:
    return _mean_bars(run.summary.by_tag, "Score by question tag")


def _mean_bars(groups: dict[str, list[tuple[float, float]]], title: str) -> dict[str, Any]:
    """A bar per group at its mean; where grades are unresolved, the bar is the least the mean
    can be and a whisker reaches the most — never one height over guesses."""
    spans = [mean_range(v) or (0.0, 0.0) for v in groups.values()]
    fig = go.Figure(
        go.Bar(
            x=list(groups),
            y=[low for low, _ in spans],
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [high - low for low, high in spans],
                "arrayminus": [0] * len(spans),
            },
            hovertext=[
                f"{low:.2f}" if low == high else f"{low:.2f}–{high:.2f} (unresolved grades)"
                for low, high in spans
            ],
            # each bar says its mean: a mean of 0 (every abstain question failed) is a bar of no
            # height, which a reader must not take for a group with no data
            text=[f"{low:.1f}" if low == high else f"{low:.1f}–{high:.1f}" for low, high in spans],
            textposition="outside",
            cliponaxis=False,
            name="mean score",
        )
    )
    fig.update_yaxes(range=[0, 10], title="mean score / 10")
    if not groups:
        _empty(fig, "no question graded in this run (a teaching run's exam is played by its forks)")
    return _figure(fig, title)


def _empty(fig: go.Figure, text: str) -> None:
    """A panel with nothing to plot says so in words, not with a bare axis of −1…1."""
    fig.add_annotation(
        text=text,
        xref="paper",
        yref="paper",
        x=0.5,
        y=0.5,
        showarrow=False,
        font={"size": 15, "color": "#555"},
    )
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)


def memory_calls_per_question(run: RecordedRun) -> dict[str, Any]:
    qids = [q.id for q in run.summary.planned if q.id in run.summary.evaluations]
    # unrecorded traffic: no bars at all, never a row of zeros
    calls = [run.summary.memory_calls_for(q) for q in qids] if run.observed else []
    fig = go.Figure(go.Bar(x=qids if run.observed else [], y=calls, name="memory calls"))
    fig.update_yaxes(title="memory calls")
    if not run.observed:
        _empty(fig, "not observable: the agent's LLM traffic was not recorded")
    elif not any(calls):
        _empty(fig, "no memory calls" + (" while questions were asked" if qids else " (no question graded)"))
    title = "Memory calls per question" + ("" if run.observed else " (not observable: traffic not recorded)")
    return _figure(fig, title)


# Pass@1, @2, @4 often coincide on a rung: each budget its own dash and marker, drawn wider
# first, so a line under another still shows
BUDGET_STYLES = [
    ("solid", "circle", 4), ("dash", "square", 3), ("dot", "diamond", 2.5), ("dashdot", "triangle-up", 2),
]  # fmt: skip


def pass_at_b(ladder: Ladder) -> dict[str, Any]:
    fig = go.Figure()
    names = [r.name for r in ladder.rungs if r.observable]
    drawn: list[list[float]] = []
    for n, b in enumerate(ladder.budgets):
        cells = [r.cells[b] for r in ladder.rungs if r.observable]
        rates = [c.pass_rate for c in cells]
        dash, symbol, width = BUDGET_STYLES[n % len(BUDGET_STYLES)]
        fig.add_trace(
            go.Scatter(
                x=names,
                y=rates,
                mode="lines+markers",
                name=f"Pass@{b}",
                line={"dash": dash, "width": width},
                marker={"symbol": symbol, "size": 11 - 1.5 * (n % len(BUDGET_STYLES))},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [c.interval[1] - r for c, r in zip(cells, rates, strict=True)],
                    "arrayminus": [r - c.interval[0] for c, r in zip(cells, rates, strict=True)],
                },
            )
        )
        drawn.append(rates)
    fig.add_hline(y=ladder.target, line_dash="dash", annotation_text=f"target ρ = {ladder.target:g}")
    fig.update_yaxes(range=[0, 1.05], title="Pass@B (95 % CI, bootstrap by question)")
    fig.update_xaxes(title="rung")
    title = f"Pass@B by rung — {ladder.label}"
    if len(drawn) > 1 and all(rates == drawn[0] for rates in drawn):
        budgets = " = ".join(f"Pass@{b}" for b in ladder.budgets)
        title += f"<br><sub>{budgets} on every rung: the lines lie on one another</sub>"
    return _figure(fig, title)


def fork_pass_rates(group: ForkGroup) -> dict[str, Any]:
    """Per question, the share of its rollouts that passed, one bar per exam mode: where a
    question's bars differ, the exam's order changed its answer; where a bar is short of 1 or 0,
    the agent is not consistent from one and the same state. A pass is the table's and pass^k's
    (a full score at the first try, `ModeResult.passes`) — not a score of 5 and up (issue 62: the
    chart and the table beside it counted two different passes)."""
    fig = go.Figure()
    for mode, result in sorted(group.modes.items()):
        qids = sorted(result.passes, key=question_order)
        rates = [result.pass_rate(q) for q in qids]
        counts = [f"{len(result.passes[q])} rollouts" for q in qids]
        fig.add_trace(go.Bar(x=qids, y=rates, name=mode, hovertext=counts))
    fig.update_yaxes(range=[0, 1], title="share of rollouts passed (a full score at the first try)")
    if not fig.data:
        _empty(fig, "no fork has been graded yet")
    return _figure(fig, "Pass rate per question over rollouts")




def ab_plot(c: Comparison) -> dict[str, Any]:
    groups = list(c.groups)
    fig = go.Figure()
    a, b = c.names["A"], c.names["B"]
    for name, attr in (
        (f"wins A ({a}, without)", "wins_a"),
        (f"wins B ({b}, with)", "wins_b"),
        ("both", "both"),
        ("neither", "neither"),
    ):
        fig.add_trace(go.Bar(x=groups, y=[getattr(c.groups[g], attr) for g in groups], name=name))
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title="paired questions")
    return _figure(fig, f"Paired A/B by question group — {c.experiment}")


def _charted_runs(runs: list[RecordedRun]) -> list[dict[str, Any]]:
    """Each run read whole, charted one by one (a few seconds for an experiment: counted)."""
    charted = [r for r in runs if not r.released]
    out = []
    with StepProgress("charting runs", len(charted)) as progress:
        for r in charted:
            charts = [score_by_chapter(r), score_by_tag(r), context_over_time(r), memory_calls_per_question(r)]
            label = f"{r.summary.run_id} — {r.summary.status}, mean " + r.summary.describe_mean()
            summary = render_markdown(r.summary)
            if r.summary.evaluations:  # the memory autopsy, as report.md has it
                summary = summary.rstrip() + "\n\n" + "\n".join(render_autopsy_section(autopsy_of(r))) + "\n"
            out.append({"label": label, "summary": summary, "charts": charts})
            progress.advance(r.run_dir.name)
    return out


def render_html(
    recordings: Path,
    runs: list[RecordedRun],
    ladders: list[Ladder],
    comparisons: list[Comparison],
    problems: list[str],
    verdicts: list[str] | None = None,
    cards: Sequence[RunCard] = (),
    forks: Sequence[ForkGroup] = (),
) -> str:
    """The report page: every ladder, fork group and experiment, each run read whole charted one
    by one, and a line for each other run — those a section above sums up (forks, ladder rungs:
    their logs were released) apart from the older runs (`cards`)."""
    sections = [
        {"id": f"ladder{n}", "title": f"Scale ladder: {ladder.label}", "charts": [pass_at_b(ladder)],
         "markdown": render_ladder(ladder)}
        for n, ladder in enumerate(ladders)
    ] + [
        {"id": f"ab{n}", "title": f"Paired A/B: {c.experiment}", "charts": [ab_plot(c)],
         "markdown": render_comparison(c) + (verdicts[n] if verdicts else "")}
        for n, c in enumerate(comparisons)
    ] + [
        {"id": f"forks{n}", "title": f"Exams forked from {group.teacher}'s checkpoint",
         "charts": [fork_pass_rates(group)] if len(group.teachings) <= 1 else [], "markdown": render_forks(group)}
        for n, group in enumerate(forks)
    ]  # fmt: skip
    data = {
        "sections": sections,
        "runs": _charted_runs(runs),
        "uncharted": [
            {
                "title": "runs summed up in the sections above (forks, ladder rungs), not charted one by one",
                "lines": [
                    f"{r.summary.run_id} — {r.summary.status}, mean {r.summary.describe_mean()} ({r.run_dir / 'report.md'})"
                    for r in runs
                    if r.released
                ],
            },
            {
                "title": "older runs, not charted here (each run's report.md has its scores; marathon view opens any of them)",
                "lines": [card.line(recordings) for card in cards],
            },
        ],
    }
    notes = []
    if any(r.summary.stand_in for r in runs) or any(c.stand_in for c in cards):
        notes.append(f'<p class="note">{html.escape(STAND_IN_NOTE)}</p>')
    for problem in problems:
        notes.append(f'<p class="note">Skipped {html.escape(problem)}</p>')
    # "</" inside the JSON would end the <script> element early: an agent's answer is data
    payload = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        title="marathonbench report",
        generated=time.strftime("%Y-%m-%d %H:%M"),
        recordings=html.escape(str(recordings)),
        version=__version__,
        notes="\n".join(notes),
        plotly=get_plotlyjs(),
        data=payload,
    )
