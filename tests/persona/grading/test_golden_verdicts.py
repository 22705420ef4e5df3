"""Golden verdicts (issue 61): every labelled item's verdict and the rule that decided it are as
the committed file holds — a grading change shows exactly which verdicts it moves."""

from __future__ import annotations

import pytest

from gateway.report import golden_verdicts
from gateway.report.golden_verdicts import GOLDEN, golden_lines, labelled_sets, moved
from persona.grading import doubt
from persona.grading.rules import RULES

WRITE = ".venv/bin/python -m gateway.report.golden_verdicts --write"


def test_every_labelled_verdict_and_its_rule_is_as_the_golden_file_holds() -> None:
    today = golden_lines(labelled_sets())
    changed = moved(GOLDEN.read_text(encoding="utf-8").splitlines(), today)
    listed = "\n".join(changed[:60]) + (f"\n… and {len(changed) - 60} more" if len(changed) > 60 else "")
    assert not changed, (
        f"{len(changed)} labelled verdict(s) moved (SET:LINE: before → now):\n{listed}\n"
        f"If the change means to move them, write the file again and commit its diff with the rule: {WRITE}"
    )
    rules = {line.split(" ")[5] for line in today if not line.startswith("# ")} - {"-"}
    assert rules <= set(RULES), rules - set(RULES)  # every deciding rule is a registered one
    answers = [line for line in today if not line.startswith("# ") and line.split(" ")[1] == "answer"]
    assert answers and all(line.split(" ")[5] != "-" for line in answers)  # every answer names its rule


def test_a_changed_rule_shows_the_verdicts_it_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The golden check fails on a deliberately changed rule, naming the items and their rules."""
    one = [p for p in labelled_sets() if p.name == "answers-en.jsonl" and p.parent.name == "calibration"]
    before = golden_lines(one)

    class NoHedge:
        def search(self, text: str) -> None:
            return None

    real = doubt._cues

    def cues_without_hedges() -> object:
        found = real()
        return type("Cues", (), {**{k: getattr(found, k) for k in dir(found) if not k.startswith("__")}, "hedge": NoHedge()})

    monkeypatch.setattr(doubt, "_cues", cues_without_hedges)
    changed = moved(before, golden_lines(one))
    assert changed and all("doubt.hedged" in line.split("→")[0] for line in changed), changed[:5]
    assert golden_verdicts.GOLDEN.name == "golden_verdicts.txt"
