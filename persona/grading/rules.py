"""The exact grader's rules by name: every rule that can decide a verdict, or rewrite an answer
before it is matched, has an id, a stage and the languages it reads — so every `Grade` says which
rule decided it (`decided_by`) and which rewrites were applied (`rewrites`), and a change shows
exactly which verdicts it moved (tests/persona/grading/golden_verdicts.json, issue 61).

The stages, in the order an answer goes through them:
- **normalise** — the answer rewritten toward the expected value's notation before matching
  (the expected spelling and word forms, a weekday as the expected date, a place as its people
  name it); recorded in `Grade.rewrites` when it changed the answer;
- **find** — whether each expected item is in the answer (numbers, codes, key terms);
- **doubt** — why a found (or missing) value can't be a sure verdict: tried in order, the first
  that speaks makes the grade unsure (`certain` False) and decides it;
- **verdict** — the score itself: a value found, missing, a wrong value beside it, or one of the
  tagged questions' readings (abstain, deleted).

What a caller may rely on: `RULES` holds every id a grade can carry, in the order they are
tried within each stage; an id is stable across releases unless its rule's meaning changes
(then the grader's identity changes too, and the golden file shows the verdicts it moved).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RuleStage = Literal["normalise", "find", "doubt", "verdict"]
ANY = ("*",)  # a rule that reads every language (its words come from the language tables)


@dataclass(frozen=True)
class Rule:
    id: str
    stage: RuleStage
    languages: tuple[str, ...]
    doc: str


RULES: dict[str, Rule] = {}


def rule(rule_id: str, stage: RuleStage, doc: str, languages: tuple[str, ...] = ANY) -> str:
    """Register a rule (once, at import) and return its id, for a `Grade` to carry."""
    if rule_id in RULES and RULES[rule_id] != Rule(rule_id, stage, languages, doc):
        raise ValueError(f"grading rule {rule_id!r} registered twice, differently")
    RULES[rule_id] = Rule(rule_id, stage, languages, doc)
    return rule_id
