"""A verdict as a value: what was decided, and each clause with its evidence — computed once,
rendered apart, read alike by the experiment's decision (`decision.py`), `compare` and the CI
gate (`gate.py`).

What a caller may rely on: `Ruling.verdict` is `ACCEPT` only when every clause holds, `REJECT`
when any clause fails (a failed clause decides, whatever can't be checked), `NO_DECISION` when
none fails and one can't be checked — never a pass over what wasn't checked. `exit_code` is the
gate's (0, 1, 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Verdict(StrEnum):
    """The value of `--json`'s `verdict`; how each report words it is its renderer's."""

    ACCEPT = "accept"  # the decision: B is accepted; the gate: nothing regressed
    REJECT = "regression"  # the decision: keep A; the gate: a regression
    NO_DECISION = "no decision"

    @property
    def exit_code(self) -> int:
        return {Verdict.ACCEPT: 0, Verdict.REJECT: 1, Verdict.NO_DECISION: 3}[self]


@dataclass(frozen=True)
class Clause:
    """One condition of a verdict: `holds` True, False, or None (it can't be checked), and the
    evidence in words."""

    holds: bool | None
    text: str

    @property
    def mark(self) -> str:
        return {True: "✓", False: "✗", None: "?"}[self.holds]


@dataclass(frozen=True)
class Ruling:
    """A verdict and the clauses it follows from (see the module docstring)."""

    verdict: Verdict
    clauses: tuple[Clause, ...]

    @classmethod
    def of(cls, clauses: list[Clause] | tuple[Clause, ...]) -> Ruling:
        """The verdict the clauses give: a failing clause rejects, an unchecked one withholds."""
        if any(c.holds is False for c in clauses):
            verdict = Verdict.REJECT
        elif any(c.holds is None for c in clauses):
            verdict = Verdict.NO_DECISION
        else:
            verdict = Verdict.ACCEPT
        return cls(verdict, tuple(clauses))

    @property
    def deciding(self) -> Clause | None:
        """The clause the verdict follows from: the first failing one, else the first that
        can't be checked; None when every clause holds."""
        return next(iter(self.failing or self.unchecked), None)

    @property
    def failing(self) -> tuple[Clause, ...]:
        return tuple(c for c in self.clauses if c.holds is False)

    @property
    def unchecked(self) -> tuple[Clause, ...]:
        return tuple(c for c in self.clauses if c.holds is None)
