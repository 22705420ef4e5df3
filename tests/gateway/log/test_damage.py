"""Damage in the middle of a log is not a torn tail: a resume that dropped everything after a
flipped byte would re-drive the agent over what its memory already holds. These tests damage
real logs (format 2 as written today, and the checked-in format-1 log) and check that reading
tells the two apart, resume refuses, and repair keeps what came before without deleting."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.log.events import Evaluation, Header, Said
from gateway.log.runlog import (
    RunLogDamaged,
    RunLogFormatError,
    RunLogWriter,
    iter_records,
    read_log,
    repair_log,
)

FORMAT1 = Path(__file__).parents[1] / "fixtures" / "events-format1.msgpack"


def write(path: Path, n: int) -> list[int]:
    """A log of a header and n records; the end offset of each record."""
    ends = []
    with RunLogWriter.create(path, Header(run_id="r")) as writer:
        ends.append(path.stat().st_size)
        for i in range(n):
            writer.append(Said(text=f"message {i} " + "x" * (i * 37 % 300)))
            ends.append(path.stat().st_size)
    return ends


def flip(path: Path, at: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 1 << bit
    path.write_bytes(bytes(data))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(0, 1, exclude_max=True), bit=st.integers(0, 7))
def test_any_flipped_bit_is_found_and_every_intact_record_after_it_is_counted(
    tmp_path_factory: pytest.TempPathFactory, where: float, bit: int
) -> None:
    path = tmp_path_factory.mktemp("log") / "events.msgpack"
    ends = write(path, 40)
    at = int(where * ends[-1])
    flip(path, at, bit)
    hit = next(k for k, end in enumerate(ends) if at < end)  # 0 = the header
    if hit == 0:
        with pytest.raises(RunLogFormatError):
            read_log(path)
        return
    log = read_log(path)
    assert len(log.events) == hit - 1  # every record before the damaged one, and none after
    assert log.valid_length == ends[hit - 1]
    if hit == len(ends) - 1:
        assert log.damage is None  # the last record: a torn tail, dropped as after a crash
    else:
        assert log.damage is not None and log.damage.offset == ends[hit - 1]
        assert log.damage.next_intact == ends[hit] and log.damage.records_after == len(ends) - 1 - hit


def test_resume_refuses_damage_with_records_after_it_and_leaves_the_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    ends = write(path, 100)
    at = int(0.3 * ends[-1])
    flip(path, at)
    before = path.read_bytes()
    hit = next(k for k, end in enumerate(ends) if at < end)
    with pytest.raises(RunLogDamaged) as raised:
        RunLogWriter.resume(path)
    message = str(raised.value)
    assert f"damaged at byte {ends[hit - 1]:,}" in message
    assert f"{100 - hit} intact record(s) follow" in message and "marathon repair" in message
    assert path.read_bytes() == before


def test_repair_keeps_the_records_before_the_damage_and_moves_the_original_aside(tmp_path: Path) -> None:
    path = tmp_path / "run" / "events.msgpack"
    ends = write(path, 100)
    flip(path, ends[30] + 3)  # inside record 31
    damaged = path.read_bytes()
    repair = repair_log(path)
    assert repair is not None
    assert repair.kept_events == 30 and repair.records_after_damage == 69
    assert repair.original.parent == path.parent and repair.original.read_bytes() == damaged
    assert path.read_bytes() == damaged[: ends[30]]
    writer, _ = RunLogWriter.resume(path)  # resumes from the damage on
    with writer:
        writer.append(Said(text="after repair"))
    events = read_log(path).events
    assert [e.seq for e in events] == list(range(1, 32)) and getattr(events[-1], "text", "") == "after repair"
    assert repair_log(path) is None  # intact now


def test_a_torn_tail_is_still_cut_and_resumed_without_a_question(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    ends = write(path, 10)
    with open(path, "r+b") as f:
        f.truncate(ends[-1] - 5)
    log = read_log(path)
    assert log.torn and log.damage is None and "torn record" in log.damage_text()
    RunLogWriter.resume(path)[0].close()
    assert path.stat().st_size == ends[-2]


def test_the_checked_in_format_1_log_reads_as_written(tmp_path: Path) -> None:
    log = read_log(FORMAT1)
    assert log.format == 1 and log.header.run_id == "demo" and not log.torn
    assert len(log.events) == 504 and log.events[-1].type == "end"
    scores = [e.score for e in log.events if isinstance(e, Evaluation)]
    assert len(scores) == 15 and round(sum(scores) / len(scores), 2) == 8.67


def test_a_format_1_log_is_resumed_in_its_own_framing(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    shutil.copy(FORMAT1, path)
    writer, _ = RunLogWriter.resume(path)
    with writer:
        writer.append(Said(text="appended by a newer marathonbench"))
    again = read_log(path)
    assert again.format == 1 and not again.torn and len(again.events) == 505
    assert getattr(again.events[-1], "text", "") == "appended by a newer marathonbench"


def test_damage_in_a_format_1_log_is_told_from_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    shutil.copy(FORMAT1, path)
    ends = [end for end, _ in iter_records(path)]
    at = ends[len(ends) * 3 // 10]  # the first byte of a record 30 % in
    data = bytearray(path.read_bytes())
    data[at] = 0xC1  # a byte msgpack never uses
    path.write_bytes(bytes(data))
    log = read_log(path)
    assert log.damage is not None and log.damage.offset == at
    assert log.damage.records_after == len(ends) - 1 - len(ends) * 3 // 10 - 1
    with pytest.raises(RunLogDamaged):
        RunLogWriter.resume(path)


def test_a_short_write_leaves_no_partial_record_for_the_next_append_to_bury(tmp_path: Path) -> None:
    """A disk that takes only part of a record: the part is cut off, so the `end` record the
    runner appends next doesn't turn it into damage that would block resume."""
    import os

    path = tmp_path / "events.msgpack"
    writer = RunLogWriter.create(path, Header(run_id="r"))
    writer.append(Said(text="one"))
    size = path.stat().st_size
    real_write = os.write
    calls = 0

    def half_then_full(fd: int, data: bytes) -> int:  # as a disk that fills up mid-record
        nonlocal calls
        calls += 1
        if calls == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(27, "File too large")

    try:
        os.write = half_then_full  # type: ignore[assignment]
        with pytest.raises(OSError, match="File too large"):
            writer.append(Said(text="a record the disk only half took"))
    finally:
        os.write = real_write  # type: ignore[assignment]
    assert path.stat().st_size == size
    writer.append(Said(text="end"))
    writer.close()
    log = read_log(path)
    assert (
        log.damage is None and not log.torn and [getattr(e, "text", "") for e in log.events] == ["one", "end"]
    )


def test_repair_on_a_full_disk_leaves_the_log_as_it_was_and_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`repair` on a full disk left `.events.msgpack.repair` behind; now it says so, the log
    untouched, no staged copy left (the disk filling is the OS's: its fsync fails with ENOSPC)."""
    import errno
    import os

    from gateway.log.runlog import RunLogWriteError

    path = tmp_path / "run" / "events.msgpack"
    ends = write(path, 20)
    flip(path, ends[5] + 3)
    damaged = path.read_bytes()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(RunLogWriteError, match=r"No space left on device \(.* bytes free on its disk\)"):
        repair_log(path)
    assert path.read_bytes() == damaged
    assert sorted(p.name for p in path.parent.iterdir()) == ["events.msgpack", "run.lock"]  # no staged copy
