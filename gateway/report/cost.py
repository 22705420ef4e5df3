"""Token counts and cost per role (persona, agent, judge), from usage the providers reported.

Prices are data (`prices.json5`), matched by the longest model-name prefix. A model without a
price is reported as such; its cost is never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import json5

KINDS = ("input", "output", "cache_read", "cache_write")


@cache
def prices() -> dict[str, dict[str, float]]:
    data: dict[str, dict[str, float]] = json5.loads(
        (Path(__file__).parent / "prices.json5").read_text(encoding="utf-8")
    )
    return data


def price_for(model: str) -> dict[str, float] | None:
    matches = [key for key in prices() if model.startswith(key) or model.split("/")[-1].startswith(key)]
    return prices()[max(matches, key=len)] if matches else None


@dataclass
class RoleCost:
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    dollars: float = 0.0
    unpriced: set[str] = field(default_factory=set)
    calls: int = 0

    def add(self, model: str, usage: dict[str, int], calls: int = 1) -> None:
        self.calls += calls
        for kind in KINDS:
            self.tokens[kind] += int(usage.get(kind, 0) or 0)
        price = price_for(model)
        if price is None:
            self.unpriced.add(model or "unknown model")
            return
        self.dollars += sum(price.get(kind, 0.0) * int(usage.get(kind, 0) or 0) for kind in KINDS) / 1e6

    def describe(self) -> str:
        if not self.calls:
            return "—"
        t = self.tokens
        tokens = f"{t['input']:,} in, {t['output']:,} out, {t['cache_read']:,} cache read, {t['cache_write']:,} cache write"
        if self.unpriced:
            cost = f"price unknown for {', '.join(sorted(self.unpriced))}" + (
                f" (priced part ${self.dollars:.4f})" if self.dollars else ""
            )
        else:
            cost = f"${self.dollars:.4f}"
        return f"{self.calls} calls; {tokens}; {cost}"
