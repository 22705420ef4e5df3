"""What the autopsy saw of each question's value (`Links`), and the memory operations' success
rates they give (write recall, update accuracy, deletion compliance, retrieval recall, use
accuracy): for one run's report and for an arm of an A/B comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Links:
    """What the autopsy saw of one question's value, link by link: True, False, or None (not
    seen, not decided, or not a link this question has). The operation figures count these."""

    stored: bool | None = None  # an accepted write held it (for an update: the new value)
    in_input: bool | None = None  # a read returned it, or the system prompt or conversation held it
    right: bool | None = None  # the answer, a sure grade
    update: bool = False  # an [update] or [correction] question
    deletion_kept: bool | None = None  # a [deleted] question: the memory files still hold the fact
    memory: bool = False  # a question memory could answer (not an abstain, computed or untold one)
    deletion: bool = False  # a [deleted] question

    def to_json(self) -> dict[str, bool | None]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Links:
        def three(key: str) -> bool | None:
            value = data.get(key)
            return value if isinstance(value, bool) else None

        return cls(
            three("stored"), three("in_input"), three("right"), data.get("update") is True,
            three("deletion_kept"), data.get("memory") is True, data.get("deletion") is True,
        )  # fmt: skip


@dataclass(frozen=True)
class OperationFigure:
    """One memory operation's success, over the questions where it could be seen: `hits` of
    `of`, and `unsure` more where it could not be decided (not in `of`)."""

    name: str
    hits: int
    of: int
    unsure: int
    counts: str  # what one unit is ("told values", "updates"…)

    @property
    def share(self) -> float | None:
        return self.hits / self.of if self.of else None

    @property
    def cell(self) -> str:
        """As a table cell: "62% (31/50)", with what could not be decided."""
        if not self.of:
            return f"— ({self.unsure} not decided)" if self.unsure else "—"
        more = f", {self.unsure} not decided" if self.unsure else ""
        return f"{self.share:.0%} ({self.hits}/{self.of}{more})"

    def __str__(self) -> str:
        if not self.of and not self.unsure:
            return f"{self.name}: no {self.counts} to read it on"
        share = "—" if self.share is None else f"{self.share:.0%}"
        more = f" ({self.unsure} not decided)" if self.unsure else ""
        return f"{self.name}: {share} — {self.hits}/{self.of} {self.counts}{more}"


def _negated(value: bool | None) -> bool | None:
    return None if value is None else not value


def _figure(name: str, counts: str, seen: list[bool | None]) -> OperationFigure:
    return OperationFigure(name, sum(1 for v in seen if v), sum(1 for v in seen if v is not None), seen.count(None), counts)


def operation_figures(links: Sequence[Links]) -> list[OperationFigure]:
    """Write recall (told values an accepted write held), update accuracy (updates whose new
    value reached memory), deletion compliance (deleted facts gone from the memory files at the
    end), retrieval recall (stored values in the model's input at the exam), use accuracy
    (values in the input answered right) — each over the questions it can be read on (of one
    run, or of every run of an arm)."""
    memory = [q for q in links if q.memory and not q.deletion]
    return [
        _figure("write recall", "told values", [q.stored for q in memory if not q.update]),
        _figure("update accuracy", "updates", [q.stored for q in memory if q.update]),
        _figure("deletion compliance", "deletions", [_negated(q.deletion_kept) for q in links if q.deletion]),
        _figure("retrieval recall", "stored values", [q.in_input for q in memory if q.stored]),
        _figure("use accuracy", "values in the input", [q.right for q in memory if q.in_input]),
    ]
