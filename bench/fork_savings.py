"""What forks save on marathon-en × the reference agent — (a) its 5-rung scale ladder and (b) 3
rollouts per question — with forks of one teaching checkpoint and without: agent + persona LLM
calls, tokens and wall time, side by side in one run (issue 29's target: forks ≤ 0.35× of
re-teaching, in calls and tokens).

Measured, every run real (reference agent on the offline stand-in, the recorder counting its
model calls; scripted persona, which makes no LLM call):
- (a) ladder: 5 whole rung runs, against one teaching to `checkpoint_at: "distractors"` and 5
  rung forks, each playing only its distractor sessions and the exam;
- forks: one teaching run to `checkpoint_at: "exam"`, then `exam: isolated, rollouts: 3`
  (every question asked alone, 3 times, each from the checkpoint), and 3 sequential exam forks;
- without: 3 whole runs (teaching + the sequential exam) — 3 rollouts of the exam re-teaching.
Derived (not run: 195 teachings): an isolated exam without forks needs a teaching per question
and rollout — its cost is 3 × questions × the teaching run's, plus the same question turns.
Usage: `.venv/bin/python bench/fork_savings.py [BENCHMARK]` (default benchmarks/marathon-en).
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gateway.cli.scheduling import run_all  # noqa: E402
from gateway.report.recordings import load_run  # noqa: E402
from gateway.run.config import RunSpec  # noqa: E402
from gateway.run.fork_plan import expand_forks, teach_ladder_once  # noqa: E402
from persona.benchmark.loader import load_benchmark  # noqa: E402

ROLLOUTS = 3
AGENT = {"adapter": "reference"}


@dataclass
class Cost:
    calls: int = 0
    tokens: int = 0
    persona_calls: int = 0
    seconds: float = 0.0
    runs: int = 0

    def add(self, run_dir: Path) -> None:
        s = load_run(run_dir).summary
        self.calls += s.exchanges
        self.tokens += sum(s.tokens.values())
        self.persona_calls += s.costs["persona"].calls
        self.runs += 1

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.calls + other.calls,
            self.tokens + other.tokens,
            self.persona_calls + other.persona_calls,
            self.seconds + other.seconds,
            self.runs + other.runs,
        )


def measure(specs: list[RunSpec], recordings: Path) -> Cost:
    started = time.monotonic()
    results = run_all(specs, recordings, fresh=True, parallel=1)
    failed = [
        s.id
        for s, r in zip(specs, results, strict=True)
        if isinstance(r, BaseException) or r.reason != "completed"
    ]
    if failed:
        raise SystemExit(f"runs did not complete: {failed[:5]}")
    cost = Cost(seconds=time.monotonic() - started)
    for spec in specs:
        cost.add(recordings / spec.id)
    return cost


def main() -> None:
    bench = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "benchmarks" / "marathon-en").resolve()
    with tempfile.TemporaryDirectory() as tmp:
        rec = Path(tmp)
        base = RunSpec("m", bench, AGENT)
        planned = expand_forks(base, {"exam": ["isolated", "sequential"], "rollouts": ROLLOUTS})
        teacher, forks = planned[0], planned[1:]
        teaching = measure([teacher], rec)
        isolated = measure([f for f in forks if f.meta["exam"] == "isolated"], rec)
        sequential = measure([f for f in forks if f.meta["exam"] == "sequential"], rec)
        whole = measure([RunSpec(f"whole.r{k}", bench, AGENT) for k in range(1, ROLLOUTS + 1)], rec)
        scale = load_benchmark(bench).scale
        assert scale is not None, f"{bench} has no scale ladder"
        rungs = list(scale.ladder)
        ladder = {"checkpoint_at": "distractors", "rung": rungs}
        rung_specs = [
            RunSpec(f"lad.{r}", bench, AGENT, {"driver": "scripted"}, r, {"id": "lad", "rung": r})
            for r in rungs
        ]
        forked = teach_ladder_once([f for spec in rung_specs for f in expand_forks(spec, ladder)], ladder)
        ladder_forked = measure(forked, rec)
        ladder_plain = measure([RunSpec(f"plain.{r}", bench, AGENT, rung=r) for r in rungs], rec)
    questions = isolated.runs // ROLLOUTS
    # an isolated exam without forks: a teaching per (question, rollout), then the same question turns
    derived = Cost(
        teaching.calls * isolated.runs + isolated.calls,
        teaching.tokens * isolated.runs + isolated.tokens,
        0,
        teaching.seconds * isolated.runs + isolated.seconds,
        isolated.runs,
    )
    rows = [
        (
            f"(a) scale ladder, {len(rungs)} rungs: teaching once + {len(rungs)} rung forks",
            ladder_forked,
            ladder_plain,
        ),
        (f"(b) 3 sequential exams: teaching once + 3 forks ({ROLLOUTS} runs)", teaching + sequential, whole),
        (
            f"(b) isolated exam × 3 rollouts ({questions} questions; without forks: derived)",
            teaching + isolated,
            derived,
        ),
    ]
    print(
        f"benchmark {bench.name}, reference agent on the offline stand-in, scripted persona (no persona LLM calls)"
    )
    print(
        f"teaching run alone: {teaching.calls:,} agent calls, {teaching.tokens:,} tokens, {teaching.seconds:.1f} s; "
        f"3 whole runs: {whole.calls:,} calls, {whole.tokens:,} tokens, {whole.seconds:.1f} s"
    )
    print()
    print(
        "| what | with forks: calls / tokens / s | without: calls / tokens / s | calls × | tokens × | time × |"
    )
    print("|---|---|---|---|---|---|")
    for label, fork, plain in rows:
        print(
            f"| {label} | {fork.calls:,} / {fork.tokens:,} / {fork.seconds:.1f} | {plain.calls:,} / {plain.tokens:,} / "
            f"{plain.seconds:.1f} | {fork.calls / plain.calls:.2f}× | {fork.tokens / plain.tokens:.2f}× | "
            f"{fork.seconds / plain.seconds:.2f}× |"
        )
    print(
        f"| persona LLM calls (scripted) | {teaching.persona_calls + isolated.persona_calls} | 0 | — | — | — |"
    )


if __name__ == "__main__":
    main()
