from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.screening import load_pool, marks
from tests.conftest import DEMO, REPO
from tests.marathon_cli import marathon

POOL = REPO / "benchmarks" / "distractors"


def test_the_shipped_pool_is_large_enough_and_clean() -> None:
    pool = load_pool(POOL)
    assert len(pool.sessions) >= 40
    assert "demo-en" in pool.evidence
    result = marathon("check", str(POOL), cwd=REPO)
    assert result.returncode == 0 and "no shared names, numbers or dates" in result.stdout


@pytest.mark.parametrize(
    ("fact", "clash"),
    [
        ("My friend's cat is also called Pixel", "pixel"),
        ("He paid 1,840 euros for the boat", "1840.0"),
        ("They met on 14 May at the harbour", "14 may"),
        ("Her flight was LH1173 as well", "LH1173"),
    ],
)
def test_an_overlap_with_the_evidence_is_rejected_with_file_and_line(
    tmp_path: Path, fact: str, clash: str
) -> None:
    pool = tmp_path / "pool"
    pool.mkdir()
    (pool / "pool.json5").write_text(f'{{screen_against: ["{DEMO}"]}}')
    shutil.copy(POOL / "02-astronomy.md", pool / "01-astronomy.md")
    (pool / "02-bad.md").write_text(f"# Bad\n\n## 1. Story\n1.1 A harmless line\n1.2 {fact}\n")
    with pytest.raises(BenchmarkErrors) as info:
        load_pool(pool)
    (error,) = info.value.errors
    assert (error.location.path.name, error.location.line) == ("02-bad.md", 5)
    assert "overlaps the evidence of demo-en" in error.message and clash in error.message


def test_marks_ignore_sentence_starts_months_and_small_numbers() -> None:
    found = marks("Yesterday Ingrid baked 3 loaves in March. She called the starter Bubbles.")
    assert found.entities == {"ingrid", "bubble"} and not found.numbers and not found.dates
