"""`marathon check` on big benchmarks: the give-away check before (every pair of questions,
key terms recomputed per pair) and now (an index by stem), side by side in one run, and the
whole load. Figures only. Usage: `.venv/bin/python bench/big_benchmarks.py [OLD_LINT.py]` —
OLD_LINT is a copy of persona/benchmark/lint.py from before (git show REV:persona/benchmark/lint.py).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from persona.benchmark import lint  # noqa: E402
from persona.benchmark.errors import BenchmarkErrors  # noqa: E402
from persona.benchmark.loader import load_benchmark  # noqa: E402

WORDS = "river garden window violin harbour candle meadow lantern pepper saffron".split()


def write_benchmark(folder: Path, questions: int, seed: int = 7) -> Path:
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    (folder / "benchmark.json").write_text('{ name: "big", language: "en", chapters: ["ch1.md", "ch2.md"] }')
    (folder / "profile.md").write_text("# Me\n\n## 1. Basics\n1.1 My name is Ada\n")
    (folder / "ch1.md").write_text('# One\n\n## Intro\n```js\nvars.require_all_facts = "profile";\n```\n> Hello!\n')
    lines = ["# Two", "", "## Exam", "```js", "await bench.newSession();", "```"]

    def word() -> str:  # a made-up word: answers and questions as varied as a real benchmark's
        return "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(3))

    for n in range(questions):
        topic, place = rng.sample(WORDS, 2)
        lines.append(f"❓ b{n} What about the {topic} near the {word()}? Correct answer: {word().title()} {place}")
    (folder / "ch2.md").write_text("\n".join(lines) + "\n")
    return folder


def main() -> None:
    old = None
    if len(sys.argv) > 1:
        spec = importlib.util.spec_from_file_location("lint_old", sys.argv[1])
        assert spec and spec.loader
        old = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(old)
    print("| questions | give-away check before | now | whole `check` load now | loaded again, unchanged | warnings equal |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1_000, 2_000, 4_000, 20_000):
            folder = write_benchmark(Path(tmp) / f"b{n}", n)
            started = time.perf_counter()
            bench = load_benchmark(folder)
            load = time.perf_counter() - started
            started = time.perf_counter()
            again = load_benchmark(folder)  # as a run's preflight, the run and its report ask
            reload = time.perf_counter() - started
            assert again is bench
            questions = list(bench.questions)
            started = time.perf_counter()
            now = lint.giveaways(questions, folder)
            new_s = time.perf_counter() - started
            before = "—"
            same = "—"
            if old is not None and n <= 2_000:
                started = time.perf_counter()
                was = old.giveaways(questions, folder)
                before = f"{time.perf_counter() - started:.1f} s"
                same = "yes" if was == now else "NO"
            print(f"| {n:,} | {before} | {new_s:.2f} s | {load:.1f} s | {reload * 1000:.0f} ms | {same} |")
        huge(Path(tmp) / "huge")


def huge(folder: Path) -> None:
    """40 chapters of 7.9 MB (checked in 82 s with 5 GB before the total cap): refused now."""
    folder.mkdir()
    names = [f"ch{n}.md" for n in range(40)]
    (folder / "benchmark.json").write_text(json.dumps({"name": "huge", "language": "en", "chapters": names}))
    body = "# Chapter\n\n## Talk\n" + "> Some talk about the weather and the river.\n" * 180_000
    for name in names:
        (folder / name).write_text(body)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        load_benchmark(folder)
        said = "loaded (no cap)"
    except BenchmarkErrors as exc:
        said = str(exc.errors[0]).split(": ", 1)[1][:90]
    took = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / (1 << 20)
    tracemalloc.stop()
    print(f"\n40 chapters of {len(body.encode()) / 1e6:.1f} MB: {took:.2f} s, peak {peak:.0f} MiB traced — {said}")


if __name__ == "__main__":
    main()
