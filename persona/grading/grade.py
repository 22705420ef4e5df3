"""A grade: a score 0–10 with its reason, and how sure the grader is of it — what every grader
returns and every reader of grades (the retry rule, reports, judge-check) relies on."""

from __future__ import annotations

from dataclasses import dataclass

from persona.outcome import is_full


@dataclass(frozen=True)
class Grade:
    """`certain` False: the grader can't be sure (the reason says why) and `score` is only its
    best guess — a judge decides, or the question stays unresolved; never a confident figure."""

    score: float
    reason: str
    never_told: bool = False
    certain: bool = True
    # False: whether the answer claims it was never told is the detector's guess (a claim and
    # what may be the value side by side) — the retry rule nudges and keeps both tries' grades
    never_told_certain: bool = True
    never_told_reason: str = ""
    # the rule that decided it (persona/grading/rules.py), and the rewrites applied to the answer
    # before it was matched — "" and () from a grader without named rules (an LLM judge)
    decided_by: str = ""
    rewrites: tuple[str, ...] = ()

    @property
    def correct(self) -> bool:
        """Fully right (`persona.outcome.is_full`): the bar that spares a nudge."""
        return is_full(self.score)

    def bounds(self) -> tuple[float, float]:
        """The score itself when certain; else anything from 0 to 10."""
        return (self.score, self.score) if self.certain else (0.0, 10.0)
