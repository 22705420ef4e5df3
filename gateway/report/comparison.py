"""Paired A/B experiments (design §7): one log line per run, and the comparison.

A line says everything needed to audit a run without opening it: task, pair (the group the
A and B runs of one task × repeat form), repeat, variant, its position in the pair, versions,
the memory snapshot it started from, outcome, memory calls, old facts it still applied, time,
cost and where its recording is. Lines are rebuilt from the recordings every time (JSONL and
CSV side by side), so the comparison never needs an agent.

`compare()` pairs each question of a task × repeat across A and B: wins A (A right, B wrong),
wins B, both, neither — per question group (tag) and overall — with a bootstrap interval of
the difference in correct rates that resamples whole tasks (answers within a task are not
independent), and time and cost medians with their spread.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.base import AdapterConfigError
from adapters.lifecycle import fill
from gateway import __version__
from gateway.report.budget import percentile
from gateway.report.recordings import RecordedRun
from gateway.report.stale_facts import misapplied_old_facts
from persona.grading.exact import PASS_SCORE

BOOTSTRAP_SAMPLES = 2000
CSV_FIELDS = (
    "experiment", "task", "pair", "repeat", "variant", "position", "run_id", "status", "mean_score",
    "correct", "graded", "planned", "memory_calls", "misapplied_old_facts", "active_seconds", "cost_usd",
    "tool_version", "benchmark_hash", "agent", "memory_snapshot", "memory_after", "recording",
)  # fmt: skip


def folder_hash(folder: Path | None) -> str:
    """sha256 over a folder's relative paths and contents; "none" when there is no folder."""
    if folder is None or not folder.is_dir():
        return "none"
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(
            str(path.relative_to(folder)).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest()
        )
    return digest.hexdigest()


def _agent_folders(run: RecordedRun) -> tuple[Path | None, Path | None]:
    """(snapshot, state folder) of the run's agent, its placeholders filled as the lifecycle
    fills them; the header holds the settings with the profile applied. None where a
    placeholder can't be filled any more (an environment variable gone)."""
    process = run.header.agent.get("process")
    settings = process if isinstance(process, dict) else {}
    values = {"RUN_DIR": str(run.run_dir)}
    try:
        state = Path(fill(str(settings.get("state_dir", "${RUN_DIR}/agent-state")), values))
        snapshot = settings.get("snapshot")
        return (Path(fill(str(snapshot), {**values, "STATE_DIR": str(state)})) if snapshot else None), state
    except AdapterConfigError:
        return None, None


def run_line(run: RecordedRun) -> dict[str, Any]:
    s, meta, header = run.summary, run.meta, run.header
    agent_cost = s.costs.get("agent")
    priced = all(not c.unpriced for c in s.costs.values())
    snapshot, state = _agent_folders(run)
    correct = sum(ev.score >= PASS_SCORE for ev in s.evaluations.values())
    return {
        "experiment": meta.get("experiment", ""),
        "task": meta.get("task", ""),
        "pair": meta.get("pair", ""),
        "repeat": meta.get("repeat", 1),
        "variant": meta.get("variant", ""),
        "position": meta.get("position", 0),
        "run_id": s.run_id,
        "status": s.status,
        "mean_score": None if s.mean is None else round(s.mean, 3),
        "correct": correct,
        "graded": len(s.evaluations),
        "planned": len(s.planned),
        "memory_calls": len(s.memory_calls) if run.observed else None,
        "misapplied_old_facts": len(misapplied_old_facts(run)),
        "active_seconds": round(s.active_seconds, 2),
        "cost_usd": round(sum(c.dollars for c in s.costs.values()), 6) if priced else None,
        "tool_version": header.tool_version or __version__,
        "benchmark_hash": header.benchmark.get("hash", ""),
        "agent": json.dumps(header.agent, sort_keys=True),
        "memory_snapshot": folder_hash(snapshot) if snapshot else "none (empty state folder)",
        "memory_after": folder_hash(state),
        "recording": str(run.run_dir),
        "questions": {
            qid: {
                "score": ev.score,
                "correct": ev.score >= PASS_SCORE,
                "tags": list(next((q.tags for q in s.planned if q.id == qid), ())),
                "memory_calls": s.memory_calls_for(qid),
            }
            for qid, ev in s.evaluations.items()
        },
        "agent_calls": agent_cost.calls if agent_cost else 0,
    }


def write_lines(lines: list[dict[str, Any]], out: Path) -> tuple[Path, Path]:
    """`<out>.runs.jsonl` (everything, questions included) and `<out>.runs.csv` (flat)."""
    jsonl, table = out.with_suffix(".runs.jsonl"), out.with_suffix(".runs.csv")
    jsonl.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    with table.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(lines)
    return jsonl, table


def read_lines(jsonl: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass
class GroupTally:
    wins_a: int = 0
    wins_b: int = 0
    both: int = 0
    neither: int = 0

    @property
    def n(self) -> int:
        return self.wins_a + self.wins_b + self.both + self.neither

    def add(self, a: bool, b: bool) -> None:
        if a and b:
            self.both += 1
        elif a:
            self.wins_a += 1
        elif b:
            self.wins_b += 1
        else:
            self.neither += 1


@dataclass
class Comparison:
    experiment: str
    tasks: int
    pairs: int
    incomplete: list[str]
    groups: dict[str, GroupTally]
    intervals: dict[str, tuple[float, float, float] | None]  # group → (diff, lo, hi) of A − B
    time: dict[str, tuple[float, float, float]]  # variant → (median, p25, p75) seconds
    cost: dict[str, tuple[float, float, float] | None]


def _paired_items(
    lines: list[dict[str, Any]],
) -> tuple[list[tuple[str, str, bool, bool, tuple[str, ...]]], list[str]]:
    """(task, question, A correct, B correct, tags) for every question both runs of a pair graded."""
    pairs: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for line in lines:
        pairs[line["pair"]][line["variant"]] = line
    items = []
    incomplete = []
    for pair, sides in sorted(pairs.items()):
        if set(sides) != {"A", "B"} or any(s["status"] != "completed" for s in sides.values()):
            incomplete.append(pair)
            continue
        a, b = sides["A"]["questions"], sides["B"]["questions"]
        for qid in sorted(set(a) & set(b)):
            tags = tuple(a[qid]["tags"]) or ("untagged",)
            items.append((sides["A"]["task"], qid, bool(a[qid]["correct"]), bool(b[qid]["correct"]), tags))
    return items, incomplete


def _spread(values: list[float]) -> tuple[float, float, float]:
    return percentile(values, 50), percentile(values, 25), percentile(values, 75)


def compare(lines: list[dict[str, Any]], seed: int = 0) -> Comparison:
    lines = [line for line in lines if line.get("variant") in ("A", "B")]
    items, incomplete = _paired_items(lines)
    groups: dict[str, GroupTally] = defaultdict(GroupTally)
    by_task: dict[str, list[tuple[bool, bool, tuple[str, ...]]]] = defaultdict(list)
    for task, _qid, a, b, tags in items:
        groups["all"].add(a, b)
        for tag in tags:
            groups[tag].add(a, b)
        by_task[task].append((a, b, tags))
    tasks = sorted(by_task)
    rng = random.Random(seed)
    intervals: dict[str, tuple[float, float, float] | None] = {}
    for group in groups:

        def diff(sample: list[str], group: str = group) -> float | None:
            chosen = [(a, b) for t in sample for a, b, tags in by_task[t] if group == "all" or group in tags]
            return (sum(a for a, _ in chosen) - sum(b for _, b in chosen)) / len(chosen) if chosen else None

        point = diff(tasks)
        if point is None or len(tasks) < 2:
            intervals[group] = None  # one task: resampling tasks can't say anything
            continue
        draws = [
            d for _ in range(BOOTSTRAP_SAMPLES) if (d := diff(rng.choices(tasks, k=len(tasks)))) is not None
        ]
        intervals[group] = (point, percentile(draws, 2.5), percentile(draws, 97.5))
    time: dict[str, tuple[float, float, float]] = {}
    cost: dict[str, tuple[float, float, float] | None] = {}
    for variant in ("A", "B"):
        mine = [line for line in lines if line["variant"] == variant]
        if mine:
            time[variant] = _spread([float(line["active_seconds"]) for line in mine])
            costs = [line["cost_usd"] for line in mine]
            cost[variant] = None if any(c is None for c in costs) else _spread([float(c) for c in costs])
    return Comparison(
        str(lines[0].get("experiment", "")) if lines else "",
        len(tasks),
        len({line["pair"] for line in lines}),
        incomplete,
        dict(sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0]))),
        intervals,
        time,
        cost,
    )


def render_comparison(c: Comparison) -> str:
    lines = [
        f"### Paired A/B: {c.experiment or 'experiment'}",
        "",
        f"{c.pairs} pairs over {c.tasks} task(s); correct = score ≥ 5; the interval is a bootstrap "
        f"95 % interval of (A correct − B correct) resampling whole tasks ({BOOTSTRAP_SAMPLES} draws).",
        "",
        "| question group | questions | wins A | wins B | both | neither | A − B [95 % CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    for group, t in c.groups.items():
        interval = c.intervals.get(group)
        ci = (
            "n/a (needs ≥ 2 tasks)"
            if interval is None
            else f"{interval[0]:+.2f} [{interval[1]:+.2f}, {interval[2]:+.2f}]"
        )
        lines.append(f"| {group} | {t.n} | {t.wins_a} | {t.wins_b} | {t.both} | {t.neither} | {ci} |")
    lines.append("")
    for variant in ("A", "B"):
        if variant in c.time:
            med, lo, hi = c.time[variant]
            cost = c.cost.get(variant)
            money = "price unknown" if cost is None else f"${cost[0]:.4f} (IQR ${cost[1]:.4f}–${cost[2]:.4f})"
            lines.append(f"- {variant}: median time {med:.1f} s (IQR {lo:.1f}–{hi:.1f}); median cost {money}")
    if c.incomplete:
        lines.append(f"- left out (a side missing or not completed): {', '.join(c.incomplete)}")
    return "\n".join(lines) + "\n"
