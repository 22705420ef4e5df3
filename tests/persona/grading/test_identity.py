"""The exact grader's identity (issue 61): any byte of its rules or tables, or a language
library's version, gives another; its measurement (the labelled sets) does not."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from persona.grading import identity
from persona.grading.identity import grader_identity
from tests.conftest import REPO


@pytest.fixture
def persona_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    copy = tmp_path / "persona"
    shutil.copytree(REPO / "persona", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(identity, "PERSONA", copy)
    grader_identity.cache_clear()
    yield copy
    grader_identity.cache_clear()


def _again() -> str:
    grader_identity.cache_clear()
    return grader_identity().digest


def test_a_rule_a_table_or_a_library_changes_the_identity_and_the_labelled_sets_do_not(
    persona_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    today = grader_identity()
    assert today.digest.startswith("exact-") and len(today.digest) == len("exact-") + 16
    assert set(today.libraries) == {"pymorphy3", "pymorphy3-dicts-ru", "snowballstemmer", "wn", "iuliia"}
    calibration = next((persona_copy / "grading" / "calibration").glob("*.jsonl"))
    calibration.write_text(calibration.read_text() + "\n")
    assert _again() == today.digest  # the measurement is not the rule
    rule = persona_copy / "grading" / "exact.py"
    rule.write_text(rule.read_text().replace("empty answer", "an empty answer"))
    changed = _again()
    assert changed != today.digest
    table = persona_copy / "languages" / "en.json5"
    table.write_text(table.read_text() + "\n")
    assert _again() not in (today.digest, changed)
    monkeypatch.setattr(identity, "_installed", lambda name: "9.9" if name == "pymorphy3" else "1")
    assert _again() not in (today.digest, changed)
