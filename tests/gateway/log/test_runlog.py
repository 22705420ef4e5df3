from __future__ import annotations

import os
import stat
from pathlib import Path

import msgpack
import pytest

from gateway.log.events import FORMAT_VERSION, MAGIC, Header, Replied, Said, UnknownEvent
from gateway.log.follower import LogFollower
from gateway.log.frames import frame
from gateway.log.runlog import RunLogFormatError, RunLogWriteError, RunLogWriter, read_log


def write_log(path: Path, n: int) -> list[int]:
    """Write a header and n events; return the file size after each record."""
    sizes = []
    with RunLogWriter.create(path, Header(run_id="r1")) as w:
        sizes.append(path.stat().st_size)
        for i in range(n):
            w.append(Said(text=f"message {i}", purpose="line"))
            sizes.append(path.stat().st_size)
    return sizes


def test_round_trip_is_typed_and_sequenced(tmp_path: Path) -> None:
    path = tmp_path / "run" / "events.msgpack"
    write_log(path, 5)
    log = read_log(path)
    assert log.header.run_id == "r1" and log.header.format == FORMAT_VERSION
    assert [type(e) for e in log.events] == [Said] * 5
    assert [e.seq for e in log.events] == [1, 2, 3, 4, 5]
    assert isinstance(log.events[0], Said) and log.events[0].text == "message 0"
    assert not log.torn


def test_cutting_inside_a_record_loses_only_that_record(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    sizes = write_log(path, 10)
    for k in range(1, 10):  # cut in the middle of record k (after k-1 complete events)
        data = path.read_bytes()
        cut = (sizes[k - 1] + sizes[k]) // 2
        damaged = tmp_path / f"cut{k}.msgpack"
        damaged.write_bytes(data[:cut])
        log = read_log(damaged)
        assert len(log.events) == k - 1
        assert log.unread_bytes == cut - sizes[k - 1]


def test_resume_cuts_the_torn_tail_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    sizes = write_log(path, 3)
    with open(path, "r+b") as f:
        f.truncate(sizes[3] - 2)  # tear the last record
    writer, log = RunLogWriter.resume(path)
    assert len(log.events) == 2
    with writer:
        writer.append(Replied(text="after resume"))
    events = read_log(path).events
    assert [e.seq for e in events] == [1, 2, 3]
    assert isinstance(events[-1], Replied) and events[-1].text == "after resume"


def test_every_record_is_on_disk_as_soon_as_it_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    with RunLogWriter.create(path, Header(run_id="r")) as w:
        w.append(Said(text="x"))
        assert len(read_log(path).events) == 1  # another reader sees it while the writer is open


def test_newer_format_is_refused_with_an_upgrade_hint(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    path.write_bytes(frame(msgpack.packb({"t": "header", "magic": MAGIC, "format": FORMAT_VERSION + 1})))
    with pytest.raises(RunLogFormatError, match="upgrade marathonbench"):
        read_log(path)


def test_not_a_log_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    path.write_bytes(b"hello world")
    with pytest.raises(RunLogFormatError, match="not a marathonbench run log"):
        read_log(path)


def test_unknown_event_types_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    write_log(path, 0)
    with open(path, "ab") as f:
        f.write(frame(msgpack.packb({"t": "from_the_future", "seq": 1, "x": 1})))
    event = read_log(path).events[0]
    assert isinstance(event, UnknownEvent) and event.tag == "from_the_future"


def test_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "recordings" / "r1" / "events.msgpack"
    write_log(path, 1)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_fails_closed() -> None:
    writer = RunLogWriter(Path("/dev/full"), next_seq=0)
    with pytest.raises(RunLogWriteError, match="can't write run log"):
        writer.append(Said(text="lost?"))
    assert isinstance(RunLogWriteError(), OSError)
    writer.close()


def test_a_follower_reads_only_what_was_appended_and_waits_for_a_half_written_record(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    writer = RunLogWriter.create(path, Header(run_id="r1"))
    follower = LogFollower(path)
    first = follower.read_new()
    assert [type(e) for e in first] == [Header] and follower.read_new() == []
    writer.append(Said(text="one", purpose="line"))
    writer.append(Replied(text="two"))
    assert [getattr(e, "text", "") for e in follower.read_new()] == ["one", "two"]
    # a record being written: half of it on disk, nothing returned, nothing lost
    record = frame(msgpack.packb(Said(text="three", purpose="line", seq=3).to_record()))
    with open(path, "ab") as f:
        f.write(record[:5])
    assert follower.read_new() == []
    with open(path, "ab") as f:
        f.write(record[5:])
    assert [getattr(e, "text", "") for e in follower.read_new()] == ["three"]
    writer.close()


def test_a_follower_starts_over_when_the_log_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    write_log(path, 3)
    follower = LogFollower(path)
    assert len(follower.read_new()) == 4 and not follower.restarted
    write_log(path, 1)  # `--fresh`: a new file in its place
    again = follower.read_new()
    assert follower.restarted and [type(e) for e in again] == [Header, Said]


def test_a_follower_notices_a_new_log_written_over_the_same_file(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    write_log(path, 3)
    follower = LogFollower(path)
    follower.read_new()
    # the same inode, rewritten in place with another header and more records (as when the
    # file system hands a removed file's inode to the new log)
    other = tmp_path / "other.msgpack"
    write_log(other, 6)
    with open(path, "r+b") as f:
        f.write(other.read_bytes())
    events = follower.read_new()
    assert follower.restarted and [type(e) for e in events] == [Header] + [Said] * 6


def test_the_header_alone_is_read_without_the_events(tmp_path: Path) -> None:
    """A report over 10,000 runs sorts them by their headers before reading any log whole."""
    from gateway.log.runlog import read_header

    path = tmp_path / "events.msgpack"
    with RunLogWriter.create(path, Header(run_id="r", meta={"note": "x" * 100_000})) as log:  # past 64 KiB
        log.append(Said(text="hello"))
    assert read_header(path).meta["note"] == "x" * 100_000
    (tmp_path / "other").write_bytes(b"not a log at all")
    with pytest.raises(RunLogFormatError, match="not a marathonbench run log"):
        read_header(tmp_path / "other")
