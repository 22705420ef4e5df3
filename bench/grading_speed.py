"""How fast the exact grader grades: `judge-check --grader exact` on the shipped calibration
sets of a base commit (default: before issue 49's language libraries, cd0d875), timed with this
tree's grader and with the base commit's, side by side in one run (these machines are noisy).
Also the first grade's cost (pymorphy3's dictionaries load once). Prints figures; asserts
nothing. Usage: `.venv/bin/python bench/grading_speed.py [BASE_COMMIT]`.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = sys.argv[1] if len(sys.argv) > 1 else "cd0d875"

# run in a fresh interpreter with `tree` first on sys.path: grade the given sets, print seconds
TIMER = """
import asyncio, sys, time
from pathlib import Path
tree, sets = sys.argv[1], [Path(p) for p in sys.argv[2:]]
sys.path.insert(0, tree)
start = time.perf_counter()
from persona.grading.judge import ExactJudge
from gateway.report.judge_check import check_sets
imported = time.perf_counter()
result = asyncio.run(check_sets(ExactJudge(), sets))
done = time.perf_counter()
items = result.total.items + sum(t.claims + t.answers + t.stalls + t.unscored for t in result.never_told.values())
print(f"{imported - start:.2f} {done - imported:.2f} {items}")
"""


def timed(tree: Path, sets: list[Path]) -> tuple[float, float, int]:
    out = subprocess.run(
        [sys.executable, "-c", TIMER, str(tree), *map(str, sets)],
        capture_output=True, text=True, check=True, cwd=tree,
        env={"PATH": "/usr/bin:/bin", "MARATHON_PROGRESS_AFTER": "999999"},
    ).stdout.split()  # fmt: skip
    return float(out[0]), float(out[1]), int(out[2])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), BASE], check=True,
                       capture_output=True)  # fmt: skip
        try:
            sets = sorted((base / "persona" / "grading" / "calibration").glob("*.jsonl"))
            rows = []
            for _ in range(2):  # interleaved, twice: noise shows as the spread
                rows.append(("base " + BASE, *timed(base, sets)))
                rows.append(("this tree", *timed(ROOT, sets)))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=True)
    print(f"judge-check --grader exact on the calibration sets of {BASE} ({rows[0][3]} items):")
    print("| grader | import (s) | grading (s) | items/s |")
    print("|---|---|---|---|")
    for name, imported, graded, items in rows:
        print(f"| {name} | {imported:.2f} | {graded:.1f} | {items / graded:.0f} |")


if __name__ == "__main__":
    main()
