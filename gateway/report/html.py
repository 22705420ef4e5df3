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
from pathlib import Path
from string import Template
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from gateway import __version__
from gateway.log.events import Asked, CompactionSeen, LLMExchange
from gateway.report.budget import Ladder, render_ladder
from gateway.report.comparison import Comparison, render_comparison
from gateway.report.markdown import render_markdown
from gateway.report.recordings import RecordedRun

TEMPLATE = Path(__file__).parent / "templates" / "report.html"
STAND_IN_NOTE = (
    "Some runs' agent ran on the offline rule-based model stand-in, not an LLM: their scores "
    "measure the platform, not a model."
)


def _figure(fig: go.Figure, title: str) -> dict[str, Any]:
    fig.update_layout(title=title, margin={"l": 60, "r": 20, "t": 50, "b": 50}, template="plotly_white")
    data: dict[str, Any] = json.loads(fig.to_json())
    return data


def score_by_chapter(run: RecordedRun) -> dict[str, Any]:
    chapters: dict[str, list[float]] = defaultdict(list)
    for q in run.summary.planned:
        ev = run.summary.evaluations.get(q.id)
        if ev is not None:
            chapters[q.chapter].append(ev.score)
    names = list(chapters)
    fig = go.Figure(go.Bar(x=names, y=[sum(v) / len(v) for v in chapters.values()], name="mean score"))
    fig.update_yaxes(range=[0, 10], title="mean score / 10")
    return _figure(fig, "Score by chapter")


def score_by_tag(run: RecordedRun) -> dict[str, Any]:
    tags = run.summary.by_tag
    fig = go.Figure(
        go.Bar(x=list(tags), y=[sum(v) / len(v) if v else 0 for v in tags.values()], name="mean score")
    )
    fig.update_yaxes(range=[0, 10], title="mean score / 10")
    return _figure(fig, "Score by question tag")


def context_over_time(run: RecordedRun) -> dict[str, Any]:
    """The agent's LLM input size per call, with compactions and questions marked."""
    events = run.log.events
    start = next((e.ts for e in events if e.ts), 0.0)
    calls = [e for e in events if isinstance(e, LLMExchange) and e.kind != "probe"]
    minutes = [(e.ts - start) / 60 for e in calls]
    fig = go.Figure(
        go.Scatter(
            x=minutes, y=[e.input_tokens for e in calls], mode="lines+markers", name="input tokens per call"
        )
    )
    compactions = [e for e in events if isinstance(e, CompactionSeen)]
    fig.add_trace(
        go.Scatter(
            x=[(e.ts - start) / 60 for e in compactions],
            y=[e.tokens_before for e in compactions],
            mode="markers",
            marker={"symbol": "x", "size": 12, "color": "crimson"},
            name="compaction",
            text=[e.kind for e in compactions],
        )
    )
    asked = [e for e in events if isinstance(e, Asked)]
    fig.add_trace(
        go.Scatter(
            x=[(e.ts - start) / 60 for e in asked],
            y=[0] * len(asked),
            mode="markers",
            marker={"symbol": "triangle-up", "size": 10, "color": "seagreen"},
            name="question",
            text=[e.question_id for e in asked],
        )
    )
    fig.update_xaxes(title="minutes since the run started")
    fig.update_yaxes(title="tokens")
    return _figure(fig, "Agent context size over time" + ("" if calls else " (LLM traffic not recorded)"))


def memory_calls_per_question(run: RecordedRun) -> dict[str, Any]:
    qids = [q.id for q in run.summary.planned if q.id in run.summary.evaluations]
    # unrecorded traffic: no bars at all, never a row of zeros
    calls = [run.summary.memory_calls_for(q) for q in qids] if run.observed else []
    fig = go.Figure(go.Bar(x=qids if run.observed else [], y=calls, name="memory calls"))
    fig.update_yaxes(title="memory calls")
    title = "Memory calls per question" + ("" if run.observed else " (not observable: traffic not recorded)")
    return _figure(fig, title)


def pass_at_b(ladder: Ladder) -> dict[str, Any]:
    fig = go.Figure()
    names = [r.name for r in ladder.rungs if r.observable]
    for b in ladder.budgets:
        cells = [r.cells[b] for r in ladder.rungs if r.observable]
        rates = [c.pass_rate for c in cells]
        fig.add_trace(
            go.Scatter(
                x=names,
                y=rates,
                mode="lines+markers",
                name=f"Pass@{b}",
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [c.interval[1] - r for c, r in zip(cells, rates, strict=True)],
                    "arrayminus": [r - c.interval[0] for c, r in zip(cells, rates, strict=True)],
                },
            )
        )
    fig.add_hline(y=ladder.target, line_dash="dash", annotation_text=f"target ρ = {ladder.target:g}")
    fig.update_yaxes(range=[0, 1.05], title="Pass@B (95 % CI, bootstrap by question)")
    fig.update_xaxes(title="rung")
    return _figure(fig, f"Pass@B by rung — {ladder.label}")


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


def render_html(
    recordings: Path,
    runs: list[RecordedRun],
    ladders: list[Ladder],
    comparisons: list[Comparison],
    problems: list[str],
    verdicts: list[str] | None = None,
) -> str:
    sections = [
        {"id": f"ladder{n}", "title": f"Scale ladder: {ladder.label}", "charts": [pass_at_b(ladder)],
         "markdown": render_ladder(ladder)}
        for n, ladder in enumerate(ladders)
    ] + [
        {"id": f"ab{n}", "title": f"Paired A/B: {c.experiment}", "charts": [ab_plot(c)],
         "markdown": render_comparison(c) + (verdicts[n] if verdicts else "")}
        for n, c in enumerate(comparisons)
    ]  # fmt: skip
    data = {
        "sections": sections,
        "runs": [
            {
                "label": f"{r.summary.run_id} — {r.summary.status}, mean "
                + ("—" if r.summary.mean is None else f"{r.summary.mean:.2f}"),
                "summary": render_markdown(r.summary),
                "charts": [
                    score_by_chapter(r),
                    score_by_tag(r),
                    context_over_time(r),
                    memory_calls_per_question(r),
                ],
            }
            for r in runs
        ],
    }
    notes = []
    if any(r.summary.stand_in for r in runs):
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
