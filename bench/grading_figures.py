"""The exact grader and the never-told detector on the tuning (calibration) set and the frozen
held-out set, side by side — the figures of docs/grading.md. Figures only; nothing is asserted
here, and nothing but these summary figures may be read off the held-out set (no misses: the
held-out set is never tuned on). Usage: `.venv/bin/python bench/grading_figures.py`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.report.judge_check import SetResult, check_sets  # noqa: E402
from gateway.report.labelled_sets import CALIBRATION  # noqa: E402
from persona.grading.judge import ExactJudge  # noqa: E402

HELD_OUT = ROOT / "tests" / "persona" / "grading" / "heldout"
HELD_OUT_2 = ROOT / "tests" / "persona" / "grading" / "heldout2"  # written later, by other authors
HELD_OUT_3 = ROOT / "tests" / "persona" / "grading" / "heldout3"  # 2026-12-02, frozen first
HELD_OUT_4 = ROOT / "tests" / "persona" / "grading" / "heldout4"  # 2026-12-02, frozen before round 6
HELD_OUT_5 = ROOT / "tests" / "persona" / "grading" / "heldout5"  # 2026-12-03, never-told only, before round 7
HELD_OUT_6 = ROOT / "tests" / "persona" / "grading" / "heldout6"  # 2026-12-03, hard answers, before round 8
HELD_OUT_7 = ROOT / "tests" / "persona" / "grading" / "heldout7"  # 2026-12-03, hard answers, before round 9
HELD_OUT_8 = ROOT / "tests" / "persona" / "grading" / "heldout8"  # 2026-12-04, half hard, before the unsure reading
# held-out-9 to -19, -21, -22 and -24 were opened for tuning in rounds 11-20 (their READMEs say
# so): tuning sets now; held-out-20 and -23 were never opened
OPENED = [ROOT / "tests" / "persona" / "grading" / f"heldout{n}" for n in (*range(9, 20), 21, 22, 24)]
HELD_OUT_20 = ROOT / "tests" / "persona" / "grading" / "heldout20"  # 2026-12-05, frozen before round 17's read
HELD_OUT_23 = ROOT / "tests" / "persona" / "grading" / "heldout23"  # 2026-12-05, frozen before round 19's read
# 2026-12-07, issue 61: conflicts, weekday short forms, forgetting replies; frozen before its first read
HELD_OUT_25 = ROOT / "tests" / "persona" / "grading" / "heldout25"


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


async def figures(folder: Path, language: str) -> SetResult:
    return await check_sets(ExactJudge(), sorted(folder.glob(f"*-{language}.jsonl")))


async def main() -> None:
    rows = [
        ("answers", lambda r, lang: str(r.by_language[lang].items)),
        ("certain verdicts right", lambda r, lang: pct(r.by_language[lang].to_json()["accuracy_certain"])),
        ("coverage (certain / graded)", lambda r, lang: pct(r.by_language[lang].to_json()["coverage"])),
        ("false pass (certain)", lambda r, lang: str(r.by_language[lang].false_pass)),
        ("false fail (certain)", lambda r, lang: str(r.by_language[lang].false_fail)),
        ("never-told recall (claims nudged)", lambda r, lang: pct(r.never_told[lang].to_json()["recall"])),
        ("never-told false positives (sure)", lambda r, lang: pct(r.never_told[lang].to_json()["false_positive"])),
        ("never-told unsure: claims", lambda r, lang: pct(r.never_told[lang].to_json()["unsure_claims"])),
        ("never-told unsure: answers", lambda r, lang: pct(r.never_told[lang].to_json()["unsure_answers"])),
        ("best guess: recall", lambda r, lang: pct(r.never_told[lang].to_json()["best_guess"]["recall"])),
        ("best guess: false positives", lambda r, lang: pct(r.never_told[lang].to_json()["best_guess"]["false_positive"])),
        ("stalls recognised", lambda r, lang: pct(r.never_told[lang].to_json()["stalls_recognised"])),
    ]
    results = {
        (name, lang): await figures(folder, lang)
        for name, folder in (
            ("tuning", CALIBRATION),
            ("held-out", HELD_OUT),
            ("held-out-2", HELD_OUT_2),
            ("held-out-3", HELD_OUT_3),
            ("held-out-4", HELD_OUT_4),
            ("held-out-5", HELD_OUT_5),
            ("held-out-6", HELD_OUT_6),
            ("held-out-7", HELD_OUT_7),
            ("held-out-8", HELD_OUT_8),
            *((f"opened-{folder.name.removeprefix('heldout')}", folder) for folder in OPENED),
            ("held-out-20", HELD_OUT_20),
            ("held-out-23", HELD_OUT_23),
            ("held-out-25", HELD_OUT_25),
        )
        for lang in ("en", "ru")
    }
    print("| exact grader | " + " | ".join(f"{n} {lang}" for n, lang in results) + " |")
    print("|---|" + "---|" * len(results))
    for label, get in rows:
        print(f"| {label} | " + " | ".join(get(r, lang) for (_, lang), r in results.items()) + " |")


if __name__ == "__main__":
    asyncio.run(main())
