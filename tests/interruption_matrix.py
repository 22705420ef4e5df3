"""Run kinds × interruptions: each run kind is started with `marathon run`, interrupted at one
moment, run again to its end, and held to the invariants (gateway/cli/invariants.py) and to
the uninterrupted run's grades. tests/test_invariants.py runs a sample in CI;
`bench/interruptions.py` runs all of it and prints the table.

The agent is a real process of the run's (tests/process_agent.py: it answers from notes kept in
its state folder, so a fork restored wrong answers "never told" and the grades show it), started
from a snapshot holding 16 MB of random bytes besides — so archiving a checkpoint and restoring
one take long enough (~0.5 s) to be interrupted in the middle. Everything runs on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.cli.invariants import check_run
from gateway.log.events import CheckpointSaved, Evaluation, RunStart, Said
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError, read_log
from tests.conftest import DEMO, REPO, TINY
from tests.process_agent import http_process_agent

KINDS = (
    "plain",
    "from_fork",
    "sequential_forks",
    "isolated_rollouts",
    "ladder_once",
    "prepared_frozen",
    "accumulating",
    "ray",  # sequential exam forks, each a task on a private local Ray (`executor: {ray: {address: "local"}}`)
)
INTERRUPTIONS = ("none", "sigint_first_second", "kill_teaching", "kill_checkpoint", "kill_restore", "kill_exam")
BLOB_BYTES = 16 << 20
TIMEOUT = 240.0


@dataclass
class Cell:
    kind: str
    interruption: str
    held: bool | None  # None: not tested — the kind has no such moment, or it did not come
    detail: str
    seconds: float = 0.0

    def mark(self) -> str:
        if self.held is None:
            return "n/a" if "takes no checkpoint" in self.detail else "not reached"
        return "held" if self.held else "NOT HELD"


def prepare_world(root: Path) -> dict[str, Any]:
    """The tiny benchmark, the agent script and its snapshot under `root`; returns the agent settings."""
    bench = root / "tiny"
    bench.mkdir(parents=True, exist_ok=True)
    for name, text in TINY.items():
        (bench / name).write_text(text, encoding="utf-8")
    snapshot = root / "snapshot"
    if not (snapshot / "blob.bin").exists():
        snapshot.mkdir(exist_ok=True)
        (snapshot / "blob.bin").write_bytes(os.urandom(BLOB_BYTES))
    agent = http_process_agent(root, NOTES="${STATE_DIR}/notes.txt")
    agent["process"]["snapshot"] = str(snapshot)  # type: ignore[index]
    return agent


def config_for(kind: str, root: Path, agent: dict[str, Any]) -> dict[str, Any]:
    tiny = str(root / "tiny")
    if kind == "plain":
        return {"runs": [{"id": "p", "benchmark": tiny, "agent": agent}]}
    if kind == "from_fork":
        return {
            "runs": [
                {"id": "t", "benchmark": tiny, "agent": agent, "checkpoint_at": "exam"},
                {"id": "f", "benchmark": tiny, "agent": agent, "from": {"run": "t", "checkpoint": "exam"}},
            ]
        }
    if kind in ("sequential_forks", "ray"):
        forks = {"runs": [{"id": "m", "benchmark": tiny, "agent": agent, "exam": "sequential", "rollouts": 2}]}
        return forks | ({"executor": {"ray": {"address": "local"}}} if kind == "ray" else {})
    if kind == "isolated_rollouts":
        return {"runs": [{"id": "m", "benchmark": tiny, "agent": agent, "exam": "isolated", "rollouts": 2}]}
    if kind == "ladder_once":
        return {
            "runs": [
                {"id": "lad", "benchmark": str(DEMO), "agent": agent, "rung": ["s0", "s2"], "checkpoint_at": "distractors"}
            ]
        }
    memory = {"prepared_frozen": "frozen", "accumulating": "accumulating"}[kind]
    tasks = REPO / "examples" / "prepared"
    return {
        "experiment": {
            "name": "x",
            "seed": 3,
            "variants": {"a": agent, "b": {**agent, "timeout": 31}},
            "baseline": "a",
            "memory": memory,
            "prepare": {"benchmark": tiny, "checkpoint_at": "exam"},
            "tasks": [
                {"id": "people", "benchmark": str(tasks / "people")},
                {"id": "places", "benchmark": str(tasks / "places")},
            ],
        }
    }


def has_checkpoint(kind: str) -> bool:
    return kind != "plain"


def grades(recordings: Path) -> dict[str, dict[str, float]]:
    """Run folder → question → score, over every log under `recordings`."""
    out: dict[str, dict[str, float]] = {}
    for log_path in sorted(recordings.rglob(EVENTS_FILE)):
        events = read_log(log_path).events
        out[str(log_path.parent.relative_to(recordings))] = {
            e.question_id: e.score for e in events if isinstance(e, Evaluation)
        }
    return out


class _Logs:
    """The run logs under a folder, re-read only when they grew (the trigger polls them)."""

    def __init__(self, recordings: Path) -> None:
        self.recordings = recordings
        self.seen: dict[Path, tuple[int, list[Any], dict[str, Any]]] = {}

    def each(self) -> list[tuple[Path, list[Any], dict[str, Any]]]:
        out = []
        for path in self.recordings.rglob(EVENTS_FILE):
            try:
                size = path.stat().st_size
                cached = self.seen.get(path)
                if cached is None or cached[0] != size:
                    log = read_log(path)
                    cached = (size, log.events, log.header.parent)
                    self.seen[path] = cached
            except (OSError, RunLogFormatError):
                continue
            out.append((path, cached[1], cached[2]))
        return out


def _trigger(interruption: str, recordings: Path, started: float) -> Callable[[], bool]:
    logs = _Logs(recordings)

    def due() -> bool:
        if interruption == "sigint_first_second":
            return time.monotonic() - started >= 0.6
        if interruption == "kill_checkpoint":
            return any(recordings.rglob("checkpoints/.*.partial"))
        found = logs.each()
        if interruption == "kill_teaching":
            return any(
                sum(1 for e in events if isinstance(e, Said) and e.purpose == "fact") >= 2
                and not any(isinstance(e, CheckpointSaved) for e in events)
                for _, events, _ in found
            )
        if interruption == "kill_restore":  # a fork's log, no start yet, its state folder being written
            return any(
                parent and not any(isinstance(e, RunStart) for e in events) and _restoring(path.parent)
                for path, events, parent in found
            )
        if interruption == "kill_exam":
            return any(any(isinstance(e, Evaluation) for e in events) for _, events, _ in found)
        return False

    return due


def _restoring(run_dir: Path) -> bool:
    """The run's state folder exists: here, or on a Ray node of this machine (its temp dir)."""
    if (run_dir / "agent-state").exists():
        return True
    return any((Path(tempfile.gettempdir()) / "marathonbench-runs").glob(f"*/*/{run_dir.name}/agent-state"))


def _marathon(cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "run", "config.json"],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def run_cell(root: Path, kind: str, interruption: str, expected: dict[str, dict[str, float]] | None) -> Cell:
    """One cell: run, interrupt, run again to the end, check. `expected`: the uninterrupted
    run's grades (None: this is that run)."""
    started = time.monotonic()
    agent = prepare_world(root)
    cell_dir = root / f"{kind}.{interruption}"
    cell_dir.mkdir(parents=True, exist_ok=True)
    (cell_dir / "config.json").write_text(json.dumps(config_for(kind, root, agent)))
    recordings = cell_dir / "recordings"
    detail = ""
    if interruption != "none":
        if interruption in ("kill_checkpoint", "kill_restore") and not has_checkpoint(kind):
            return Cell(kind, interruption, None, "this kind takes no checkpoint")
        proc = _marathon(cell_dir)
        due = _trigger(interruption, recordings, time.monotonic())
        hit = False
        while proc.poll() is None and time.monotonic() - started < TIMEOUT:
            if due():
                os.killpg(proc.pid, signal.SIGINT if interruption == "sigint_first_second" else signal.SIGKILL)
                hit = True
                break
            time.sleep(0.003)
        proc.communicate(timeout=60)
        if not hit:  # nothing was interrupted: not counted as a cell that held
            return Cell(kind, interruption, None, "the moment did not come before the run ended", time.monotonic() - started)
    for attempt in range(3):  # a refused start (an error ending) is run again, as a user would
        proc = _marathon(cell_dir)
        _, err = proc.communicate(timeout=TIMEOUT)
        if proc.returncode == 0:
            break
        detail += f"run {attempt + 2} exited {proc.returncode}: {err.strip().splitlines()[-1:]}; "
    problems = [v.line() for d in sorted(p.parent for p in recordings.rglob(EVENTS_FILE)) for v in check_run(d)]
    got = grades(recordings)
    if expected is not None and got != expected:
        differ = sorted(k for k in {*got, *expected} if got.get(k) != expected.get(k))
        problems.append(f"grades differ from the uninterrupted run's in {', '.join(differ[:5])}")
    if proc.returncode != 0:
        problems.append("the run did not complete after three tries")
    held = not problems
    return Cell(kind, interruption, held, detail + "; ".join(problems[:3]), time.monotonic() - started)


def run_kind(root: Path, kind: str, interruptions: tuple[str, ...] = INTERRUPTIONS) -> list[Cell]:
    """The uninterrupted cell first (its grades are the reference), then each interruption."""
    clean = run_cell(root, kind, "none", None)
    expected = grades(root / f"{kind}.none" / "recordings")
    cells = [clean] if "none" in interruptions else []
    for interruption in interruptions:
        if interruption != "none":
            cells.append(run_cell(root, kind, interruption, expected))
    return cells
