"""A run's folder on a cluster node (gateway/cluster/remote_log.py): where its agent's state is."""

from __future__ import annotations

from pathlib import Path

from gateway.cluster.remote_log import RelayJournal
from gateway.log.events import Header, RunStart
from gateway.log.runlog import RunLog


def _journal(nodes: Path, node_id: str) -> RelayJournal:
    return RelayJournal(None, "r1", f"10.0.0.1/{node_id}", "driver", nodes / node_id[:12] / "rec0" / "r1")


def test_a_run_last_started_on_another_node_of_this_machine_takes_its_folder_over(tmp_path: Path) -> None:
    """A private local Ray started again after its driver was stopped has new node ids: the run's
    folder, with its agent's state, is still on this machine — moved in, not lost."""
    earlier = tmp_path / "aaaaaaaaaaaa" / "rec0" / "r1"
    (earlier / "agent-state").mkdir(parents=True)
    (earlier / "agent-state" / "notes.txt").write_text("Miso")
    previous = RunLog(tmp_path / "events.msgpack", Header(run_id="r1"), [RunStart(node="10.0.0.1/aaaaaaaaaaaa99")])
    journal = _journal(tmp_path, "bbbbbbbbbbbb77")
    assert journal.moved
    journal._adopt(previous)
    assert not journal.moved and (journal.work_dir / "agent-state" / "notes.txt").read_text() == "Miso"
    assert not earlier.exists()


def test_a_run_whose_earlier_node_left_nothing_here_has_moved(tmp_path: Path) -> None:
    previous = RunLog(tmp_path / "events.msgpack", Header(run_id="r1"), [RunStart(node="10.0.0.2/cccccccccccc00")])
    journal = _journal(tmp_path, "bbbbbbbbbbbb77")
    journal._adopt(previous)
    assert journal.moved and not journal.work_dir.exists()  # its state is on the other machine: said as lost
