"""A log every reader can read (gateway/log/bounds.py, runlog.read_log, lazy_blob.py): a blob's
bytes stay in the file, a log past the readers' bound is refused by name, and a run stops before
its own log gets there — or after a turn that added more than a turn may."""

from __future__ import annotations

import hashlib
import os
import tracemalloc
from pathlib import Path

import pytest

from gateway.log.bounds import LOG_RECORDS_MARGIN, log_bound
from gateway.log.events import Blob, Header, Said
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError, RunLogTooLarge, RunLogWriter, read_log
from tests.conftest import REPO
from tests.marathon_cli import marathon


def _blobs(path: Path, count: int, size: int) -> list[bytes]:
    made = [os.urandom(size) for _ in range(count)]
    with RunLogWriter.create(path, Header(run_id="r")) as writer:
        for data in made:
            writer.append(Blob(ref=hashlib.sha256(data).hexdigest(), data=data))
            writer.append(Said(text="hi"))
    return made


def test_a_logs_blobs_stay_in_the_file_until_asked_for(tmp_path: Path) -> None:
    """A real agent's log is mostly model traffic (25–130 KB a turn in the corpus): read whole,
    a long run's log cost its bytes twice over in memory."""
    path = tmp_path / EVENTS_FILE
    made = _blobs(path, 64, 1 << 20)  # 64 MiB of blobs
    tracemalloc.start()
    try:
        log = read_log(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20
    blobs = [e for e in log.events if isinstance(e, Blob)]
    assert [b.data for b in blobs] == made  # read from the file when asked
    assert read_log(path, blobs_in_memory=True).events == log.events


def test_a_blob_of_a_replaced_log_is_an_error_that_says_so_never_other_bytes(tmp_path: Path) -> None:
    path = tmp_path / EVENTS_FILE
    _blobs(path, 2, 1000)
    first = next(e for e in read_log(path).events if isinstance(e, Blob))
    _blobs(path, 2, 1000)  # `--fresh`: another log at the same path
    with pytest.raises(RunLogFormatError, match="the log was replaced since it was read"):
        _ = first.data


def test_a_log_past_the_readers_bound_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / EVENTS_FILE
    with RunLogWriter.create(path, Header(run_id="r")) as writer:
        for n in range(500):
            writer.append(Said(text=f"line {n}"))
    assert len(read_log(path).events) == 500
    monkeypatch.setenv("MARATHON_MAX_LOG_RECORDS", "499")
    with pytest.raises(RunLogTooLarge, match="holds more than 499 records, the most a reader takes"):
        read_log(path)


def test_verify_names_a_log_past_the_bound_and_verifies_the_others(tmp_path: Path) -> None:
    """Issue 59: verify on a 1M-record log was killed after 485 s at 6.9 GB."""
    result = marathon("demo", "--recordings", "recordings", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    records = len(read_log(tmp_path / "recordings" / "demo" / EVENTS_FILE).events)
    env = {"MARATHON_MAX_LOG_RECORDS": str(records - 1)}
    checked = marathon("verify", "recordings", cwd=tmp_path, env=env)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    assert f"holds more than {records - 1:,} records, the most a reader takes" in checked.stderr
    for command in (("autopsy", "recordings/demo"), ("state", "recordings/demo"), ("inspect", "recordings/demo")):
        shown = marathon(*command, cwd=tmp_path, env=env)
        assert shown.returncode != 0 and "Traceback" not in shown.stderr, (command, shown.stderr)
        assert "the most a reader takes" in shown.stderr + shown.stdout, command


def test_a_run_stops_before_its_log_passes_the_readers_bound(tmp_path: Path) -> None:
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{ runs: [ {{ id: "m", benchmark: "{REPO / "benchmarks" / "demo-en"}", agent: {{ adapter: "reference" }} }} ] }}'
    )
    result = marathon("run", str(config), cwd=tmp_path, env={"MARATHON_MAX_LOG_RECORDS": str(LOG_RECORDS_MARGIN + 40)})
    log = read_log(tmp_path / "recordings" / "m" / EVENTS_FILE)
    assert "limit_reached" in result.stdout + result.stderr
    assert len(log.events) < 80  # stopped near 40 records, with its last turn and its end
    assert "log_records: the log holds" in (tmp_path / "recordings" / "m" / "report.md").read_text()


def test_a_turn_that_adds_more_than_a_turn_may_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MARATHON_MAX_TURN_LOG_MIB", "1")
    assert log_bound(100, 5 << 20, None) == ""  # the first turn: nothing to compare with
    assert log_bound(100, 5 << 20, 4 << 20) == ""  # 1 MiB: at the bound, not past it
    assert log_bound(100, 105 << 20, 5 << 20) == (
        "turn_log_bytes: one turn added 100 MiB to the log, past the 1 MiB a turn may (MARATHON_MAX_TURN_LOG_MIB)"
    )


def test_a_blob_record_is_checked_as_any_record_before_it_is_left_in_the_file(tmp_path: Path) -> None:
    from gateway.log.events import InvalidEvent
    from gateway.log.runlog import pack_record

    path = tmp_path / EVENTS_FILE
    with RunLogWriter.create(path, Header(run_id="r")) as writer:
        writer._write(pack_record({"t": "blob", "seq": 1, "ts": 1e300, "ref": "ab", "data": b"x"}))
        writer._write(pack_record({"t": "blob", "seq": 2, "ts": 1.0, "ref": 5, "data": b"x"}))
    events = read_log(path).events
    assert [type(e) for e in events] == [InvalidEvent, InvalidEvent]
