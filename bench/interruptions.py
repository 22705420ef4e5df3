"""Run kinds × interruptions, all of it: every run kind interrupted at every moment, run again to
its end, and held to the invariants and to the uninterrupted run's grades
(tests/interruption_matrix.py; CI runs a sample of it in tests/test_invariants.py).

    .venv/bin/python bench/interruptions.py [--kinds plain,from_fork,...] [--keep DIR]

Prints one row per run kind: held / NOT HELD / n/a per interruption, then each cell that did not
hold with what was found, and the wall time. The `ray` kind runs each fork as a task on a private
local Ray (the `[ray]` extra, installed by ./run-tests).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.interruption_matrix import INTERRUPTIONS, KINDS, Cell, run_kind


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as temp:
        root = args.keep or Path(temp)
        cells: list[Cell] = []
        print("| run kind | " + " | ".join(INTERRUPTIONS) + " |", flush=True)
        print("|---|" + "---|" * len(INTERRUPTIONS), flush=True)
        for kind in kinds:
            row = run_kind(root, kind)
            cells += row
            print(f"| {kind} | " + " | ".join(c.mark() for c in row) + " |", flush=True)
    for cell in cells:
        if cell.held is False or cell.detail:
            print(f"- {cell.kind} × {cell.interruption}: {cell.mark()} — {cell.detail}")
    failed = sum(1 for c in cells if c.held is False)
    print(f"{len(cells)} cells, {failed} not held, {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
