"""`marathon verify RECORDINGS`: exit 0 when every invariant held, 1 naming each failure."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gateway.log.runlog import EVENTS_FILE, RunLogWriter, iter_records, pack_record, read_log
from gateway.run.checkpoints import archive_path, archive_state
from tests.marathon_cli import marathon


@pytest.fixture(scope="module")
def forked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A teaching run and a fork of its checkpoint, as `marathon run` leaves them."""
    root = tmp_path_factory.mktemp("verify")
    bench = Path(__file__).parents[3] / "benchmarks" / "demo-en"
    config = root / "config.jsonc"
    config.write_text(
        f'{{ runs: [ {{ id: "m", benchmark: "{bench}", agent: {{ adapter: "reference" }}, '
        'exam: "sequential", rollouts: 1 } ] }'
    )
    result = marathon("run", str(config), cwd=root)
    assert result.returncode == 0, result.stderr
    return root / "recordings"


def _copy(forked: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "recordings"
    shutil.copytree(forked, copy, symlinks=True)
    return copy


def _with_parent(path: Path, **changes: object) -> None:
    """Write the run log at `path` again with its header's `parent` changed, as a hand or a
    crafted file would."""
    log = read_log(path, blobs_in_memory=True)  # written again to the same path
    writer = RunLogWriter.create(path, dataclasses.replace(log.header, parent={**log.header.parent, **changes}))
    for event in log.events:
        writer.append(event)
    writer.close()


def test_verify_passes_a_folder_as_marathon_run_left_it_and_prints_its_manifest(forked: Path) -> None:
    result = marathon("verify", str(forked), cwd=forked.parent)
    assert result.returncode == 0, result.stderr
    assert "every invariant held" in result.stderr
    manifest = json.loads(result.stdout)
    runs = {r["run"]: r for r in manifest["runs"]}
    assert runs["m.seq.r1"]["forked_from"]["run"] == "m"
    assert runs["m.seq.r1"]["start_state"] == runs["m.seq.r1"]["forked_from"]["state_hash"]
    assert runs["m"]["benchmark"]["hash"] == runs["m"]["benchmark"]["files_hash_today"]
    assert runs["m"]["agent_version"].startswith("reference agent of marathonbench")
    assert manifest["failures"] == [] and len(manifest["digest"]) == 64


def test_verify_names_a_report_edited_by_hand(forked: Path, tmp_path: Path) -> None:
    copy = _copy(forked, tmp_path)
    report = copy / "m.seq.r1" / "report.md"
    report.write_text(report.read_text().replace("mean 8.", "mean 9.", 1).replace("/10", "/10 ", 1))
    result = marathon("verify", str(copy), cwd=tmp_path)
    assert result.returncode == 1
    assert "m.seq.r1: report_current — report.md line" in result.stderr and "(stale or edited)" in result.stderr


def test_verify_names_a_fork_whose_state_hash_was_altered(forked: Path, tmp_path: Path) -> None:
    copy = _copy(forked, tmp_path)
    _with_parent(copy / "m.seq.r1" / EVENTS_FILE, state_hash="0" * 64)
    result = marathon("verify", str(copy), cwd=tmp_path)
    assert result.returncode == 1
    assert "m.seq.r1: started_as_claimed — its header says it forked from state 000000000000…" in result.stderr
    assert "not the checkpoint's 000000000000…" in result.stderr  # the start restored another state


def test_verify_names_a_log_cut_short(forked: Path, tmp_path: Path) -> None:
    copy = _copy(forked, tmp_path)
    path = copy / "m.seq.r1" / EVENTS_FILE
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])
    result = marathon("verify", str(copy), cwd=tmp_path)
    assert result.returncode == 1
    assert "m.seq.r1: log_whole" in result.stderr
    assert "m.seq.r1: report_current" in result.stderr  # the report was written from the whole log


def test_verify_of_a_folder_with_no_runs_says_so(tmp_path: Path) -> None:
    result = marathon("verify", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2 and "no run logs under" in result.stderr


@pytest.mark.parametrize("seq", ["x", float("inf")])
def test_a_crafted_parent_field_is_named_by_report_state_and_verify_not_a_traceback(
    forked: Path, tmp_path: Path, seq: object
) -> None:
    copy = _copy(forked, tmp_path)
    _with_parent(copy / "m.seq.r1" / EVENTS_FILE, seq=seq)
    for args in (("report", str(copy)), ("state", str(copy / "m.seq.r1")), ("verify", str(copy))):
        result = marathon(*args, cwd=tmp_path)
        assert "Traceback" not in result.stderr, (args, result.stderr)
    assert "parent checkpoint position" in result.stderr and result.returncode == 1


def test_verify_names_a_cross_run_report_edited_by_hand(forked: Path, tmp_path: Path) -> None:
    copy = _copy(forked, tmp_path)
    matrix = copy / "matrix.md"
    matrix.write_text(matrix.read_text().replace("| sequential |", "| sequential (best of 5) |", 1))
    result = marathon("verify", str(copy), cwd=tmp_path)
    assert result.returncode == 1
    assert "(across runs): report_current — matrix.md line" in result.stderr
    assert "— `marathon report` writes it again from the logs" in result.stderr


def test_verify_names_a_prepared_memory_fork_whose_parent_was_started_over(forked: Path, tmp_path: Path) -> None:
    """A task run that took only its parent's state (`prefix: False`) reads no prefix, so only
    verify sees that the parent's log no longer holds its checkpoint where the header says."""
    copy = _copy(forked, tmp_path)
    _with_parent(copy / "m.seq.r1" / EVENTS_FILE, prefix=False, seq=1)
    result = marathon("verify", str(copy), cwd=tmp_path)
    assert result.returncode == 1
    assert "m.seq.r1: started_as_claimed — its parent m holds no checkpoint 'exam' at event 1" in result.stderr


def _rewrite(path: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """Write the log at `path` again, its records (msgpack maps, header first) changed by hand."""
    records = [record for _, record in iter_records(path)]
    path.unlink()
    writer = RunLogWriter(path, next_seq=0)
    for record in change(records):
        writer._write(pack_record(record))  # as a hand would: no numbering, no checks
    writer.close()


def _graded(records: list[dict[str, Any]], **fields: object) -> list[dict[str, Any]]:
    first = next(r for r in records if r.get("t") == "evaluation")
    first.update(fields)
    return records


def _copied(copy: Path) -> None:
    shutil.copytree(copy / "m.seq.r1", copy / "m.seq.r3")  # a backup of a fork, counted as a third


def _swapped(copy: Path) -> None:
    a, b = copy / "m" / EVENTS_FILE, copy / "m.seq.r1" / EVENTS_FILE
    a.rename(copy / "tmp"), b.rename(a), (copy / "tmp").rename(b)


def _archive_swapped(copy: Path) -> None:
    """Another valid archive in place of the teaching's, its sha256 written where the log keeps it."""
    other = copy.parent / "other-state"
    other.mkdir()
    (other / "MEMORY.md").write_text("someone else\n")
    saved = archive_state(other, copy.parent / "other-run", "exam")
    shutil.copyfile(archive_path(copy.parent / "other-run", "exam"), archive_path(copy / "m", "exam"))
    _rewrite(
        copy / "m" / EVENTS_FILE,
        lambda rs: [{**r, "archive_sha256": saved.archive_sha256} if r.get("t") == "checkpoint" else r for r in rs],
    )


TAMPERED: dict[str, tuple[Callable[[Path], object], list[str]]] = {
    "an archive swapped, its digest rewritten": (
        _archive_swapped,
        ["m: archive_intact — checkpoint 'exam': its archive holds the state "],
    ),
    "a fork folder copied": (
        _copied,
        [
            "m.seq.r3: in_its_folder — its header names the run 'm.seq.r1', not 'm.seq.r3'",
            "the run 'm.seq.r1' is in 2 folders: m.seq.r1, m.seq.r3",
        ],
    ),
    "two logs swapped": (
        _swapped,
        [
            "m: in_its_folder — its header names the run 'm.seq.r1', not 'm'",
            "m.seq.r1: in_its_folder — its header names the run 'm', not 'm.seq.r1'",
        ],
    ),
    "the header's run renamed": (
        lambda c: _rewrite(c / "m.seq.r1" / EVENTS_FILE, lambda rs: [{**rs[0], "run_id": "other"}, *rs[1:]]),
        ["m.seq.r1: in_its_folder — its header names the run 'other', not 'm.seq.r1'"],
    ),
    "a grade made NaN": (
        lambda c: _rewrite(c / "m.seq.r1" / EVENTS_FILE, lambda rs: _graded(rs, score=float("nan"))),
        ["'s score is nan, not a number from 0 to 10"],
    ),
    "a grade made 1e308": (
        lambda c: _rewrite(c / "m.seq.r1" / EVENTS_FILE, lambda rs: _graded(rs, score=1e308)),
        ["'s score is 1e+308, not a number from 0 to 10"],
    ),
    "an answer made a map": (
        lambda c: _rewrite(c / "m.seq.r1" / EVENTS_FILE, lambda rs: _graded(rs, answer={"a": 1})),
        ["m.seq.r1: records_valid — record "],
    ),
    "a record of an unknown kind": (
        lambda c: _rewrite(c / "m.seq.r1" / EVENTS_FILE, lambda rs: [*rs[:-1], {**rs[-1], "t": "mystery"}]),
        ["a 'mystery' record this version does not know"],
    ),
    "a record numbered twice": (
        lambda c: _rewrite(
            c / "m.seq.r1" / EVENTS_FILE, lambda rs: [*rs[:-1], {**rs[-1], "seq": rs[-2]["seq"]}]
        ),
        ["records are numbered one by one"],
    ),
    "a huge record number": (
        lambda c: _rewrite(c / "m.seq.r1" / EVENTS_FILE, lambda rs: [*rs[:-1], {**rs[-1], "seq": 2**63 - 1}]),
        ["records are numbered one by one"],
    ),
    "a second header mid-log": (
        lambda c: _rewrite(
            c / "m.seq.r1" / EVENTS_FILE, lambda rs: [*rs[:-1], {**rs[0], "seq": rs[-1]["seq"]}, rs[-1]]
        ),
        ["a second header in the middle of the log"],
    ),
}


@pytest.mark.parametrize("tampering", sorted(TAMPERED))
def test_verify_names_every_tampering(tampering: str, forked: Path, tmp_path: Path) -> None:
    """Issue 59: each of these passed verify ("✓ 33 run(s)") — a copy, a swap, a rename, an
    impossible grade, an unknown record, a number reused, a second header."""
    copy = _copy(forked, tmp_path)
    tamper, named = TAMPERED[tampering]
    tamper(copy)
    result = marathon("verify", str(copy), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "every invariant held" not in result.stderr
    for words in named:
        assert words in result.stderr, result.stderr


def test_verify_takes_nested_recordings_folders_and_names_their_runs(forked: Path, tmp_path: Path) -> None:
    """Issue 59: `marathon verify recordings` printed "✓ 1 run(s)" while recordings/forks held
    failures; nothing said the nested folders went unchecked."""
    top = tmp_path / "top"
    top.mkdir()
    shutil.copytree(forked, top / "forks", symlinks=True)
    _rewrite(top / "forks" / "m.seq.r1" / EVENTS_FILE, lambda rs: _graded(rs, score=float("nan")))
    result = marathon("verify", str(top), cwd=tmp_path)
    assert result.returncode == 1 and "forks/m.seq.r1: records_valid — " in result.stderr, result.stderr
    whole = marathon("verify", str(_copy(forked, tmp_path)), cwd=tmp_path)
    assert whole.returncode == 0 and "✓ 2 run(s): every invariant held" in whole.stderr, whole.stderr


def test_a_rescored_run_still_verifies(forked: Path, tmp_path: Path) -> None:
    """Issue 59: `rescore` rewrote report.md without the autopsy section, and verify then named
    every rescored run's report stale; it writes the whole report now."""
    copy = _copy(forked, tmp_path)
    rescored = marathon("rescore", str(copy / "m.seq.r1"), "--grader", "exact", cwd=tmp_path)
    assert rescored.returncode == 0, rescored.stderr
    result = marathon("verify", str(copy), cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def test_a_header_field_of_the_wrong_type_fails_its_run_named_and_the_others_are_reported(
    forked: Path, tmp_path: Path
) -> None:
    """Issue 59: `benchmark.path: 5` in one header was a traceback from verify, autopsy and state,
    and `marathon report` wrote no report for any run."""
    copy = _copy(forked, tmp_path)
    bad = lambda rs: [{**rs[0], "benchmark": {**rs[0]["benchmark"], "path": 5}}, *rs[1:]]  # noqa: E731
    _rewrite(copy / "m.seq.r1" / EVENTS_FILE, bad)
    why = "malformed header record (benchmark.path is '5', expected text)"
    report = marathon("report", str(copy), cwd=tmp_path)
    assert report.returncode == 0 and "skipped m.seq.r1: unreadable log" in report.stdout + report.stderr
    assert why in report.stdout + report.stderr and "Traceback" not in report.stderr
    assert (copy / "matrix.md").is_file()
    for command in (["verify", str(copy)], ["autopsy", str(copy / "m.seq.r1")], ["state", str(copy / "m.seq.r1")]):
        result = marathon(*command, cwd=tmp_path)
        assert result.returncode != 0 and why in result.stderr and "Traceback" not in result.stderr, command


def test_the_autopsy_of_a_damaged_log_says_where_it_stops(forked: Path, tmp_path: Path) -> None:
    """Issue 59: a log with a CRC-bad middle gave an autopsy table of a few of 15 questions and no
    word of the damage."""
    copy = _copy(forked, tmp_path)
    log = copy / "m.seq.r1" / EVENTS_FILE
    data = bytearray(log.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)
    log.write_bytes(bytes(data))
    result = marathon("autopsy", str(copy / "m.seq.r1"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "its log is damaged at byte" in result.stdout and "covers only the questions before it" in result.stdout


def test_a_missing_report_is_named_with_its_fix_and_marathon_report_writes_it(forked: Path, tmp_path: Path) -> None:
    copy = _copy(forked, tmp_path)
    (copy / "m.seq.r1" / "report.md").unlink()
    result = marathon("verify", str(copy), cwd=tmp_path)
    assert result.returncode == 1
    assert "m.seq.r1: report_current — it has no report.md (`marathon report` writes it)" in result.stderr
    written = marathon("report", str(copy), cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    assert "[m.seq.r1] wrote its report.md (missing or older than its log)" in written.stdout
    assert "[m] wrote" not in written.stdout  # a current report is left as it is
    assert marathon("verify", str(copy), cwd=tmp_path).returncode == 0
