"""Runs on a real Ray cluster — a head and two worker nodes on 127.0.0.1, started as Ray tests
itself (`ray.cluster_utils.Cluster`) — driven by `marathon run` as a user runs it.

The head declares no `agent_slot`, each worker one: runs that ask for a slot may only land on
the workers, one at a time each. Every log lives on the driver's side only (the workers write
to the relay); the tests read those logs to check what a user relies on: the same tables as a
local run, each question graded once after a node died, and Ctrl-C or a killed driver leaving
no agent behind and every run resumable.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from ray.cluster_utils import Cluster

from gateway.cli.main import main
from gateway.log.events import (
    CheckpointSaved,
    ErrorEvent,
    Evaluation,
    Event,
    Header,
    RunEnded,
    RunStart,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import ErrorKind
from tests.conftest import REPO, BenchFactory
from tests.marathon_cli import count_records, spawn_marathon
from tests.process_agent import http_process_agent

SLOT = {"num_cpus": 0.5, "custom": {"agent_slot": 1}}
DEMO_QUESTIONS = 15


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    for _ in range(2):
        c.add_node(num_cpus=2, resources={"agent_slot": 1})
    c.wait_for_nodes()
    yield c
    c.shutdown()


def node_ids(cluster: Cluster) -> dict[str, str]:
    """Each node's short id (as a run's `RunStart.node` ends) → "head" or "worker"."""
    return {
        node.node_id[:6]: "head" if node is cluster.head_node else "worker"
        for node in cluster.list_all_nodes()
    }


def config(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def example(tmp_path: Path, recordings: str) -> Path:
    """examples/experiment-ray.jsonc with its benchmarks found from tmp_path and its recordings there."""
    text = (REPO / "examples" / "experiment-ray.jsonc").read_text()
    text = text.replace('"../benchmarks/', f'"{REPO}/benchmarks/').replace(
        '"../recordings/experiment-ray"', f'"{recordings}"'
    )
    text = text.replace('"tuning-en"', f'"{REPO}/examples/tuning-en"')
    return config(tmp_path, f"{recordings}.jsonc", text)


def process_agents(tmp_path: Path, runs: int, delay: float) -> Path:
    """A config of `runs` demo marathons, each against its own slow agent process."""
    (tmp_path / "pids").mkdir(exist_ok=True)
    agent = http_process_agent(tmp_path, DELAY=str(delay), PIDS=str(tmp_path / "pids"))
    run = {"id": "slow", "benchmark": str(REPO / "benchmarks" / "demo-en"), "agent": agent, "repeats": runs}
    return config(
        tmp_path, "slow.jsonc", json.dumps({"recordings": "rec", "runs": [{**run, "resources": SLOT}]})
    )


def logs(recordings: Path) -> dict[str, list[Event]]:
    return {p.parent.name: read_log(p).events for p in sorted(recordings.glob(f"*/{EVENTS_FILE}"))}


def graded_once(events: list[Event]) -> bool:
    asked = [e.question_id for e in events if isinstance(e, Evaluation)]
    return len(asked) == DEMO_QUESTIONS == len(set(asked))


def without_times(markdown: str) -> str:
    return re.sub(r"\d+(\.\d+)? s\b|IQR [^)]*\)", "…", markdown)


def agents_alive(tmp_path: Path) -> list[int]:
    pids = [int(p.name) for p in (tmp_path / "pids").iterdir()]
    return [
        pid
        for pid in pids
        if Path(f"/proc/{pid}").exists() and " Z " not in Path(f"/proc/{pid}/stat").read_text()
    ]


def under_way(run_dir: Path) -> bool:
    """The run's log holds more than its start: its persona is well into the conversation."""
    return count_records(run_dir / EVENTS_FILE) > 30


def wait_until(condition: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"not within {seconds} s: {what}")


def test_the_example_matrix_on_the_cluster_gives_the_local_tables(
    cluster: Cluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    on_ray = example(tmp_path, "on-ray")
    local = example(tmp_path, "local")
    assert main(["run", str(on_ray), "--only", "ladder", "--address", cluster.address]) == 0
    assert main(["run", str(local), "--only", "ladder", "--executor", "local"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\[ladder\.\S+\] completed .* @\S+/[0-9a-f]{6}", out)  # the board names the node

    ray_matrix = (tmp_path / "on-ray" / "matrix.md").read_text()
    assert without_times(ray_matrix) == without_times((tmp_path / "local" / "matrix.md").read_text())
    assert ray_matrix.count("| s") >= 3  # the ladder's three rungs are in it

    kinds = node_ids(cluster)
    by_node: dict[str, list[tuple[float, float]]] = {}
    for run, events in logs(tmp_path / "on-ray").items():
        starts = [e for e in events if isinstance(e, RunStart)]
        end = next(e for e in events if isinstance(e, RunEnded))
        assert len(starts) == 1 and end.reason == "completed" and graded_once(events), run
        node = starts[0].node.rsplit("/", 1)[1][:6]
        assert kinds[node] == "worker", f"{run} ran on the head, which has no agent_slot"
        by_node.setdefault(node, []).append((starts[0].ts, end.ts))
    assert len(by_node) == 2  # both workers took runs
    for spans in by_node.values():  # one agent_slot each: never two runs at once on a node
        spans.sort()
        assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans))


def test_forks_on_the_cluster_restore_a_checkpoint_taken_on_another_node(
    cluster: Cluster, tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    """The teaching run checkpoints on a node, its archive reaches the driver's run folder; each
    fork gets the archive and the inherited prefix from the driver through the object store (a
    node's own folder holds neither) and starts on the checkpoint's state."""
    text = json.dumps(
        {
            "recordings": "rec",
            "parallel": 4,
            "runs": [
                {
                    "id": "m",
                    "benchmark": str(make_benchmark()),
                    "agent": {"adapter": "reference"},
                    "exam": ["sequential", "isolated"],
                    "resources": SLOT,
                }
            ],
        }
    )
    assert main(["run", str(config(tmp_path, "forks.jsonc", text)), "--address", cluster.address]) == 0
    rec = tmp_path / "rec"
    (saved,) = [e for e in read_log(rec / "m" / EVENTS_FILE).events if isinstance(e, CheckpointSaved)]
    assert (rec / "m" / saved.archive).is_file()  # sent to the driver before it was logged
    forks = {run: events for run, events in logs(rec).items() if run != "m"}
    assert len(forks) == 1 + 3  # the sequential exam, and each of TINY's 3 questions alone
    for run, events in forks.items():
        (start,) = [e for e in events if isinstance(e, RunStart)]
        assert start.state == saved.state_hash and start.node, run
        end = next(e for e in events if isinstance(e, RunEnded))
        assert end.reason == "completed", (run, end.detail)
    assert "Exams forked from m's checkpoint" in (rec / "matrix.md").read_text()


def test_a_run_no_node_can_take_is_refused_before_any_run(cluster: Cluster, tmp_path: Path) -> None:
    path = config(
        tmp_path,
        "big.jsonc",
        json.dumps(
            {
                "recordings": "rec",
                "runs": [
                    {
                        "id": "big",
                        "benchmark": str(REPO / "benchmarks" / "demo-en"),
                        "agent": {"adapter": "reference"},
                        "resources": {"custom": {"gpu_slot": 1}},
                    }
                ],
            }
        ),
    )
    assert main(["run", str(path), "--address", cluster.address]) == 1
    assert not (tmp_path / "rec" / "big" / EVENTS_FILE).exists()


def test_ctrl_c_on_the_driver_ends_every_agent_and_the_runs_resume(cluster: Cluster, tmp_path: Path) -> None:
    path = process_agents(tmp_path, runs=2, delay=0.05)
    driver = spawn_marathon("run", str(path), "--address", cluster.address, cwd=tmp_path)
    rec = tmp_path / "rec"
    wait_until(lambda: all(under_way(rec / f"slow.r{k}") for k in (1, 2)), 90, "both runs under way")
    assert len(agents_alive(tmp_path)) == 2
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=90)
    assert driver.returncode == 130, err
    for run, events in logs(rec).items():
        assert isinstance(events[-1], RunEnded) and events[-1].reason == "interrupted", run
    wait_until(lambda: not agents_alive(tmp_path), 15, "every agent process ended")

    driver = spawn_marathon("run", str(path), "--address", cluster.address, cwd=tmp_path)
    out, err = driver.communicate(timeout=180)
    assert driver.returncode == 0, out + err
    for run, events in logs(rec).items():
        assert graded_once(events), run
        starts = [e for e in events if isinstance(e, RunStart)]
        assert [e.resumed for e in starts] == [False, True]
        # back on the node that holds its agent's state: the agent resumed, not restarted
        assert starts[0].node == starts[1].node and not state_lost(events), run


def state_lost(events: list[Event]) -> list[ErrorEvent]:
    return [e for e in events if isinstance(e, ErrorEvent) and e.kind == ErrorKind.AGENT_STATE_LOST]


def test_a_killed_driver_stops_the_cluster_s_runs_and_the_same_command_resumes_them(
    cluster: Cluster, tmp_path: Path
) -> None:
    path = process_agents(tmp_path, runs=2, delay=0.05)
    driver = spawn_marathon("run", str(path), "--address", cluster.address, cwd=tmp_path)
    rec = tmp_path / "rec"
    wait_until(lambda: all(under_way(rec / f"slow.r{k}") for k in (1, 2)), 90, "both runs under way")
    driver.kill()
    driver.wait()
    wait_until(lambda: not agents_alive(tmp_path), 30, "the cluster ended the runs' agents")
    sizes = {run: count_records(rec / run / EVENTS_FILE) for run in ("slow.r1", "slow.r2")}
    time.sleep(1.5)
    assert sizes == {run: count_records(rec / run / EVENTS_FILE) for run in sizes}  # nothing writes on

    driver = spawn_marathon("run", str(path), "--address", cluster.address, cwd=tmp_path)
    out, err = driver.communicate(timeout=180)
    assert driver.returncode == 0, out + err
    for run, events in logs(rec).items():
        assert graded_once(events), run
        starts = [e for e in events if isinstance(e, RunStart)]
        assert starts[-1].resumed is True and starts[-1].node == starts[0].node and not state_lost(events)


def test_a_worker_node_that_dies_mid_run_loses_no_run(cluster: Cluster, tmp_path: Path) -> None:
    """Last in this module: it adds a node and removes it."""
    # its own temp folder, as another machine's disk: a surviving node finds no folder to take over
    # (on one machine it would, and the run would keep its agent's state: test_remote_log.py)
    elsewhere = tmp_path / "doomed-host-tmp"
    elsewhere.mkdir()
    doomed = cluster.add_node(num_cpus=2, resources={"agent_slot": 2}, env_vars={"TMPDIR": str(elsewhere)})
    cluster.wait_for_nodes()
    doomed_id = doomed.node_id
    path = process_agents(tmp_path, runs=4, delay=0.05)
    driver = spawn_marathon("run", str(path), "--address", cluster.address, cwd=tmp_path)
    rec = tmp_path / "rec"

    def on_doomed_node_and_under_way() -> bool:
        for run, events in _readable_logs(rec).items():
            starts = [e for e in events if isinstance(e, RunStart)]
            if starts and starts[0].node.endswith(doomed_id) and under_way(rec / run):
                return True
        return False

    wait_until(on_doomed_node_and_under_way, 120, "a run under way on the node to remove")
    cluster.remove_node(doomed)
    out, err = driver.communicate(timeout=240)
    assert driver.returncode == 0, out + err
    moved = 0
    for run, events in logs(rec).items():
        starts = [e for e in events if isinstance(e, RunStart)]
        end = [e for e in events if isinstance(e, RunEnded)]
        assert graded_once(events), run
        assert [e.reason for e in end] == ["completed"], run  # the lost attempt logged no end
        if starts[0].node.endswith(doomed_id):
            moved += 1
            assert len(starts) == 2 and starts[1].resumed and not starts[1].node.endswith(doomed_id)
            # its agent's state stayed on the dead node: the log says the agent started afresh
            (lost,) = state_lost(events)
            assert doomed_id in lost.message and starts[1].node in lost.message
    assert moved >= 1
    wait_until(lambda: not agents_alive(tmp_path), 15, "the removed node's agents ended too")


def _readable_logs(recordings: Path) -> dict[str, list[Event]]:
    try:
        return logs(recordings)
    except (OSError, ValueError):
        return {}


def test_asking_for_ray_without_it_names_the_extra(tmp_path: Path) -> None:
    """What a user without the `ray` extra reads (Ray hidden from the import system here)."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["ray"] = None  # as if not installed
        sys.path.insert(0, {str(REPO)!r})
        from gateway.cli.main import main
        sys.exit(main(["run", {str(example(tmp_path, "x"))!r}, "--only", "ladder"]))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env={**os.environ}
    )
    assert result.returncode == 1
    assert "pip install -e '.[ray]'" in result.stderr


def test_a_head_that_is_not_there_is_said_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    assert main(["run", str(example(tmp_path, "x")), "--only", "ladder", "--address", "127.0.0.1:1"]) == 1
    assert "no Ray cluster answers at 127.0.0.1:1" in capsys.readouterr().err
    assert time.monotonic() - started < 30  # not Ray's minutes of retries


def test_a_lost_relay_stops_the_run_at_once_and_closing_does_not_wait_again(
    cluster: Cluster, tmp_path: Path
) -> None:
    """Fail closed, fast: after the driver's relay is gone an append fails, later ones fail
    without waiting for it again, and closing never raises over the error that ended the run."""
    import ray

    from gateway.cluster.relay import LogRelay
    from gateway.cluster.remote_log import BATCH_RECORDS, RelayJournal
    from gateway.log.runlog import RunLogWriteError

    ray.init(address=cluster.address, logging_level=logging.ERROR)
    try:
        relay = ray.remote(LogRelay).options(num_cpus=0).remote(str(tmp_path))
        journal = RelayJournal(relay, "r", "here", "r on the driver", tmp_path / "node" / "r")
        writer, previous = journal.open(lambda: Header(run_id="r"), fresh=True)
        assert previous is None
        writer.append(RunStart())
        writer.flush()
        ray.kill(relay)
        with pytest.raises(ray.exceptions.RayActorError):  # ray.kill is asynchronous: wait for the end
            for _ in range(100):
                ray.get(relay.where.remote(), timeout=10)
                time.sleep(0.1)
        with pytest.raises(RunLogWriteError):
            for _ in range(BATCH_RECORDS + 1):
                writer.append(RunStart())
        started = time.monotonic()
        with pytest.raises(RunLogWriteError, match="can't be written"):
            writer.append(RunStart())
        writer.close()
        assert time.monotonic() - started < 1
    finally:
        ray.shutdown()
    log = read_log(tmp_path / "r" / EVENTS_FILE)  # what reached the driver before its relay went
    assert log.header.run_id == "r" and [e.type for e in log.events] == ["run_start"]
