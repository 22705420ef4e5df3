"""The state folder's hash and rules (adapters/state_folder.py): what a checkpoint keeps."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from adapters.state_folder import StateRules, folder_hash, state_problems


def _hash_before_links_were_known(folder: Path) -> str:
    """The hash every checkpoint logged before links and `not_state` existed."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def test_a_folder_without_links_hashes_as_older_checkpoints_logged_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    for rel, text in {"a-b/x": "1", "a/b/c.txt": "2", "a/b.md": "3", "a.b": "4", "z/.env": "5"}.items():
        (state / rel).parent.mkdir(parents=True, exist_ok=True)
        (state / rel).write_text(text)
    (state / "empty").mkdir()
    assert folder_hash(state) == _hash_before_links_were_known(state)


def test_what_the_profile_says_is_not_state_leaves_the_hash_alone(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "memory").mkdir(parents=True)
    (state / "memory" / "notes.md").write_text("Miso is 5\n")
    before = folder_hash(state, StateRules(not_state=("cache", "tmp/")))
    (state / "cache" / "assets").mkdir(parents=True)
    (state / "cache" / "assets" / "big.bin").write_bytes(b"x" * 1000)
    (state / "tmp").mkdir()
    (state / "tmp" / "lock").write_text("1")
    assert folder_hash(state, StateRules(not_state=("cache", "tmp/"))) == before
    assert folder_hash(state) != before  # without the rule they are state


def test_a_link_counts_as_its_target_and_only_named_places_may_be_linked(tmp_path: Path) -> None:
    install, state = tmp_path / "install", tmp_path / "state"
    (install / "dist" / "skills").mkdir(parents=True)
    (state / "memory").mkdir(parents=True)
    (state / "memory" / "notes.md").write_text("hi")
    os.symlink(install / "dist" / "skills", state / "plugin-skills")
    os.symlink("memory/notes.md", state / "latest.md")  # relative, inside: always kept
    os.symlink("../../elsewhere", state / "memory" / "out")  # relative, leaves the folder
    problems = state_problems(state, StateRules())
    assert len(problems) == 2
    assert any("plugin-skills is a link to" in p and "none named by the profile" in p for p in problems)
    assert any("memory/out is a link to ../../elsewhere, which leaves the state folder" in p for p in problems)
    (state / "memory" / "out").unlink()
    assert state_problems(state, StateRules(links_into=(install,))) == []
    first = folder_hash(state, StateRules(links_into=(install,)))
    (install / "dist" / "skills" / "new.md").write_text("the install changed")  # not state: not hashed
    assert folder_hash(state, StateRules(links_into=(install,))) == first


def test_a_folder_deeper_than_a_restore_allows_is_named_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    deep = state.joinpath(*["d"] * 200)
    deep.mkdir(parents=True)
    (deep / "f").write_text("x")
    problems = state_problems(state, StateRules())
    assert len(problems) == 1 and "201 folders deep" in problems[0]


def test_a_profile_names_its_install_and_what_is_not_state(tmp_path: Path) -> None:
    """`process.links_into: ["${AGENT_INSTALL}"]` is the folder the agent's program really is in
    (links resolved), and `not_state` paths inside the state folder only."""
    import sys

    import pytest

    from adapters.base import AdapterConfigError
    from adapters.lifecycle import AgentProcess

    settings = {"command": [sys.executable, "agent.py"], "links_into": ["${AGENT_INSTALL}"], "not_state": ["cache"]}
    process = AgentProcess(settings, tmp_path, {})
    assert process.rules.links_into == (Path(os.path.realpath(sys.executable)).parent,)
    assert process.rules.excludes("cache/ui/app.js") and not process.rules.excludes("cached.md")
    with pytest.raises(AdapterConfigError, match="not a path inside the state folder"):
        AgentProcess({**settings, "not_state": ["../elsewhere"]}, tmp_path, {})


def test_a_socket_in_the_state_folder_is_a_running_agents_not_state(tmp_path: Path) -> None:
    import socket

    state = tmp_path / "s"
    state.mkdir()
    (state / "notes.md").write_text("x")
    before = folder_hash(state)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(state / "agent.sock"))
        assert folder_hash(state) == before and state_problems(state, StateRules()) == []
