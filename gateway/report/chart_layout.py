"""The one layout every chart of the report shares, and how a figure leaves Python: as the
JSON plotly.js draws (the report page inlines it, offline)."""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go


def as_figure(fig: go.Figure, title: str) -> dict[str, Any]:
    fig.update_layout(title=title, margin={"l": 60, "r": 20, "t": 50, "b": 50}, template="plotly_white")
    data: dict[str, Any] = json.loads(fig.to_json())
    return data
