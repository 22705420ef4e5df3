"""The `marathon` command as a user runs it: a real process, real files, real signals."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from gateway.log.events import Asked, Evaluation, Said
from gateway.log.runlog import EVENTS_FILE, read_log
from tests.conftest import ARTICLE_RU, DEMO, REPO, BenchFactory
from tests.marathon_cli import count_records, explain, marathon, spawn_marathon
from tests.run_logs import cut_after


def test_check_prints_the_shape() -> None:
    result = marathon("check", str(DEMO), cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert "questions: 15" in result.stdout and "profile            12 facts" in result.stdout
    assert "update              3" in result.stdout
    assert marathon("check", str(ARTICLE_RU), cwd=REPO).returncode == 0


def test_check_names_file_and_line_of_each_error(make_benchmark: BenchFactory) -> None:
    root = make_benchmark(ch2__md="## Exam\n```js\nrequire('fs');\n```\n❓ q1 no marker\n")
    result = marathon("check", str(root), cwd=root)
    assert result.returncode == 1
    assert f"{root / 'ch2.md'}:3: unsupported directive" in result.stderr
    assert f"{root / 'ch2.md'}:5: question q1 has no answer marker" in result.stderr
    assert "Traceback" not in result.stderr


def test_run_resume_and_inspect_from_a_config(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    bench = make_benchmark()
    config = tmp_path / "config.jsonc"
    config.write_text(
        "// two runs\n{\n  recordings: 'out',\n  runs: [\n"
        f"    {{ id: 'a', benchmark: '{bench}', agent: {{ adapter: 'reference' }} }},\n"
        f"    {{ id: 'b', benchmark: '{bench}', agent: {{ adapter: 'reference' }}, persona: 'scripted' }},\n"
        "  ],\n}\n"
    )
    first = marathon("run", str(config), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "[a] completed" in first.stdout and "[b] completed" in first.stdout
    assert "offline rule-based stand-in" in first.stdout
    second = marathon("run", str(config), "--only", "a", cwd=tmp_path)
    assert "[a] already ended (completed)" in second.stdout
    shown = marathon("inspect", str(tmp_path / "out" / "a"), cwd=tmp_path)
    assert shown.returncode == 0
    assert (
        "evaluation" in shown.stdout
        and "question_id=q1" in shown.stdout
        and "status: completed" in shown.stdout
    )
    assert "stand-in" in shown.stdout


def test_bad_config_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "config.jsonc"
    config.write_text(
        "{\n  runs: [\n    { id: '../escape', benchmark: 'x', agent: { adapter: 'reference' } },\n  ],\n}\n"
    )
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 2 and f"{config}:3:" in result.stderr and "Traceback" not in result.stderr


def test_a_bad_benchmark_fails_before_any_run_starts(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    bench = make_benchmark(pets__md="# Pets\n1.1 outside\n")
    config = tmp_path / "config.jsonc"
    config.write_text(f"{{runs: [{{id: 'a', benchmark: '{bench}', agent: {{adapter: 'reference'}}}}]}}")
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 1 and "pets.md:2: fact 1.1 is outside a section" in result.stderr
    assert not (tmp_path / "recordings").exists()


def demo_until(tmp_path: Path, records: int) -> subprocess.Popen[str]:
    """Start `marathon demo` in `tmp_path`; return once its log holds `records` records."""
    proc = spawn_marathon("demo", cwd=tmp_path)
    log_path = tmp_path / "recordings" / "demo" / EVENTS_FILE
    deadline = time.monotonic() + 60
    while count_records(log_path) < records and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    return proc


@pytest.mark.parametrize("kill_at", [3, 40, 90, 130])
def test_demo_killed_with_sigkill_resumes_and_grades_each_question_once(tmp_path: Path, kill_at: int) -> None:
    log_path = tmp_path / "recordings" / "demo" / EVENTS_FILE
    proc = demo_until(tmp_path, kill_at)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    killed_at = count_records(log_path)
    assert killed_at >= kill_at, "the demo finished before the kill point"
    result = marathon("demo", cwd=tmp_path)
    assert result.returncode == 0, explain(result, log_path)
    assert "resuming the unfinished demo run" in result.stdout, explain(result, log_path)
    assert "graded 15/15, coverage complete" in result.stdout, explain(result, log_path)
    log = read_log(log_path)
    assert set(Counter(e.question_id for e in log.events if isinstance(e, Evaluation)).values()) == {1}
    assert len([e for e in log.events if isinstance(e, Evaluation)]) == 15
    resent = [e for e in log.events if isinstance(e, (Said, Asked)) and e.resent]
    assert len(resent) <= 1
    # the console and the report count the same re-sends
    said = re.search(r"resumed \((\d+) message\(s\) re-sent now, (\d+) over the run", result.stdout)
    report = re.search(r"re-sent after a stop \(a crash or Ctrl-C\): (\d+)", (log_path.parent / "report.md").read_text())
    assert said and report and said.group(2) == report.group(1) == str(len(resent)), result.stdout


def test_demo_runs_again_fresh_after_it_finished(tmp_path: Path) -> None:
    assert marathon("demo", cwd=tmp_path).returncode == 0
    again = marathon("demo", cwd=tmp_path)
    assert again.returncode == 0 and "resuming" not in again.stdout
    # unlike `marathon run`, the demo starts a finished run over — and says so
    assert "had completed; starting a new one in its place" in again.stdout
    report = (tmp_path / "recordings" / "report.md").read_text()
    assert report.count("— demo: demo-en @") == 2
    run_report = (tmp_path / "recordings" / "demo" / "report.md").read_text()
    compactions = re.search(r"compactions seen: (\d+)", run_report)
    assert compactions and int(compactions.group(1)) >= 1
    rows = re.findall(r"^\| (q\d+) \| [\d.]+ \| (\d+) \| ", run_report, re.M)
    assert len(rows) == 15 and all(int(calls) >= 1 for _, calls in rows)  # a memory-call count per question
    assert "beyond the boundary: " in run_report and "still in context: " in run_report


def test_ctrl_c_leaves_a_valid_log_that_resumes(tmp_path: Path) -> None:
    log_path = tmp_path / "recordings" / "demo" / EVENTS_FILE
    proc = demo_until(tmp_path, 30)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "run the same command again to resume" in err and "Traceback" not in err
    log = read_log(log_path)
    assert (
        not log.torn
        and log.events[-1].type == "end"
        and getattr(log.events[-1], "reason", "") == "interrupted"
    )
    result = marathon("demo", cwd=tmp_path)
    assert result.returncode == 0 and "graded 15/15, coverage complete" in result.stdout


def test_bad_agent_settings_fail_before_the_run_starts(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    bench = make_benchmark()
    config = tmp_path / "config.jsonc"
    config.write_text(
        f"{{runs: [{{id: 'a', benchmark: '{bench}', agent: {{adapter: 'http', url: 'http://127.0.0.1:9/x', "
        "headers: {Authorization: '${MARATHON_UNSET_TOKEN}'}}}]}"
    )
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 1 and "MARATHON_UNSET_TOKEN is not set" in result.stderr
    assert not (tmp_path / "recordings").exists()


def test_a_single_run_writes_the_html_report_as_documented(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    config = tmp_path / "config.jsonc"
    run = f"{{id: 'a', benchmark: '{make_benchmark()}', agent: {{adapter: 'reference'}}}}"
    config.write_text(f"{{recordings: 'out', runs: [{run}]}}")
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    html = tmp_path / "out" / "report.html"
    assert f"charts: {html}" in result.stdout and html.read_text().lower().startswith("<!doctype html>")


def test_a_damaged_unfinished_demo_is_refused_then_repaired_and_resumed(tmp_path: Path) -> None:
    log_path = tmp_path / "recordings" / "demo" / EVENTS_FILE
    assert marathon("demo", cwd=tmp_path).returncode == 0
    cut_after(log_path, "reply", 25)  # as if killed mid-run
    data = bytearray(log_path.read_bytes())
    data[int(len(data) * 0.3)] ^= 0x10  # one flipped bit, 30 % in
    log_path.write_bytes(bytes(data))

    refused = marathon("demo", cwd=tmp_path)
    assert refused.returncode == 1 and "intact record(s) follow" in refused.stderr, explain(refused, log_path)
    assert "marathon repair" in refused.stderr and log_path.read_bytes() == bytes(data)
    inspect = marathon("inspect", str(log_path.parent), cwd=tmp_path)
    assert inspect.returncode == 0 and "warning: damaged at byte" in inspect.stdout

    repaired = marathon("repair", str(log_path.parent), cwd=tmp_path)
    assert repaired.returncode == 0 and "kept " in repaired.stdout, repaired.stderr
    (aside,) = log_path.parent.glob("events.damaged-*.msgpack")
    assert aside.read_bytes() == bytes(data)

    resumed = marathon("demo", cwd=tmp_path)
    assert resumed.returncode == 0 and "graded 15/15" in resumed.stdout, explain(resumed, log_path)
    evaluations = [e for e in read_log(log_path).events if isinstance(e, Evaluation)]
    assert sorted(Counter(e.question_id for e in evaluations).values()) == [1] * 15


def test_a_run_that_fails_in_its_first_minutes_suggests_the_probe(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    config = tmp_path / "config.jsonc"
    config.write_text(
        f'{{ runs: [ {{ id: "dead", benchmark: "{make_benchmark()}", '
        'agent: { adapter: "http", url: "http://127.0.0.1:9/chat", retries: 0 } } ] }'
    )
    result = marathon("run", str(config), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "hint: it failed early — `marathon probe CONFIG --only dead`" in result.stdout


def test_ctrl_c_after_stdouts_reader_is_gone_still_says_the_summary(tmp_path: Path) -> None:
    """Issue 47 item 6: `marathon run … | tee log`, then Ctrl-C: tee dies with the run, and the
    summary hit the closed pipe — exit 141, nothing said. The rest goes to stderr instead."""
    proc = demo_until(tmp_path, 30)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone, as tee is after Ctrl-C
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "[demo] interrupted" in err and "run the same command again to resume" in err, err
    assert "Traceback" not in err and "BrokenPipeError" not in err
