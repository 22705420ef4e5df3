"""The agent's context size over a run, as the report draws it (the viewer draws the same
figure from the same rules, in gateway/viewer/assets/viewer.js: `chartFigure`).

What a reader must not be misled by (issue 47): a run stopped and resumed has no calls while
it was stopped, so the line breaks there and the stop is a shaded band ("stopped, then
resumed") — the drop after a restart is then explained; a new session (or an asked
compaction) is a dotted line named once in the legend, never a text label per line (a scale
ladder's rungs have dozens, and labels overlap into noise); the clock shows milliseconds
only where ticks are under a second apart, and a run of a few seconds gets whole seconds.
"""

from __future__ import annotations

import itertools
from datetime import datetime
from typing import Any

import plotly.graph_objects as go

from gateway.log.events import Asked, CompactionSeen, Event, LLMExchange, RunStart, SessionChanged
from gateway.report.chart_layout import as_figure
from gateway.report.recordings import RecordedRun

SESSION_LABELS = {"new_session": "new session", "compact": "compaction asked"}
SESSION_LINES = {"new_session": "dot", "compact": "dashdot"}
STOPPED = "stopped, then resumed"
STOPPED_FILL = "rgba(120, 120, 140, 0.18)"
# a clock in 24-hour form at every zoom: milliseconds only between ticks under a second apart
CLOCK_TICKS = [
    {"dtickrange": [None, 999], "value": "%H:%M:%S.%L"},
    {"dtickrange": [1000, 59999], "value": "%H:%M:%S"},
    {"dtickrange": [60000, None], "value": "%H:%M"},
]


def tick_count(seconds: float) -> int:
    """At most a tick a second (and 2…10): a run of a few seconds gets whole-second ticks, not
    half seconds each ending in milliseconds; zoomed in, plotly still goes finer."""
    return max(2, min(10, int(seconds)))


def _clock(ts: float) -> str:
    """A log timestamp as plotly's date axis reads it (local time, as the transcript shows it)."""
    return datetime.fromtimestamp(ts).isoformat(timespec="milliseconds")


def stops(events: list[Event]) -> list[tuple[float, float]]:
    """Each time a run was stopped and resumed: (its last event before, the resumed start)."""
    out = []
    for before, event in itertools.pairwise(events):
        if isinstance(event, RunStart) and event.resumed:
            out.append((before.ts, event.ts))
    return out


def broken_at(points: list[tuple[float, int]], breaks: list[float]) -> tuple[list[str | None], list[int | None]]:
    """The points as x and y, with a gap (None) at each break that falls between two of them:
    plotly draws no line across a gap."""
    xs: list[str | None] = []
    ys: list[int | None] = []
    pending = sorted(breaks)
    for ts, value in sorted(points):
        while pending and pending[0] <= ts:
            if xs:
                xs.append(None)
                ys.append(None)
            pending.pop(0)
        xs.append(_clock(ts))
        ys.append(value)
    return xs, ys


def context_over_time(run: RecordedRun) -> dict[str, Any]:
    """The agent's LLM input size per call, with compactions and questions marked, over the
    time of day (24-hour, as in the transcript: a short run's axis is seconds, not 0.045 min)."""
    events = run.log.events
    calls = [e for e in events if isinstance(e, LLMExchange) and e.kind.conversational]
    stopped = stops(events)
    xs, ys = broken_at([(e.ts, e.input_tokens) for e in calls], [started for _, started in stopped])
    fig = go.Figure(go.Scatter(x=xs, y=ys, mode="lines+markers", name="input tokens per call", connectgaps=False))
    compactions = [e for e in events if isinstance(e, CompactionSeen)]
    fig.add_trace(
        go.Scatter(
            x=[_clock(e.ts) for e in compactions],
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
            x=[_clock(e.ts) for e in asked],
            y=[0] * len(asked),
            mode="markers",
            marker={"symbol": "triangle-up", "size": 10, "color": "seagreen"},
            name="question",
            text=[e.question_id for e in asked],
        )
    )
    changes = [e for e in events if isinstance(e, SessionChanged)]
    for change in changes:
        at = _clock(change.ts)
        fig.add_shape(
            type="line", xref="x", yref="paper", x0=at, x1=at, y0=0, y1=1,
            line={"dash": SESSION_LINES.get(change.action, "dot"), "width": 1, "color": "#667"},
        )  # fmt: skip
    for action in sorted({c.action for c in changes}):  # named once, in the legend
        count = sum(c.action == action for c in changes)
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="lines", name=f"{SESSION_LABELS.get(action, action)} ({count})",
                line={"dash": SESSION_LINES.get(action, "dot"), "width": 1, "color": "#667"},
            )
        )  # fmt: skip
    for last, started in stopped:
        fig.add_vrect(x0=_clock(last), x1=_clock(started), fillcolor=STOPPED_FILL, line_width=0, layer="below")
    if stopped:
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="markers", name=f"{STOPPED} ({len(stopped)})",
                marker={"symbol": "square", "size": 12, "color": STOPPED_FILL},
            )
        )  # fmt: skip
    times = [e.ts for e in events]
    fig.update_xaxes(
        type="date", tickformatstops=CLOCK_TICKS, hoverformat="%H:%M:%S", title="time of day (24-hour)",
        nticks=tick_count(max(times) - min(times) if times else 0.0),
    )  # fmt: skip
    fig.update_yaxes(title="tokens")
    return as_figure(fig, "Agent context size over time" + ("" if calls else " (LLM traffic not recorded)"))
