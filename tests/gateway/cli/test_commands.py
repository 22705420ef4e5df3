"""Every `marathon` subcommand run as the docs show it, from the CLI entry point (a real
process); and every long-running one stopped by SIGTERM or SIGHUP however it was started —
also as a script's background job, which inherits SIGINT ignored."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gateway.log.events import Evaluation, Replied, RunEnded, Said
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.run_cards import INDEX_FILE
from tests.conftest import BenchFactory
from tests.marathon_cli import count_records, explain, marathon, spawn_marathon

NO_KEYS = {"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "", "OPENAI_API_KEY": ""}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished `marathon demo`, as the quickstart starts it."""
    cwd = tmp_path_factory.mktemp("demo")
    result = marathon("demo", cwd=cwd)
    assert result.returncode == 0, result.stdout + result.stderr
    return cwd / "recordings" / "demo"


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that takes connections and never answers: an agent stuck on its model."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield listener.getsockname()[1]


def config_with(tmp_path: Path, bench: Path, agent: dict[str, object], recordings: str = "out") -> Path:
    config = tmp_path / "config.jsonc"
    config.write_text(
        json.dumps({"recordings": recordings, "runs": [{"id": "r", "benchmark": str(bench), "agent": agent}]})
    )
    return config


# ---- chat -----------------------------------------------------------------------------------


def test_chat_with_a_profile_as_the_docs_type_it(tmp_path: Path) -> None:
    """`printf 'hi\\n' | marathon chat --agent reference`"""
    result = marathon("chat", "--agent", "reference", cwd=tmp_path, stdin="hi\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "agent> " in result.stdout and "offline rule-based model stand-in" in result.stdout
    (run_dir,) = (tmp_path / "recordings").glob("chat-*")
    log = read_log(run_dir / EVENTS_FILE)
    assert [e.text for e in log.events if isinstance(e, Said)] == ["hi"]
    assert len([e for e in log.events if isinstance(e, Replied)]) == 1
    assert [e.reason for e in log.events if isinstance(e, RunEnded)] == ["completed"]


def test_chat_with_a_configs_run_and_a_setting_changed(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    """`marathon chat --config FILE --only ID --set KEY=VALUE`: the config's agent, its
    recordings folder unless --recordings says otherwise."""
    config = config_with(tmp_path, make_benchmark(), {"adapter": "reference", "context_tokens": 400})
    result = marathon(
        "chat",
        "--config",
        str(config),
        "--only",
        "r",
        "--set",
        "context_tokens=900",
        cwd=tmp_path,
        stdin="hi\n\n",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (run_dir,) = (tmp_path / "out").glob("chat-*")
    assert read_log(run_dir / EVENTS_FILE).header.agent["context_tokens"] == 900
    elsewhere = marathon(
        "chat", "--config", str(config), "--only", "r", "--recordings", "mine", cwd=tmp_path, stdin="hi\n"
    )
    assert elsewhere.returncode == 0 and len(list((tmp_path / "mine").glob("chat-*"))) == 1, elsewhere.stderr
    unclear = marathon("chat", cwd=tmp_path, stdin="")
    assert unclear.returncode == 2 and "give --agent PROFILE, or a config" in unclear.stderr


def test_probe_records_where_recordings_says(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    """`marathon probe CONFIG --only ID --recordings DIR` writes under DIR, not the config's folder."""
    config = config_with(tmp_path, make_benchmark(), {"adapter": "reference", "context_tokens": 400})
    result = marathon("probe", str(config), "--only", "r", "--recordings", "probes", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(list((tmp_path / "probes").glob("probe-*"))) == 1
    assert not (tmp_path / "out").exists()


# ---- grading commands -------------------------------------------------------------------------


def test_rescore_and_judge_check_as_the_docs_show_them(demo_run: Path) -> None:
    """`marathon rescore RUN --grader exact`, `marathon judge-check --grader exact`"""
    rescored = marathon("rescore", str(demo_run), "--grader", "exact", cwd=demo_run.parent.parent)
    assert rescored.returncode == 0, rescored.stderr
    assert "exact: re-graded 15 questions" in rescored.stdout and (demo_run / "rescore-exact.md").is_file()
    checked = marathon("judge-check", "--grader", "exact", cwd=demo_run.parent.parent)
    assert checked.returncode == 0, checked.stderr
    assert re.search(
        r"^  all +\d+ answers: certain \d+ \(coverage \d+%\), right when certain \d+%", checked.stdout, re.M
    )
    assert re.search(r"never-told, read by exact \(ru\): recall \d+% of \d+ claims", checked.stdout)


def test_an_llm_judge_without_a_key_is_refused_before_grading(demo_run: Path) -> None:
    result = marathon(
        "rescore", str(demo_run), "--grader", "anthropic:some-model", cwd=demo_run.parent, env=NO_KEYS
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "the judge anthropic:some-model" in result.stderr and "ANTHROPIC_API_KEY" in result.stderr


def test_state_says_which_messages_it_lists(demo_run: Path) -> None:
    result = marathon("state", str(demo_run), cwd=demo_run.parent)
    assert result.returncode == 0, result.stderr
    total = int(re.search(r"persona messages: (\d+)", result.stdout).group(1))  # type: ignore[union-attr]
    assert f"the last 3 persona messages (all {total}: marathon state {demo_run} --json):" in result.stdout


# ---- an LLM persona's key, a resume with another persona --------------------------------------------


def test_a_demo_with_an_llm_persona_and_no_key_says_so_before_starting(tmp_path: Path) -> None:
    result = marathon("demo", "--persona", "anthropic:claude-x", cwd=tmp_path, env=NO_KEYS)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "needs a key: set ANTHROPIC_API_KEY" in result.stderr
    assert "no network, no key" not in result.stdout
    assert not (tmp_path / "recordings").exists()  # nothing started, nothing to resume


def test_a_resume_with_another_persona_is_refused(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    agent = {"adapter": "http", "url": "http://127.0.0.1:9/chat", "retries": 0}  # fails at once: resumable
    config = config_with(tmp_path, make_benchmark(), agent)
    first = marathon("run", str(config), cwd=tmp_path)
    log_path = tmp_path / "out" / "r" / EVENTS_FILE
    assert first.returncode == 1 and "agent_failed" in first.stdout, explain(first, log_path)
    records = count_records(log_path)
    other = marathon("run", str(config), "--persona", "openai:http://127.0.0.1:9/v1#m", cwd=tmp_path)
    assert other.returncode == 1 and "Traceback" not in other.stderr
    assert (
        "this run was started with the persona scripted, not openai:http://127.0.0.1:9/v1#m" in other.stderr
    )
    assert "--fresh" in other.stderr
    assert count_records(log_path) == records  # the log is untouched


# ---- stopping: SIGTERM and SIGHUP, also with SIGINT ignored -------------------------------------------

type Ready = Callable[[Path, str], bool]


def _has_records(n: int, log: str) -> Ready:
    def ready(cwd: Path, out: str) -> bool:
        return any(count_records(p) >= n for p in cwd.glob(log))

    return ready


def _printed(text: str) -> Ready:
    return lambda cwd, out: text in out


# command, what it needs, how to tell it is under way, the exit code and words of a clean stop
STOPPABLE: dict[str, tuple[Ready, int, str]] = {
    "run": (_has_records(4, f"out/r/{EVENTS_FILE}"), 130, "run the same command again to resume"),
    "demo": (_has_records(12, f"recordings/demo/{EVENTS_FILE}"), 130, "run the same command again to resume"),
    "view": (_printed("viewer: http://"), 0, "viewer: stopped"),
    "proxy": (_printed("point the agent's LLM base URL at"), 0, "stopped after 0 LLM calls"),
    "chat": (_printed("chatting with"), 130, "chat: stopped"),
    "probe": (_printed("probing:"), 130, "probe: stopped"),
}


def _arguments(command: str, config: Path) -> list[str]:
    return {
        "run": ["run", str(config)],
        "demo": ["demo"],
        "view": ["view", "--port", "0"],
        "proxy": ["proxy", "--upstream", "http://127.0.0.1:9"],
        "chat": ["chat", "--config", str(config), "--only", "r"],
        "probe": ["probe", str(config), "--only", "r"],
    }[command]


@pytest.mark.parametrize(
    ("command", "sig"),
    [(c, signal.SIGTERM) for c in STOPPABLE] + [("run", signal.SIGHUP), ("view", signal.SIGHUP)],
)
def test_a_stop_signal_ends_a_command_started_with_sigint_ignored(
    make_benchmark: BenchFactory, tmp_path: Path, silent_port: int, command: str, sig: signal.Signals
) -> None:
    agent = {"adapter": "http", "url": f"http://127.0.0.1:{silent_port}/chat", "timeout": 120}
    config = config_with(tmp_path, make_benchmark(), agent)
    (tmp_path / "recordings").mkdir()  # what `marathon view` shows
    ready, code, words = STOPPABLE[command]
    out_path = tmp_path / "stdout.txt"
    with out_path.open("w") as out:
        proc = spawn_marathon(
            *_arguments(command, config),
            cwd=tmp_path,
            stdout=out.fileno(),
            stdin=subprocess.PIPE,
            sigint_ignored=True,
        )
    try:
        deadline = time.monotonic() + 60
        while (
            not ready(tmp_path, out_path.read_text()) and proc.poll() is None and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        assert proc.poll() is None, f"{command} ended before the signal: {out_path.read_text()}"
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`marathon {command}` carried on after {sig.name} (SIGINT ignored)")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = out_path.read_text() + err
    assert proc.returncode == code and "Traceback" not in err, said
    assert words in said, said
    ended = {
        "run": (f"out/r/{EVENTS_FILE}", "interrupted"),  # the same command resumes it
        "demo": (f"recordings/demo/{EVENTS_FILE}", "interrupted"),
        "chat": (f"out/chat-*/{EVENTS_FILE}", "interrupted"),
        "proxy": (f"recordings/proxy-*/{EVENTS_FILE}", "completed"),  # stopped on purpose: nothing to resume
    }
    if command in ended:
        pattern, reason = ended[command]
        (log_path,) = tmp_path.glob(pattern)
        assert [e.reason for e in read_log(log_path).events if isinstance(e, RunEnded)] == [reason]
    if command == "demo":
        again = marathon("demo", cwd=tmp_path)
        log = read_log(tmp_path / "recordings" / "demo" / EVENTS_FILE)
        assert again.returncode == 0 and "resuming the unfinished demo run" in again.stdout, again.stderr
        assert len([e for e in log.events if isinstance(e, Evaluation)]) == 15


def test_judge_check_on_your_own_set(tmp_path: Path) -> None:
    """`marathon judge-check --grader G --set FILE.jsonl [--json] [--items]`"""
    own = tmp_path / "mine.jsonl"
    own.write_text(
        '{"language": "en", "question": "What is my cat called?", "expected": "Miso", "answer": "Miso.", "gold": 10}\n'
        '{"language": "en", "question": "What is my cat called?", "expected": "Miso", "answer": "Mochi.", "gold": 0}\n'
        '{"language": "en", "question": "Dog?", "reply": "You never told me about a dog.", "never_told": true}\n'
    )
    progress = {"MARATHON_PROGRESS_AFTER": "0"}  # show the count from the first item (issue 47)
    result = marathon("judge-check", "--grader", "exact", "--set", str(own), "--json", cwd=tmp_path, env=progress)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == ["judging with exact 1/3 (mine.jsonl:1)", "judging with exact 3/3 (mine.jsonl:3)"] + [
        line for line in result.stderr.splitlines() if line.startswith("judging with exact: done, 3/3 in ")
    ], result.stderr  # on stderr: stdout is still the JSON alone
    figures = json.loads(result.stdout)
    assert figures["items"] == 2 and figures["accuracy_certain"] == 1.0 and figures["coverage"] == 1.0
    assert figures["never_told"]["en"]["recall"] == 1.0
    audited = marathon("judge-check", "--grader", "exact", "--set", str(own), "--items", cwd=tmp_path)
    assert audited.returncode == 0, audited.stderr
    assert (
        "mine.jsonl:2 en What is my cat called? answer, gold 0: 0 → right [verdict.missing] (missing 'Miso'): 'Mochi.'"
        in audited.stdout
    )
    # every certain verdict names the rule that decided it (issue 61)
    listed = json.loads(marathon("judge-check", "--set", str(own), "--json", "--items", cwd=tmp_path).stdout)
    answers = [v for v in listed["verdicts"] if v["kind"] == "answer"]
    assert answers and all(v["decided_by"] for v in answers if v["certain"]), answers
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"language": "en", "question": "Q", "expected": "x", "answer": "x", "gold": 11}\n')
    refused = marathon("judge-check", "--set", str(bad), cwd=tmp_path)
    assert refused.returncode == 2 and f"{bad}:1:" in refused.stderr and "0–10" in refused.stderr
    one = tmp_path / "one.jsonl"
    one.write_text(own.read_text().splitlines()[0] + "\n")
    unreachable = marathon(
        "judge-check",
        "--grader",
        "openai:http://127.0.0.1:9/v1#m",
        "--set",
        str(one),
        cwd=tmp_path,
        env=NO_KEYS,
    )
    assert unreachable.returncode == 1 and "Traceback" not in unreachable.stderr
    assert "unscored: one.jsonl:1: judge call failed" in unreachable.stdout


def test_the_reference_agent_on_a_real_model_without_a_key_is_refused_before_starting(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    agent = {"adapter": "reference", "model_base_url": "https://api.anthropic.com", "model": "claude-x"}
    config = config_with(tmp_path, make_benchmark(), agent)
    result = marathon("run", str(config), cwd=tmp_path, env=NO_KEYS)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "needs its model's API key in $ANTHROPIC_API_KEY" in result.stderr
    assert not (tmp_path / "out").exists()


def test_ctrl_c_in_report_says_what_it_left_not_to_resume(tmp_path: Path) -> None:
    """`report` stopped by Ctrl-C printed "the run log is intact — run the same command again
    to resume": there is nothing to resume. It says the logs are untouched and that no report
    was left half-written."""
    assert marathon("demo", cwd=tmp_path).returncode == 0
    recordings = tmp_path / "recordings"
    for written in [p for p in recordings.iterdir() if p.is_file()]:  # what the demo's end wrote
        written.unlink()
    data = (recordings / "demo" / EVENTS_FILE).read_bytes()
    for n in range(150):  # enough runs to be reading them still when Ctrl-C comes
        (recordings / f"copy{n:03d}").mkdir()
        (recordings / f"copy{n:03d}" / EVENTS_FILE).write_bytes(data)
    proc = spawn_marathon("report", str(recordings), cwd=tmp_path)
    time.sleep(1.5)
    assert proc.poll() is None, "the report ended before Ctrl-C"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted; the run logs are untouched and no report was half-written" in err
    assert "resume" not in err and "Traceback" not in err
    # nothing half-written: no .partial; what a fast machine wrote before the signal (the run-cards
    # cache, matrix.md) is whole, each file written whole or not at all
    left = [p for p in recordings.iterdir() if p.is_file()]
    assert not [p.name for p in left if p.name.endswith(".partial")]
    assert {p.name for p in left} <= {INDEX_FILE, "matrix.md"}, [p.name for p in left]
    for written in left:
        text = written.read_text(encoding="utf-8")
        if written.name == INDEX_FILE:
            assert json.loads(text)["runs"] is not None
        else:
            assert text.endswith("\n"), text[-200:]
    assert (recordings / "demo" / EVENTS_FILE).read_bytes() == data


def test_a_misspelt_setting_in_probe_set_is_refused_naming_the_nearest(tmp_path: Path) -> None:
    """Issue 47 item 1: `probe --set contxt_tokens=400` probed on the default window."""
    result = marathon("probe", "--agent", "reference", "--set", "contxt_tokens=400", cwd=tmp_path)
    assert result.returncode == 1
    assert "unknown key `contxt_tokens` (did you mean `context_tokens`?" in result.stderr
    assert not (tmp_path / "recordings").exists()  # refused before anything was started


def test_probe_says_what_is_wrong_with_the_run_it_was_given(tmp_path: Path) -> None:
    """Issue 47 item 6: `--only nope` said "pick one run with --only" when one was picked; a
    missing absolute benchmark path's fix said "paths are relative to …"."""
    missing = tmp_path / "no-such-benchmark"
    config = config_with(tmp_path, missing, {"adapter": "reference", "context_tokens": 400})
    nope = marathon("probe", str(config), "--only", "nope", cwd=tmp_path)
    assert nope.returncode == 2 and "the config has no run 'nope' (its runs: r)" in nope.stderr
    probed = marathon("probe", str(config), "--only", "r", cwd=tmp_path)
    assert probed.returncode == 1
    assert f"fix: `benchmark` is the absolute path {missing}" in probed.stdout
    assert "paths are relative to" not in probed.stdout


def test_chat_prompts_a_person_at_a_terminal_and_keeps_help_to_itself(tmp_path: Path) -> None:
    """Issue 47 item 5: `marathon chat` showed no input prompt and sent `/help` to the agent."""
    import os
    import subprocess
    import sys

    from tests.marathon_cli import MARATHON_ENV

    piped = marathon("chat", "--agent", "reference", cwd=tmp_path, stdin="/help\nhi\n\n")
    assert piped.returncode == 0, piped.stderr
    assert "/new-session   start a new session" in piped.stdout and "you> " not in piped.stdout  # a pipe: no prompt
    (run_dir,) = (tmp_path / "recordings").glob("chat-*")
    assert [e.text for e in read_log(run_dir / EVENTS_FILE).events if isinstance(e, Said)] == ["hi"]
    main, terminal = os.openpty()  # a person at a terminal
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "chat", "--agent", "reference", "--recordings", "tty"],
            cwd=tmp_path, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=MARATHON_ENV,
        )  # fmt: skip
        os.write(main, b"hi\n\n")
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(main)
        os.close(terminal)
    assert proc.returncode == 0, err
    assert out.count("you> ") >= 2 and "agent> " in out, out


def test_ctrl_c_stops_judge_check_while_it_grades(tmp_path: Path) -> None:
    """The offline grader never waits on anything: judge-check yields now and then, so Ctrl-C
    stops it mid-set (it used to grade all 5,538 items first)."""
    proc = spawn_marathon("judge-check", cwd=tmp_path)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # its first progress line (after 2 s): under way
        assert first.startswith("judging with exact"), first
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)  # the whole check takes 30 s or more
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert "done," not in err and not out.strip(), err
