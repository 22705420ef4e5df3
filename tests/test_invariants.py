"""The invariants every run keeps (gateway/cli/invariants.py), over run kinds × interruptions:
a sample of the matrix in CI; `bench/interruptions.py` runs all of it and prints the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interruption_matrix import run_kind

# where a fork meets an interruption (CI's time allows ~1 minute here; the other 35 cells, every
# run kind × every moment, run in bench/interruptions.py: 42 cells, all held, 367 s)
SAMPLE = {
    "from_fork": ("sigint_first_second", "kill_restore"),
    "isolated_rollouts": ("kill_checkpoint",),
}


@pytest.mark.parametrize("kind", sorted(SAMPLE))
def test_an_interrupted_run_resumes_to_the_uninterrupted_grades_and_keeps_every_invariant(
    kind: str, tmp_path: Path
) -> None:
    cells = run_kind(tmp_path, kind, ("none", *SAMPLE[kind]))
    for cell in cells:
        assert cell.held is True, f"{cell.kind} × {cell.interruption}: {cell.mark()} — {cell.detail}"
