"""Scores only (never the autopsy): for each run, which questions were wrong (score < 10 or
nudged), against truth.json5's targets. Reads `marathon state RUN --json`."""
import json
import subprocess
import sys
from pathlib import Path

import json5

HERE = Path(__file__).resolve().parent
MAIN = Path("/work/main")
REC = Path("/tmp/heldout-recordings")
truth = json5.loads((HERE / "truth.json5").read_text())


def grades(run: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "gateway.cli", "state", str(REC / run), "--json"],
                         cwd=MAIN, capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    return d["status"], d["grades"]


bad = 0
status, g = grades("heldout-clean")
wrong = [q for q, v in g.items() if v["score"] < 10 or v["attempts"] > 1]
print(f"clean            {status:10} graded {len(g)}/19 wrong {wrong}")
bad += bool(wrong) or len(g) != 19
total = 0
for name, m in truth["mechanisms"].items():
    status, g = grades(m["run"])
    targets = set(m["targets"])
    wrong = {q for q, v in g.items() if v["score"] < 10 or v["attempts"] > 1}
    hit = sorted(targets & wrong, key=lambda q: int(q[1:]))
    missed = sorted(targets - wrong, key=lambda q: int(q[1:]))
    extra = sorted(wrong - targets, key=lambda q: int(q[1:]))
    total += len(hit)
    print(f"{name:16} {status:10} graded {len(g)}/19 targeted wrong {len(hit)}/{len(targets)}"
          + (f" MISSED {missed}" if missed else "") + (f" UNTARGETED WRONG {extra}" if extra else ""))
    bad += bool(missed or extra) or len(g) != 19
print(f"targeted wrong answers: {total}")
sys.exit(1 if bad else 0)
