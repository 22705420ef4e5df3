"""`marathon check` and `marathon new`: a benchmark folder (or a distractor pool) checked and
described before any run, and a new one written from the skeleton."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from gateway.cli.runs import print_errors
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.ladder import apply_rung
from persona.benchmark.loader import load_benchmark
from persona.benchmark.model import Benchmark
from persona.benchmark.skeleton import write_skeleton


def cmd_check(folder: Path) -> int:
    from persona.benchmark.pool import is_pool
    from persona.benchmark.screening import load_pool

    if is_pool(folder):
        try:
            pool = load_pool(folder)
        except BenchmarkErrors as exc:
            print_errors(exc, " in the distractor pool")
            return 1
        facts = sum(len(f) for f in pool.sessions.values())
        print(f"distractor pool {folder} ({pool.language}): {len(pool.sessions)} sessions, {facts} facts")
        print(
            f"screened against: {', '.join(pool.evidence) or 'nothing'} — no shared names, numbers or dates"
        )
        return 0
    try:
        bench = load_benchmark(folder)
    except BenchmarkErrors as exc:
        print_errors(exc, "; the benchmark can't run")
        return 1
    print(describe_benchmark(bench))
    if bench.scale is not None:
        spec = bench.scale
        try:  # every rung must be playable: the pool screened clean and large enough
            for rung in spec.rungs:
                apply_rung(bench, rung)
        except BenchmarkErrors as exc:
            print_errors(exc)
            return 1
        ladder = ", ".join(f"{k} = {v}" for k, v in spec.ladder.items())
        print(
            f"\nscale ladder: {ladder} distractor sessions before {spec.insert_before!r} "
            f"(pool {spec.distractors}, seed {spec.seed}); budgets {list(spec.budgets)}, target ρ = {spec.target:g}"
        )
    return 0


def cmd_new(folder: Path, language: str) -> int:
    try:
        written = write_skeleton(folder, language)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} files to {folder}: {', '.join(p.name for p in written)}")
    print(f"next: edit them (benchmarks/AUTHORING.md has the rules), then `marathon check {folder}`")
    return 0


def describe_benchmark(bench: Benchmark) -> str:
    lines = [
        f"{bench.name} ({bench.language}) — {bench.root}",
        f"language: {bench.language} ({bench.language_source})",
        f"hash {bench.content_hash[:16]}",
        "",
        "phases:",
    ]
    for phase in bench.phases:
        notes = [*phase.actions]
        if phase.require_all_facts:
            notes.append("require_all_facts=" + ",".join(phase.require_all_facts))
        counts = Counter(type(item).__name__ for item in phase.items)
        parts = [
            f"{counts[k]} {label}"
            for k, label in (("Utterance", "lines"), ("FactUpdate", "updates"), ("Question", "questions"))
            if counts[k]
        ]
        extra = f" [{'; '.join(notes)}]" if notes else ""
        lines.append(
            f"  {phase.index + 1:>3}. {phase.chapter} — {phase.title}{extra}: {', '.join(parts) or 'no items'}"
        )
    lines += ["", "facts:"]
    lines += [
        f"  {name:<16} {len(ff.facts):>4} facts in {len(ff.sections)} sections ({ff.path})"
        for name, ff in bench.facts.items()
    ]
    tags = Counter(tag for q in bench.questions for tag in (q.tags or ("untagged",)))
    lines += ["", f"questions: {len(bench.questions)}"]
    lines += [f"  {tag:<16} {n:>4}" for tag, n in sorted(tags.items())]
    prose = [p for p in bench.phases if p.prose_only]
    if prose:
        lines += [
            "",
            f"phases of prose only — the scripted persona can't play them (an LLM persona can): {len(prose)}",
        ]
        lines += [f"  {bench.root / p.chapter}:{p.prose[0][0]}: {p.title}" for p in prose]
        lines.append(
            "  to run them scripted, write what is said as `> ` lines and changes as `✎ file N.M new text`"
        )
    if bench.warnings:
        lines += ["", "warnings:", *(f"  {w}" for w in bench.warnings)]
    return "\n".join(lines)
