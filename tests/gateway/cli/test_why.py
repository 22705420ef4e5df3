"""What a run that did not complete prints: its reason in one line — ours whole (its fix is at
the end of the sentence), an agent's error body cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.cli.runs import _print_why
from gateway.log.vocabulary import TerminationReason
from gateway.run.run_header import RunOutcome


def test_our_reason_is_printed_whole_and_an_agents_body_cut(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 45 item 6: the persona's one-sentence reason was cut before its fix ("…or set persona `…")."""
    ours = "the persona model's context window can't hold the conversation: " + "x" * 300 + " — or set persona `context_tokens`"
    _print_why(RunOutcome("r", tmp_path, TerminationReason.PERSONA_FAILED, detail=ours))
    assert ours in capsys.readouterr().out
    page = "<html>" + "error " * 200 + "</html>"
    _print_why(RunOutcome("r", tmp_path, TerminationReason.AGENT_FAILED, detail=page))
    line = next(x for x in capsys.readouterr().out.splitlines() if "why:" in x)
    assert line.endswith("…") and len(line) < 260
