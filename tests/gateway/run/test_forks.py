"""Checkpoints and forks (docs/experiments.md): one teaching, many exams from its archived state."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from adapters.lifecycle import folder_hash
from gateway.log.events import Asked, CheckpointSaved, Evaluation, PhaseEntered, RunStart, Said
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.loader import load_benchmark
from tests.conftest import REPO, BenchFactory
from tests.marathon_cli import marathon

DEMO = REPO / "benchmarks" / "demo-en"


def _events(run_dir: Path) -> list[object]:
    return list(read_log(run_dir / EVENTS_FILE).events)


def _config(tmp_path: Path, run: str) -> Path:
    config = tmp_path / "config.jsonc"
    config.write_text(f'{{ runs: [ {{ id: "m", benchmark: "{DEMO}", {run} }} ] }}')
    return config


def test_an_isolated_exam_with_rollouts_forks_every_question_from_one_teaching(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    bench = make_benchmark()
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{ runs: [ {{ id: "m", benchmark: "{bench}", agent: {{ adapter: "reference" }}, '
        'exam: ["sequential", "isolated"], rollouts: 2 } ] }'
    )
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rec = tmp_path / "recordings"
    teacher = _events(rec / "m")
    (saved,) = [e for e in teacher if isinstance(e, CheckpointSaved)]
    assert saved.name == "exam" and not [e for e in teacher if isinstance(e, Asked)]  # it only taught
    archive = rec / "m" / saved.archive
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == saved.archive_sha256
    questions = load_benchmark(bench).questions
    forks = sorted(p.name for p in rec.iterdir() if p.name.startswith("m."))
    assert len(forks) == 2 + 2 * len(questions)  # 2 sequential exams, every question twice alone
    for name in forks:
        header = read_log(rec / name / EVENTS_FILE).header
        assert header.parent["run"] == "m" and header.parent["state_hash"] == saved.state_hash
        events = _events(rec / name)
        (start,) = [e for e in events if isinstance(e, RunStart)]
        assert start.state == saved.state_hash  # restored, not taught again
        assert not [e for e in events if isinstance(e, PhaseEntered) and e.index < 2]  # no teaching phase
        assert not [e for e in events if isinstance(e, Said) and e.purpose == "fact"]
        graded = [e for e in events if isinstance(e, Evaluation)]
        assert len(graded) == (1 if ".iso." in name else len(questions))
    report = (rec / "m.iso.q1.r1" / "report.md").read_text()
    assert "forked from m at checkpoint 'exam'" in report and "required facts told: 5/5" in report
    matrix = (rec / "matrix.md").read_text()
    assert "Exams forked from m's checkpoint" in matrix and "pass^k" in matrix
    assert "Exam contamination (sequential − isolated)" in matrix
    page = (rec / "report.html").read_text()
    payload = re.search(r"const REPORT = (\{.*\});", page)
    assert payload is not None
    report = json.loads(payload[1])
    (section,) = [s for s in report["sections"] if s["title"] == "Exams forked from m's checkpoint"]
    assert "pass^k" in section["markdown"] and section["charts"][0]["data"]  # pass rates per question
    summed, _ = report["uncharted"]
    assert len(summed["lines"]) == len(forks) and "not charted one by one" in summed["title"]
    (teacher,) = [r for r in report["runs"] if r["label"].startswith("m —")]
    assert "no question graded" in json.dumps(teacher["charts"][0])  # said in words, not a bare axis
    again = marathon("run", str(config), cwd=tmp_path)  # all final: nothing runs twice
    assert again.returncode == 0 and "checkpoint 'exam'" not in again.stdout


async def test_a_run_goes_on_after_its_checkpoint_and_scores_as_without(tmp_path: Path) -> None:
    plain = await run_spec(RunSpec("plain", DEMO, {"adapter": "reference"}), tmp_path)
    checked = await run_spec(
        RunSpec("checked", DEMO, {"adapter": "reference"}, checkpoint_at="exam"), tmp_path
    )
    assert plain.reason == checked.reason == "completed"
    scores = {
        name: [e.score for e in _events(tmp_path / name) if isinstance(e, Evaluation)]
        for name in ("plain", "checked")
    }
    assert scores["plain"] == scores["checked"]
    assert [e.name for e in _events(tmp_path / "checked") if isinstance(e, CheckpointSaved)] == ["exam"]


async def test_a_started_agent_is_stopped_archived_and_its_fork_remembers(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    """A process agent keeping its notes on disk: the fork's agent starts on the archived notes and
    answers from them, though the fork itself told it nothing."""
    from adapters.http_server import free_port
    from tests.process_agent import http_process_agent

    bench = make_benchmark()
    agent = http_process_agent(tmp_path, free_port(), NOTES="${STATE_DIR}/notes.txt")
    agent["process"]["state_dir"] = "${RUN_DIR}/agent-state"  # type: ignore[index]
    teach = await run_spec(RunSpec("t", bench, agent, checkpoint_at="exam", until="exam"), tmp_path)
    assert teach.reason == "completed"
    (saved,) = [e for e in _events(tmp_path / "t") if isinstance(e, CheckpointSaved)]
    assert "Miso" in (tmp_path / "t" / "agent-state" / "notes.txt").read_text()
    agent_log = (tmp_path / "t" / "agent.log").read_text()
    assert agent_log.count("agent pid") == 1  # it ends at its checkpoint: stopped, archived, not started again
    fork = await run_spec(RunSpec("t.f1", bench, agent, checkpoint_at="exam", parent=("t", "exam")), tmp_path)
    assert fork.reason == "completed"
    events = _events(tmp_path / "t.f1")
    assert not [e for e in events if isinstance(e, Said) and e.purpose == "fact"]  # it taught nothing
    assert folder_hash(tmp_path / "t" / "agent-state") == saved.state_hash
    scores = {e.question_id: e.score for e in events if isinstance(e, Evaluation)}
    assert scores["q1"] == 10  # "Miso", from the notes restored from the archive


async def test_a_detached_worker_and_a_non_utf8_name_checkpoint_fork_and_verify(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    """Issue 59: a worker the agent started in a session of its own outlived its stop and wrote the
    state folder while the checkpoint read it (one state logged, another archived), and stayed
    after `marathon` ended; a Latin-1 file name killed the checkpoint with a codec error. Here the
    agent keeps its notes in `memory/caf\\xe9.md` and a double-forked worker appends to the state
    folder without pause: the checkpoint ends the worker with the agent, its archive holds the
    logged state, the fork answers from the notes, and the autopsy and verify read the folder."""
    import os

    from adapters.http_server import free_port
    from adapters.lifecycle import process_alive
    from gateway.run.checkpoints import archive_state_hash
    from tests.process_agent import http_process_agent

    bench = make_benchmark()
    agent = http_process_agent(
        tmp_path, free_port(), NOTES="${STATE_DIR}/memory/notes", NOTES_NAME=b"caf\xe9.md".hex(),
        WORKER="${STATE_DIR}/worker.log",
    )
    agent["process"]["state_dir"] = "${RUN_DIR}/agent-state"  # type: ignore[index]
    agent["memory_files"] = ["memory/*"]
    teach = await run_spec(RunSpec("t", bench, agent, checkpoint_at="exam", until="exam"), tmp_path)
    assert teach.reason == "completed"
    (saved,) = [e for e in _events(tmp_path / "t") if isinstance(e, CheckpointSaved)]
    assert archive_state_hash(tmp_path / "t" / saved.archive) == saved.state_hash
    worker = int((tmp_path / "t" / "agent-state" / "worker.log").read_text().split()[1])
    assert not process_alive(worker)  # ended with the agent at its checkpoint, though not in its group
    assert b"caf\xe9.md" in os.listdir(os.fsencode(tmp_path / "t" / "agent-state" / "memory"))
    fork = await run_spec(RunSpec("t.f1", bench, agent, checkpoint_at="exam", parent=("t", "exam")), tmp_path)
    assert fork.reason == "completed"
    scores = {e.question_id: e.score for e in _events(tmp_path / "t.f1") if isinstance(e, Evaluation)}
    assert scores["q1"] == 10  # "Miso", from the notes restored under their Latin-1 name
    for command in (("autopsy", "t.f1"), ("verify", ".")):
        result = marathon(*command, cwd=tmp_path)
        assert result.returncode == 0 and "Traceback" not in result.stderr, (command, result.stdout, result.stderr)


def test_a_checkpoint_on_an_agent_we_do_not_start_is_refused_before_the_run(tmp_path: Path) -> None:
    config = _config(
        tmp_path, 'agent: { adapter: "http", url: "http://127.0.0.1:9/chat" }, checkpoint_at: "exam"'
    )
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 1
    assert "can't be checkpointed or forked" in result.stderr and not (tmp_path / "recordings" / "m").exists()


def test_marathon_fork_names_the_checkpoints_a_run_has(tmp_path: Path, make_benchmark: BenchFactory) -> None:
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{ runs: [ {{ id: "m", benchmark: "{make_benchmark()}", agent: {{ adapter: "reference" }}, '
        'checkpoint_at: "exam" } ] }'
    )
    assert marathon("run", str(config), cwd=tmp_path).returncode == 0
    run = tmp_path / "recordings" / "m"
    assert "fork with: marathon fork" in marathon("inspect", str(run), cwd=tmp_path).stdout
    wrong = marathon("fork", str(run), "--at", "taught", cwd=tmp_path)
    assert wrong.returncode == 2 and "has no checkpoint 'taught'; its checkpoints: 'exam'" in wrong.stderr
    forked = marathon("fork", str(run), "--at", "exam", "--runs", "2", cwd=tmp_path)
    assert forked.returncode == 0, forked.stderr
    assert "[m.exam.f1]* completed" in forked.stdout and "[m.exam.f2]* completed" in forked.stdout
    assert "Exams forked from m's checkpoint" in forked.stdout and "pass^k" in forked.stdout
    assert "Exams forked from m's checkpoint" in (tmp_path / "recordings" / "matrix.md").read_text()


def test_a_benchmark_declares_a_checkpoint_and_a_bad_name_is_an_error_at_its_line(
    make_benchmark: BenchFactory,
) -> None:
    ch2 = (
        '# Two\n\n## Exam\n```js\nawait bench.newSession();\nawait bench.checkpoint("taught");\n```\n'
        "❓ q1 What is my cat called? Correct answer: Miso\n"
    )
    bench = load_benchmark(make_benchmark(ch2__md=ch2))
    assert bench.phases[-1].actions == ("new_session", "checkpoint:taught")
    bad = ch2.replace('"taught"', '"../up"')
    with pytest.raises(BenchmarkErrors) as caught:
        load_benchmark(make_benchmark(ch2__md=bad))
    assert "ch2.md:6" in str(caught.value) and "checkpoint name '../up'" in str(caught.value)


def test_pass_hat_and_pass_at_k_are_the_unbiased_estimators() -> None:
    from gateway.report.forks import ModeResult

    grades: dict[str, dict[str, float]] = {
        "a": {"m#1": 10, "m#2": 10, "m#3": 0},
        "b": {"m#1": 0, "m#2": 0, "m#3": 0},
        "c": {"m#1": 10, "m#2": 10, "m#3": 10},
    }
    passes = {q: {r: score == 10 for r, score in g.items()} for q, g in grades.items()}  # first tries
    r = ModeResult("isolated", grades, passes=passes)
    assert r.pass_hat(1) == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert r.pass_hat(3) == pytest.approx((0 + 0 + 1) / 3)  # every rollout passed: only c
    assert r.pass_at(3) == pytest.approx((1 + 0 + 1) / 3)  # some rollout passed: a and c
    assert r.rollout_means() == pytest.approx([20 / 3, 20 / 3, 10 / 3])
    assert r.noise_floor() == pytest.approx(1.9245, abs=1e-4)


def test_a_ladder_taught_once_forks_every_rung_and_scores_as_re_teaching(tmp_path: Path) -> None:
    rungs = 'rung: ["s0", "s2"]'
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{ runs: [ {{ id: "plain", benchmark: "{DEMO}", agent: {{ adapter: "reference" }}, {rungs} }},'
        f' {{ id: "lad", benchmark: "{DEMO}", agent: {{ adapter: "reference" }}, {rungs}, checkpoint_at: "distractors" }} ] }}'
    )
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rec = tmp_path / "recordings"
    (saved,) = [e for e in _events(rec / "lad.teach") if isinstance(e, CheckpointSaved)]
    for rung in ("s0", "s2"):
        fork = _events(rec / f"lad.{rung}")
        assert not [
            e for e in fork if isinstance(e, Said) and e.purpose == "fact"
        ]  # taught once, by lad.teach
        plain = {e.question_id: e.score for e in _events(rec / f"plain.{rung}") if isinstance(e, Evaluation)}
        own = {e.question_id: e.score for e in fork if isinstance(e, Evaluation)}
        inherited = {e.question_id: e.score for e in _events(rec / "lad.teach") if isinstance(e, Evaluation)}
        assert {**inherited, **own} == plain  # q11, asked before the distractors, is the teacher's
        assert [e.state for e in fork if isinstance(e, RunStart)] == [saved.state_hash]
    matrix = (rec / "matrix.md").read_text()
    ladder = matrix.split("### Scale ladder: lad")[1].split("### ")[0]
    assert "Evidence utterances: identical on every rung" in ladder and "| s2 | 8 | 1 | 15 | 0 |" in ladder
    assert "- Exposure (what the memory reads of a question's first turn returned" in ladder  # paper 003


def test_the_prepared_memory_example_starts_every_task_from_one_state_and_prices_it_apart(
    tmp_path: Path,
) -> None:
    """`marathon run examples/experiment-prepared.jsonc` as docs/experiments.md shows it (the
    example copied beside the benchmarks it names, so its recordings land in tmp_path)."""
    import shutil

    for folder in ("examples", "benchmarks"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    result = marathon("run", "examples/experiment-prepared.jsonc", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rec = tmp_path / "recordings" / "prepared"
    (saved,) = [e for e in _events(rec / "prepared.prepare") if isinstance(e, CheckpointSaved)]
    lines = [json.loads(line) for line in (rec / "prepared.runs.jsonl").read_text().splitlines()]
    assert len(lines) == 8 and {line["variant"] for line in lines} == {"A", "B"}
    assert {line["memory_snapshot"] for line in lines} == {saved.state_hash}
    assert {line["initial_state_from"] for line in lines} == {"prepared.prepare:exam"}
    for line in lines:  # each task played its own benchmark from the start, inheriting no conversation
        assert not [
            e for e in _events(Path(line["recording"])) if isinstance(e, Said) and e.purpose == "fact"
        ]
    matrix = (rec / "matrix.md").read_text()
    assert "**preparation (one-off)**: prepared.prepare — completed" in matrix
    assert "Amortised over the 8 task runs" in matrix


def test_a_direct_evidence_fork_restates_the_answer_before_its_question_and_is_reported_apart(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{ runs: [ {{ id: "m", benchmark: "{make_benchmark()}", agent: {{ adapter: "reference" }}, '
        'exam: ["isolated", "direct-evidence"] } ] }'
    )
    assert marathon("run", str(config), cwd=tmp_path).returncode == 0
    rec = tmp_path / "recordings"
    events = _events(rec / "m.dir.q2.r1")  # q2: how old Miso is, after the update to 5
    (said,) = [
        e for e in events if isinstance(e, Said) and e.text.startswith("Just so you have it in front of you:")
    ]
    (asked,) = [e for e in events if isinstance(e, Asked)]
    assert said.text.endswith("Miso turned 5 years old") and said.seq < asked.seq  # the live fact, not "4"
    assert not [e for e in _events(rec / "m.iso.q2.r1") if isinstance(e, Said) and "front of you" in e.text]
    assert not [
        e for e in _events(rec / "m.dir.q3.r1") if isinstance(e, Said) and "front of you" in e.text
    ]  # [abstain]
    matrix = (rec / "matrix.md").read_text()
    main, _, diagnostic = matrix.partition("### Direct-evidence diagnostic (not part of the results)")
    assert "| isolated |" in main and "| direct-evidence |" not in main
    assert "| q1 |" in diagnostic


def test_accumulating_memory_chains_each_variants_tasks_from_the_previous_ones_end(tmp_path: Path) -> None:
    tasks = REPO / "examples" / "prepared"
    config = tmp_path / "config.jsonc"
    config.write_text(
        '{ experiment: { name: "acc", seed: 3, variants: { "no-memory": { adapter: "reference", memory: false }, '
        '"memory": { adapter: "reference" } }, baseline: "no-memory", memory: "accumulating", '
        f'prepare: {{ benchmark: "{DEMO}", checkpoint_at: "exam" }}, '
        f'tasks: [ {{ id: "people", benchmark: "{tasks / "people"}" }}, '
        f'{{ id: "places", benchmark: "{tasks / "places"}" }} ] }} }}'
    )
    assert marathon("run", str(config), cwd=tmp_path).returncode == 0
    rec = tmp_path / "recordings"
    lines = {
        line["run_id"]: line for line in map(json.loads, (rec / "acc.runs.jsonl").read_text().splitlines())
    }
    assert lines["acc.people.r1.memory"]["initial_state_from"] == "acc.prepare:exam"
    assert lines["acc.places.r1.memory"]["initial_state_from"] == "acc.people.r1.memory:end"
    assert lines["acc.places.r1.no-memory"]["initial_state_from"] == "acc.people.r1.no-memory:end"
    assert {line["cluster"] for line in lines.values()} == {"sequence.r1"}
    assert [lines[f"acc.{t}.r1.memory"]["step"] for t in ("people", "places")] == [1, 2]
    (end,) = [e for e in _events(rec / "acc.people.r1.memory") if isinstance(e, CheckpointSaved)]
    assert [e.state for e in _events(rec / "acc.places.r1.memory") if isinstance(e, RunStart)] == [
        end.state_hash
    ]
    assert lines["acc.people.r1.memory"]["mean_score"] > 0  # B's agent prepared the memory (the default)
    # amortised over the runs that really start from the prepared state (each arm's first step),
    # not over all four (before: "over the 4 task runs")
    matrix = (rec / "matrix.md").read_text()
    assert "Amortised over the 2 task runs" in matrix
    # progress along the sequence, step by step, and where it ends (before: one pooled B − A)
    assert "| step of the sequence (accumulating memory) | questions | B − A |" in matrix
    assert "- at the end of the sequence (step 2): B − A = " in matrix


def test_the_exam_checkpoint_comes_right_before_the_first_question(make_benchmark: BenchFactory) -> None:
    from persona.benchmark.forks import with_checkpoint_at

    ch2 = (
        '# Two\n\n## Exam\n```js\nawait bench.newSession();\nvars.require_all_facts = "pets";\n```\n'
        "> One more thing first.\n❓ q1 What is my cat called? Correct answer: Miso\n"
    )
    bench = with_checkpoint_at(load_benchmark(make_benchmark(ch2__md=ch2)), "exam")
    told, asked = bench.phases[-2], bench.phases[-1]
    assert told.actions == ("new_session",) and told.require_all_facts == ("pets",) and not told.questions
    assert [type(i).__name__ for i in told.items] == ["Utterance"]
    assert asked.actions == ("checkpoint:exam",) and [q.id for q in asked.questions] == ["q1"]
    assert [p.index for p in bench.phases] == list(range(len(bench.phases)))


async def test_a_fork_s_state_and_viewer_show_its_teaching_as_inherited(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    import aiohttp

    from adapters.http_server import serve
    from gateway.viewer.app import make_app

    bench = make_benchmark()
    await run_spec(
        RunSpec("t", bench, {"adapter": "reference"}, checkpoint_at="exam", until="exam"), tmp_path
    )
    await run_spec(
        RunSpec("t.f1", bench, {"adapter": "reference"}, checkpoint_at="exam", parent=("t", "exam")), tmp_path
    )
    shown = marathon("state", str(tmp_path / "t.f1"), "--json", cwd=tmp_path)
    state = json.loads(shown.stdout)
    assert state["forked_from"]["run"] == "t" and state["forked_from"]["checkpoint"] == "exam"
    inherited = [m for m in state["messages"] if m.get("inherited")]
    assert inherited and all(m["purpose"] != "question" for m in inherited)  # the teaching, not the exam
    assert next(m["purpose"] for m in state["messages"] if not m.get("inherited")) == "question"
    assert (
        "forked from t at checkpoint 'exam'" in marathon("state", str(tmp_path / "t.f1"), cwd=tmp_path).stdout
    )
    served = await serve(make_app(tmp_path))
    try:
        async with aiohttp.ClientSession() as http, http.get(f"{served.url}/api/runs/t.f1") as response:
            run = await response.json()
    finally:
        await served.stop()
    assert run["forked_from"] == {"run": "t", "checkpoint": "exam"}


def test_a_run_killed_after_its_checkpoint_resumes_without_taking_it_again(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    import os
    import signal
    import time

    from adapters.http_server import free_port
    from tests.marathon_cli import spawn_marathon
    from tests.process_agent import http_process_agent

    agent = http_process_agent(tmp_path, free_port(), NOTES="${STATE_DIR}/notes.txt", DELAY="0.4")
    run = {"id": "k", "benchmark": str(make_benchmark()), "agent": agent, "checkpoint_at": "exam"}
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"runs": [run]}))
    log_path = tmp_path / "recordings" / "k" / EVENTS_FILE
    running = spawn_marathon("run", str(config), cwd=tmp_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if log_path.exists() and [e for e in read_log(log_path).events if isinstance(e, CheckpointSaved)]:
            break
        time.sleep(0.05)
    os.kill(running.pid, signal.SIGKILL)  # mid-exam: its agent process is ended by its guard
    running.communicate(timeout=30)
    killed = read_log(log_path).events
    assert [e for e in killed if isinstance(e, CheckpointSaved)] and not [
        e for e in killed if e.type == "end"
    ]
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    events = read_log(log_path).events
    assert len([e for e in events if isinstance(e, CheckpointSaved)]) == 1  # replayed, not taken again
    assert sorted(e.question_id for e in events if isinstance(e, Evaluation)) == ["q1", "q2", "q3"]
    forked = marathon("fork", str(tmp_path / "recordings" / "k"), "--at", "exam", cwd=tmp_path)
    assert forked.returncode == 0, forked.stderr


async def test_a_fork_whose_first_start_was_refused_restores_on_the_next_and_scores_as_one_never_stopped(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    """A restore refused (or a fork stopped before it restored), then the same command again:
    the fork starts from its checkpoint's state, not from the empty folder its first start left."""
    bench = make_benchmark()
    agent = {"adapter": "reference"}
    teach = await run_spec(RunSpec("t", bench, agent, checkpoint_at="exam", until="exam"), tmp_path)
    assert teach.reason == "completed"
    (saved,) = [e for e in _events(tmp_path / "t") if isinstance(e, CheckpointSaved)]
    clean = await run_spec(RunSpec("t.clean", bench, agent, checkpoint_at="exam", parent=("t", "exam")), tmp_path)
    archive = tmp_path / "t" / saved.archive
    good = archive.read_bytes()
    archive.write_bytes(b"not the archive")
    fork = RunSpec("t.f1", bench, agent, checkpoint_at="exam", parent=("t", "exam"))
    refused = await run_spec(fork, tmp_path)
    assert refused.reason == "error" and "changed since it was taken" in refused.detail
    assert not [e for e in _events(tmp_path / "t.f1") if isinstance(e, (RunStart, Evaluation))]
    archive.write_bytes(good)
    again = await run_spec(fork, tmp_path)
    assert again.reason == clean.reason == "completed"
    (start,) = [e for e in _events(tmp_path / "t.f1") if isinstance(e, RunStart)]
    assert start.restored and start.state == saved.state_hash
    scores = {
        name: [(e.question_id, e.score) for e in _events(tmp_path / name) if isinstance(e, Evaluation)]
        for name in ("t.clean", "t.f1")
    }
    assert scores["t.f1"] == scores["t.clean"] and any(score == 10 for _, score in scores["t.f1"])


def test_a_fork_that_answered_on_another_state_is_refused_not_graded(tmp_path: Path) -> None:
    """A log written before the rule: the fork started on an empty folder and answered. Restoring
    now would not mend its answers: the start is refused with the reason."""
    from gateway.log.events import Header
    from gateway.log.runlog import RunLog
    from gateway.run.checkpoints import CheckpointError, SavedCheckpoint
    from gateway.run.fork_start import restore_at_start

    parent = SavedCheckpoint("m", "exam", 40, "4d57" + "0" * 60, tmp_path / "a.tar.gz", "0" * 64, 10)
    empty_start = RunStart(state="none")
    log = RunLog(tmp_path / "events.msgpack", Header(run_id="m.f1"), [empty_start])
    assert restore_at_start(parent, log, moved=False) is parent  # started, nothing said: restore
    log.events.append(Said(text="hello"))
    with pytest.raises(CheckpointError, match=r"answered 1 message.*--fresh"):
        restore_at_start(parent, log, moved=False)
    log.events.insert(0, RunStart(state=parent.state_hash, restored=True))
    assert restore_at_start(parent, log, moved=False) is None  # started from it: the folder is its own


def test_checkpoint_at_end_with_an_exam_to_fork_is_refused_before_the_run(tmp_path: Path) -> None:
    from gateway.run.config import ConfigError, load_config

    config = _config(tmp_path, 'agent: { adapter: "reference" }, checkpoint_at: "end", exam: "isolated"')
    with pytest.raises(ConfigError, match='"end"` comes after the last question'):
        load_config(config)


def test_marathon_fork_puts_back_a_secret_its_profile_reads_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hermes-http's Authorization header is `Bearer ${API_SERVER_KEY}`: redacted in the log, read
    again from the environment by the fork, never written out; a secret written into the config
    itself can't be put back, and the error names it."""
    from gateway.cli.forks import fork_specs
    from gateway.log.events import Header
    from gateway.log.runlog import RunLogWriter
    from gateway.run.agents import describe_agent

    monkeypatch.setenv("API_SERVER_KEY", "marathon-api-key-0123456789")

    def parent(run_id: str, agent: dict[str, object]) -> Path:
        run_dir = tmp_path / run_id
        bench = {"name": "demo-en", "path": str(DEMO), "hash": "h"}
        header = Header(run_id=run_id, benchmark=bench, agent=describe_agent(agent), persona={"driver": "scripted"})
        writer = RunLogWriter.create(run_dir / EVENTS_FILE, header)
        writer.append(CheckpointSaved(name="exam", state_hash="0" * 64, archive="checkpoints/exam.tar.gz"))
        writer.close()
        return run_dir

    hermes = parent("h", {"profile": "hermes-http"})
    assert "marathon-api-key" not in (hermes / EVENTS_FILE).read_bytes().decode("latin-1")
    (fork,) = fork_specs(hermes, "exam", 1)
    assert fork.agent["headers"] == {"Authorization": "Bearer ${API_SERVER_KEY}"}
    written = parent("w", {"profile": "hermes-http", "headers": {"Authorization": "Bearer sk-written-in-config"}})
    with pytest.raises(ValueError, match=r"secret redacted \(agent.headers.Authorization\)"):
        fork_specs(written, "exam", 1)


def test_a_fork_from_another_config_is_counted_with_its_parents_forks(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    """A fresh-clone walkthrough: `from: {run, checkpoint}` forked, but the fork tables left it out."""
    bench = make_benchmark()
    teach = tmp_path / "teach.jsonc"
    teach.write_text(
        f'{{ runs: [ {{ id: "m", benchmark: "{bench}", agent: {{ adapter: "reference" }}, '
        'checkpoint_at: "exam", exam: "sequential", rollouts: 1 } ] }'
    )
    assert marathon("run", str(teach), cwd=tmp_path).returncode == 0
    other = tmp_path / "other.jsonc"
    other.write_text(
        f'{{ runs: [ {{ id: "m2", benchmark: "{bench}", agent: {{ adapter: "reference" }}, '
        'from: { run: "m", checkpoint: "exam" } } ] }'
    )
    result = marathon("run", str(other), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    matrix = (tmp_path / "recordings" / "matrix.md").read_text()
    assert "Exams forked from m's checkpoint" in matrix
    assert "| sequential | 2 |" in matrix, matrix  # m.seq.r1 and m2
