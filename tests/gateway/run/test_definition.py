"""Everything that defines a run is in its header and run line (issue 30 item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.report.recordings import load_run
from gateway.report.run_line import run_line
from gateway.run.config import RunSpec
from gateway.run.definition import files_sha256, run_definition
from gateway.run.runner import run_spec
from tests.conftest import BenchFactory


async def test_a_run_logs_its_limits_rule_persona_and_grader_and_its_run_line_repeats_them(
    tmp_path: Path, make_benchmark: BenchFactory
) -> None:
    limits = {"agent_turns": 50.0}
    await run_spec(RunSpec("d", make_benchmark(), {"adapter": "reference"}, limits=limits), tmp_path)
    defines = read_log(tmp_path / "d" / EVENTS_FILE).header.defines
    assert defines["limits"] == limits and defines["correct_rule"] == "first_try"
    assert defines["persona"]["driver"] == "scripted" and defines["grader"]["name"] == "exact"
    assert defines["judge"] == {}  # the scripted persona grades with the exact grader alone
    assert run_line(load_run(tmp_path / "d")).defines == defines


def test_an_llm_persona_and_judge_are_named_with_the_hashes_of_their_prompt_and_rubrics(
    tmp_path: Path,
) -> None:
    defined = run_definition({"driver": "anthropic:claude-x", "grading": {"judge": "openai:http://h#m"}}, {})
    assert defined["persona"]["model"] == "claude-x" and len(defined["persona"]["prompt_sha256"]) == 64
    assert defined["judge"]["name"] == "openai:http://h#m" and len(defined["judge"]["rubrics_sha256"]) == 64
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "system.md").write_text("one")
    before = files_sha256(folder)
    other = tmp_path / "prompts2"
    other.mkdir()
    (other / "system.md").write_text("two")
    assert before != files_sha256(other) and json.dumps(defined)


def test_the_agent_s_version_is_what_its_own_program_says(tmp_path: Path) -> None:
    import sys

    from gateway.run.definition import agent_version

    script = tmp_path / "agent"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nprint('fake-agent 9.9.1' if '--version' in sys.argv else 'no')\n"
    )
    script.chmod(0o755)
    assert (
        agent_version({"adapter": "http", "url": "http://x", "process": {"command": [str(script)]}})
        == "fake-agent 9.9.1"
    )
    assert agent_version({"adapter": "http", "url": "http://x"}).startswith("unknown")
    assert agent_version({"adapter": "reference"}).startswith("reference agent of marathonbench")


def test_an_agent_whose_program_says_no_version_is_known_by_its_python_package(tmp_path: Path) -> None:
    """Letta 0.11.7's `letta` has no --version ("exited 2": its runs' headers said unknown): a
    profile names its package, read with the Python its program's first line names."""
    import sys
    from importlib.metadata import version

    from gateway.run.definition import agent_version

    program = tmp_path / "agent"
    program.write_text(f"#!{sys.executable}\nimport sys; sys.exit(2)\n")
    program.chmod(0o755)
    settings = {"adapter": "http", "process": {"command": [str(program)], "version_package": "json5"}}
    assert agent_version(settings) == f"json5 {version('json5')}"
    missing = {"adapter": "http", "process": {"command": [str(program)], "version_package": "no-such-package"}}
    assert agent_version(missing).startswith("unknown (no package no-such-package")
    assert agent_version({"adapter": "http", "process": {"command": [str(program)]}}) == (
        f"unknown ({program} --version exited 2)"
    )


def test_the_agent_s_version_is_asked_with_its_own_environment_never_the_user_s_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 58: `hermes --version` wrote `~/.hermes/logs/*` and `.update_check` into the user's
    own HOME. It runs as the agent is started: HOME and the state folder a scratch folder."""
    import sys

    from gateway.run.definition import agent_version

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    script = tmp_path / "agent"
    script.write_text(
        f"#!{sys.executable}\nimport os, pathlib\n"
        "for d in (os.environ['HOME'], os.environ['AGENT_HOME']):\n"
        "    pathlib.Path(d, '.update_check').write_text('x')\n"
        "print('fake-agent 9.9.2', os.environ['AGENT_HOME'] == os.environ['HOME'])\n"
    )
    script.chmod(0o755)
    process = {"command": [str(script)], "env": {"AGENT_HOME": "${STATE_DIR}", "PORT_URL": "http://x:${PORT}"}}
    assert agent_version({"adapter": "http", "url": "http://x", "process": process}) == "fake-agent 9.9.2 True"
    assert list(home.iterdir()) == []
