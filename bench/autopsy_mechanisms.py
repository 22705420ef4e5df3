"""The memory autopsy on failure mechanisms it was not built against (issue 60): the held-out set
in bench/autopsy_heldout_mechanisms/ — an agent of one's own with 12 silent faults, a benchmark
with shared first names, updates and deletions, and truth decided from each mechanism's design —
written by a helper who never read the autopsy's code, frozen (its manifest.sha256) before any
tuning. Never tune on it: it is the measurement.

    .venv/bin/python bench/autopsy_mechanisms.py

Runs the clean control and every mechanism (the frozen configs, their paths pointed at this
checkout and a temporary recordings folder), then compares each targeted question's autopsy
stage with its truth, and each untargeted one with "right". Prints the confusion matrix, the
share of decided stages that are right and the coverage (decided / all targeted wrong answers),
as bench/autopsy_confusion.py does for the tuned mechanisms.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import json5

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.report.autopsy import Stage, autopsy  # noqa: E402
from gateway.report.recordings import load_run  # noqa: E402

SET = ROOT / "bench" / "autopsy_heldout_mechanisms"
WRITTEN_AT = "/work/heldout-autopsy-60"  # where the helper wrote the set: its configs name it


def configs(into: Path, recordings: Path) -> list[Path]:
    """The frozen configs, pointed at this checkout, this Python and `recordings`."""
    into.mkdir(parents=True)
    out = []
    for frozen in sorted((SET / "configs").glob("*.jsonc")):
        text = frozen.read_text(encoding="utf-8")
        text = text.replace(WRITTEN_AT, str(SET)).replace("/work/main/.venv/bin/python", sys.executable)
        text = text.replace('"/tmp/heldout-recordings"', f'"{recordings}"')
        text = text.replace('"../benchmark"', f'"{SET / "benchmark"}"')
        (into / frozen.name).write_text(text, encoding="utf-8")
        out.append(into / frozen.name)
    return out


# the frozen truth predates the stage "write refused" (issue 60): it is "never stored" with the
# tool's refusal seen, so it counts right against a truth of "never stored" (its own column shows it)
REFINES = {"write refused": "never stored"}


def main() -> None:
    truth = json5.loads((SET / "truth.json5").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        recordings = Path(tmp) / "recordings"
        for config in configs(Path(tmp) / "configs", recordings):
            done = subprocess.run(
                [sys.executable, "-m", "gateway.cli", "run", str(config), "--fresh"],
                cwd=ROOT, capture_output=True, text=True, env=None,
            )
            print(f"{config.stem}: exit {done.returncode}", file=sys.stderr)
        matrix: Counter[tuple[str, str]] = Counter()
        untargeted: Counter[str] = Counter()
        for mechanism in [*truth["mechanisms"].values(), {"run": truth["control"]["run"], "targets": {}}]:
            found = {q.question_id: q for q in autopsy(load_run(recordings / mechanism["run"])).questions}
            for qid, q in found.items():
                shown = str(q.stage) if q.stage is not None else str(q.no_stage)
                if qid in mechanism["targets"]:
                    matrix[(mechanism["targets"][qid]["stage"], shown)] += 1
                else:
                    untargeted[shown] += 1
            for qid in mechanism["targets"]:
                if qid not in found:
                    matrix[(mechanism["targets"][qid]["stage"], "not graded")] += 1
    columns = sorted({c for _, c in matrix})
    print("| truth \\ autopsy | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for row in sorted({t for t, _ in matrix}):
        print(f"| {row} | " + " | ".join(str(matrix[(row, c)] or "") for c in columns) + " |")
    stages = {str(s) for s in Stage if s is not Stage.UNKNOWN}
    decided = sum(n for (_, c), n in matrix.items() if c in stages)
    right = sum(n for (t, c), n in matrix.items() if c in stages and (c == t or REFINES.get(c) == t))
    total = sum(matrix.values())
    print(
        f"decided stages right: {right / decided:.1%} ({right}/{decided}); coverage {decided / total:.1%} "
        f"({decided}/{total})" if decided else f"nothing decided of {total}"
    )
    print("untargeted answers: " + ", ".join(f"{k} {v}" for k, v in sorted(untargeted.items())))


if __name__ == "__main__":
    main()
