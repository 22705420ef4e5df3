"""Golden verdicts: every labelled answer's and reply's verdict under the exact grader, with the
rule that decided it, in one committed file (tests/persona/grading/golden_verdicts.txt).

Why: a grading change must show exactly which verdicts it moves (issue 61). The test
regenerates the file and fails with the list of items whose verdict or deciding rule moved; a
change that means to move them writes the file again and commits the diff beside the rule:

    .venv/bin/python -m gateway.report.golden_verdicts --write

The format is text, one line per item under a `# SET` heading, so a diff reads item by item:
`LINE KIND VERDICT SURE NUDGED RULE [after REWRITES]` — VERDICT the score of an answer, the
reading of a reply (claim / answer / none), the stall rule's for a stall.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from gateway.report.judge_check import ItemVerdict, check_sets
from gateway.report.labelled_sets import calibration_sets
from persona.grading.judge import ExactJudge

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "persona" / "grading" / "golden_verdicts.txt"


def labelled_sets() -> list[Path]:
    """Every labelled set: the calibration (tuning) sets and the held-out ones."""
    held_out = (ROOT / "tests" / "persona" / "grading").glob("heldout*/*.jsonl")
    return sorted({*calibration_sets(), *held_out})


def golden_lines(paths: list[Path]) -> list[str]:
    """The file's lines for these sets, in their order."""
    result = asyncio.run(check_sets(ExactJudge(), paths))
    out: list[str] = []
    shown = ""
    for v in result.verdicts:
        name = Path(v.set).resolve().relative_to(ROOT).as_posix()
        if name != shown:
            out.append(f"# {name}")
            shown = name
        out.append(_line(v))
    return out


def _line(v: ItemVerdict) -> str:
    if v.kind == "answer":
        verdict = "none" if v.score is None else f"{v.score:g}"
    else:
        verdict = "none" if v.claim is None else "claim" if v.claim else "answer"
    rule = v.decided_by or "-"
    after = f" after {','.join(v.rewrites)}" if v.rewrites else ""
    return f"{v.line} {v.kind} {verdict} {'sure' if v.certain else 'unsure'} {'nudged' if v.nudged else '-'} {rule}{after}"


def moved(old: list[str], new: list[str]) -> list[str]:
    """The items whose line differs, as `SET:LINE: old → new` (an item only on one side too)."""

    def keyed(lines: list[str]) -> dict[str, str]:
        out, heading = {}, ""
        for line in lines:
            if line.startswith("# "):
                heading = line[2:]
            elif line.strip():
                out[f"{heading}:{line.split(' ', 1)[0]}"] = line.split(" ", 1)[1]
        return out

    before, after = keyed(old), keyed(new)
    return [
        f"{key}: {before.get(key, '(none)')} → {after.get(key, '(none)')}"
        for key in [*before, *(k for k in after if k not in before)]
        if before.get(key) != after.get(key)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the golden file again from today's grader")
    args = parser.parse_args()
    lines = golden_lines(labelled_sets())
    if args.write:
        GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{GOLDEN.relative_to(ROOT)}: {sum(not x.startswith('# ') for x in lines)} verdicts")
        return
    changed = moved(GOLDEN.read_text(encoding="utf-8").splitlines(), lines)
    print("\n".join(changed) or "no verdict moved")


if __name__ == "__main__":
    main()
