"""A watched run's status: a run that ran on a cluster node is judged by its driver, whose
lock holds the run folder — its runner's pid is another machine's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gateway.log.events import Header, RunStart
from gateway.log.runlog import EVENTS_FILE, RunLogWriter
from gateway.viewer.watch import RunWatch
from tests.conftest import REPO


def node_run(run_dir: Path) -> None:
    """A log as a cluster run leaves it mid-way: started on a node, no end yet."""
    with RunLogWriter.create(run_dir / EVENTS_FILE, Header(run_id=run_dir.name)) as writer:
        writer.append(RunStart(pid=2_000_000_000, node="10.0.0.7/3fa2c1"))  # no such pid here


async def test_a_node_run_is_running_while_its_driver_holds_the_folder(tmp_path: Path) -> None:
    run_dir = tmp_path / "r1"
    node_run(run_dir)
    code = (
        "import sys, time; from pathlib import Path; from gateway.log.lock import RunLock; "
        f"RunLock.acquire(Path({str(run_dir)!r})); print('held', flush=True); time.sleep(60)"
    )
    driver = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert driver.stdout is not None and driver.stdout.readline().strip() == "held"
        watch = RunWatch(run_dir)
        await watch.refresh()
        assert watch.status == "running"
    finally:
        driver.kill()
        driver.wait()


async def test_a_node_run_whose_driver_is_gone_is_resumable(tmp_path: Path) -> None:
    run_dir = tmp_path / "r1"
    node_run(run_dir)
    code = f"from gateway.log.lock import RunLock; from pathlib import Path; RunLock.acquire(Path({str(run_dir)!r}))"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
    watch = RunWatch(run_dir)  # the lock file names a driver that has exited
    await watch.refresh()
    assert watch.status == "resumable"
