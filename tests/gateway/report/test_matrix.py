"""A whole matrix through the command line: rungs, repeats, a paired experiment, in parallel;
the budget table, the onset line, the A/B table and the HTML report — and the same again from
the recordings alone. Ctrl-C stops every run cleanly and the same command resumes them all."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path

from gateway.log.events import Evaluation, RunEnded
from gateway.log.runlog import EVENTS_FILE, read_log
from tests.conftest import DEMO, REPO, TINY, BenchFactory
from tests.marathon_cli import count_records, marathon, spawn_marathon

SCALED_TINY = TINY["benchmark.json"].replace(
    "}\n",
    ' scale: { ladder: {s0: 0, s1: 3}, insert_before: "ch2.md", distractors: "../distractors", seed: 1,'
    " budgets: [0, 1, 2], target: 0.9 },\n}\n",
)


def write_config(tmp_path: Path, bench: Path) -> Path:
    config = tmp_path / "config.jsonc"
    config.write_text(
        f"""{{
  parallel: 3,
  runs: [
    {{ id: "lad", benchmark: "{bench}", agent: {{ adapter: "reference" }}, rung: ["s0", "s1"], repeats: 2 }},
    {{ id: "blind", benchmark: "{bench}", agent: {{ adapter: "reference", record_llm: false }}, rung: "s1" }},
  ],
  experiment: {{
    name: "mem", seed: 5, repeats: 1,
    variants: {{ A: {{ adapter: "reference", memory: false }}, B: {{ adapter: "reference" }} }},
    tasks: [ {{ id: "t0", benchmark: "{bench}", rung: "s0" }}, {{ id: "t1", benchmark: "{bench}", rung: "s1" }} ],
  }},
}}
"""
    )
    return config


def test_a_matrix_runs_in_parallel_and_reports_from_recordings(
    make_benchmark: BenchFactory, tmp_path: Path, pool_beside: str
) -> None:
    bench = make_benchmark(benchmark__json=SCALED_TINY)
    config = write_config(tmp_path, bench)
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout
    out = result.stdout
    recordings = tmp_path / "recordings"
    assert len(list(recordings.glob(f"*/{EVENTS_FILE}"))) == 9
    # the budget table per rung; B = 0 fails every question the agent searched memory for
    assert "### Scale ladder: lad" in out and "| s1 | 3 | 2 | 3 | 0 |" in out  # 3 questions, none unreached
    assert "| 0 | 0% [0%, 0%] | 100% | 0% |" in out  # every answer needed one retrieval call
    assert "Collapse onset at B = 0 (Pass@B < ρ = 0.9): s0" in out
    assert "Evidence utterances: identical on every rung" in out
    # an agent whose LLM traffic was not recorded: no zeros, a plain statement
    assert "### Scale ladder: blind" in out and "budget not observable" in out
    # the paired A/B table per question group: A without the memory add-on, B with it; the two
    # tasks are rungs of one benchmark, one cluster: no interval, a per-task table instead
    assert "### Paired A/B: mem" in out and "2 pairs over 1 cluster(s)" in out
    # q1, q2 right only with memory (B); the abstention q3 right only without (with memory the
    # stand-in answers it from a note about the cat)
    assert "| all | 6 | 2 | 4 | 0 | 0 | +0.33 (too few tasks for an interval: 1 < 5) |" in out
    assert "| abstain | 2 | 2 | 0 | 0 | 0 |" in out and "| t1 | bench | all | 1 | +0.33 | one repeat |" in out
    lines = [json.loads(line) for line in (recordings / "mem.runs.jsonl").read_text().splitlines()]
    assert sorted((line["task"], line["variant"]) for line in lines) == [
        ("t0", "A"), ("t0", "B"), ("t1", "A"), ("t1", "B"),
    ]  # fmt: skip
    a = next(line for line in lines if line["variant"] == "B" and line["task"] == "t1")
    assert a["memory_calls"] > 0 and a["status"] == "completed" and a["recording"].endswith("mem.t1.r1.B")
    # the reference agent starts on an empty state folder (the hash of nothing), logged at its start
    assert a["memory_snapshot"] == hashlib.sha256().hexdigest() and len(a["memory_after"]) == 64
    assert a["memory_after"] != a["memory_snapshot"]
    assert {line["position"] for line in lines} == {1, 2}
    # verify, given the folder as a relative path (the lines name runs by full path): all held
    verified = marathon("verify", "recordings", cwd=tmp_path)
    assert verified.returncode == 0 and "every invariant held" in verified.stderr, verified.stderr
    plan = json.loads((recordings / "mem.plan.json").read_text())
    assert plan["seed"] == 5 and len(plan["pairs"]) == 2
    assert set(plan["initial_state"].values()) == {"empty (the run's own state folder, emptied at a fresh start)"}
    for pair in plan["pairs"]:  # the drawn order was kept: the second run started after the first ended
        first, second = (read_log(recordings / f"{pair['pair']}.{v}" / EVENTS_FILE) for v in pair["order"])
        assert first.header.meta["position"] == 1 and second.header.meta["position"] == 2
        assert first.events[-1].ts <= next(e.ts for e in second.events if e.type == "run_start")
    assert (
        (recordings / "mem.runs.csv")
        .read_text()
        .startswith("experiment,task,cluster,group,split,pair,repeat,variant,variant_name")
    )
    html = (recordings / "report.html").read_text()
    assert "Pass@B by rung" in html and "Paired A/B by question group" in html
    assert "<script src=" not in html  # self-contained: plotly.js is inlined
    # the same tables again, from the recordings alone (no agent starts)
    matrix = (recordings / "matrix.md").read_text()
    for path in (recordings / "matrix.md", recordings / "report.html", recordings / "mem.runs.jsonl"):
        path.unlink()
    again = marathon("report", str(recordings), cwd=tmp_path, env={"MARATHON_PROGRESS_AFTER": "0"})
    assert again.returncode == 0, again.stderr
    assert (recordings / "matrix.md").read_text() == matrix
    steps = [line.split(":")[0] for line in again.stderr.splitlines() if ": done, " in line]
    assert steps == ["reading runs", "bootstrapping ladders", "tabulating experiment runs", "charting runs"], again.stderr
    assert (recordings / "report.html").is_file() and (recordings / "mem.runs.jsonl").is_file()
    compared = marathon("compare", str(recordings / "mem.runs.jsonl"), cwd=tmp_path)
    assert compared.returncode == 0 and "| all | 6 | 2 | 4 | 0 | 0 |" in compared.stdout


def test_ctrl_c_stops_every_parallel_run_and_one_command_resumes_them_all(tmp_path: Path) -> None:
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{parallel: 2, runs: [{{id: "d", benchmark: "{DEMO}", agent: {{adapter: "reference", '
        f'context_tokens: 400}}, rung: ["s0", "s1"], repeats: 2}}]}}'
    )
    proc = spawn_marathon("run", str(config), cwd=tmp_path)
    first = tmp_path / "recordings" / "d.s0.r1" / EVENTS_FILE
    second = tmp_path / "recordings" / "d.s0.r2" / EVENTS_FILE
    deadline = time.monotonic() + 60
    while (count_records(first) < 60 or count_records(second) < 60) and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    for path in (first, second):  # both runs in flight ended cleanly, as interrupted
        log = read_log(path)
        assert (
            not log.torn and isinstance(log.events[-1], RunEnded) and log.events[-1].reason == "interrupted"
        )
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for run in ("d.s0.r1", "d.s0.r2", "d.s1.r1", "d.s1.r2"):
        log = read_log(tmp_path / "recordings" / run / EVENTS_FILE)
        graded = Counter(e.question_id for e in log.events if isinstance(e, Evaluation))
        assert len(graded) == 15 and set(graded.values()) == {1}  # each question graded once
        assert log.events[-1].type == "end" and getattr(log.events[-1], "reason", "") == "completed"


async def test_report_skips_an_unreadable_run_and_says_why(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    from gateway.run.config import RunSpec
    from gateway.run.runner import run_spec

    recordings = tmp_path / "recordings"
    await run_spec(RunSpec("good", make_benchmark(), {"adapter": "reference"}), recordings)
    (recordings / "bad").mkdir()
    (recordings / "bad" / EVENTS_FILE).write_bytes(b"\x00not a log")
    result = marathon("report", str(recordings), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "skipped bad: unreadable log" in result.stderr and "Traceback" not in result.stderr
    assert "Skipped bad: unreadable log" in (recordings / "report.html").read_text()
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = marathon("report", str(empty), cwd=tmp_path)
    assert nothing.returncode == 1 and "no run logs" in nothing.stderr


def test_only_picks_a_matrix_entry_or_an_experiment_by_name(
    make_benchmark: BenchFactory, tmp_path: Path, pool_beside: str
) -> None:
    config = write_config(tmp_path, make_benchmark(benchmark__json=SCALED_TINY))
    unknown = marathon("run", str(config), "--only", "nosuch", cwd=tmp_path)
    assert unknown.returncode == 2 and "no run named nosuch" in unknown.stderr
    picked = marathon("run", str(config), "--only", "lad", "--only", "blind", cwd=tmp_path)
    assert picked.returncode == 0, picked.stderr
    ran = sorted(p.parent.name for p in (tmp_path / "recordings").glob(f"*/{EVENTS_FILE}"))
    assert ran == ["blind", "lad.s0.r1", "lad.s0.r2", "lad.s1.r1", "lad.s1.r2"]


def test_shared_resources_name_what_two_runs_cannot_both_hold() -> None:
    from gateway.run.agents import shared_resources

    assert shared_resources({"adapter": "reference"}) == set()
    assert shared_resources({"profile": "hermes-http"}) == {"agent 127.0.0.1:8642", "port 8643"}
    assert shared_resources({"adapter": "http", "url": "https://example.org/chat"}) == {
        "agent example.org:443"
    }
    held = shared_resources(
        {
            "adapter": "http",
            "url": "http://127.0.0.1:9000/x",
            "process": {"command": ["a"], "state_dir": "/srv/a"},
        }
    )
    assert "state folder /srv/a" in held


async def test_runs_against_the_same_agent_take_turns_even_in_parallel(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    from aiohttp import web

    from adapters.http_server import serve

    active = peak = 0

    async def chat(request: web.Request) -> web.Response:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.02)
        active -= 1
        return web.json_response({"reply": "ok"})

    app = web.Application()
    app.router.add_post("/chat", chat)
    served = await serve(app)
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{parallel: 3, runs: [{{id: "x", benchmark: "{make_benchmark()}", '
        f'agent: {{adapter: "http", url: "{served.url}/chat"}}, repeats: 3}}]}}'
    )
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "gateway.cli", "run", str(config), cwd=tmp_path,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        await served.stop()
    assert proc.returncode == 0, err.decode()
    assert peak == 1  # one agent, one conversation at a time: its memory is not shared mid-run
    spans = sorted(
        (log.events[0].ts, log.events[-1].ts)
        for log in (read_log(p) for p in (tmp_path / "recordings").glob(f"*/{EVENTS_FILE}"))
    )
    assert len(spans) == 3 and all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
