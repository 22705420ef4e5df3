"""Checkpoints taken and restored (gateway/run/checkpoints.py, restore.py): a restore is
bounded, checked before it writes, and leaves the checkpoint's state or nothing."""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import tarfile
from pathlib import Path

import pytest

from adapters.state_folder import NO_RULES, StateRules, folder_hash
from gateway.run.checkpoints import CheckpointError, SavedCheckpoint, archive_state
from gateway.run.restore import RestoreRefused, restore_state


def _crafted(tmp_path: Path, files: list[tuple[str, bytes]], **recorded: int) -> SavedCheckpoint:
    archive = tmp_path / "crafted.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    return SavedCheckpoint("p", "exam", 5, "x" * 64, archive, digest, archive.stat().st_size, **recorded)


def _taken(tmp_path: Path, rules: StateRules = NO_RULES) -> tuple[SavedCheckpoint, Path]:
    state = tmp_path / "agent-state"
    (state / "memory").mkdir(parents=True, exist_ok=True)
    (state / "memory" / "notes.md").write_text("Miso is 5\n")
    (state / ".env").write_text("API_KEY=sk-the-agents-own\n")
    event = archive_state(state, tmp_path, "exam", rules)
    return SavedCheckpoint.logged("p", tmp_path, event), state


def test_a_checkpoint_restores_to_its_hash_and_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    checkpoint, state = _taken(tmp_path)
    mode = stat.S_IMODE(checkpoint.archive.stat().st_mode)
    assert mode == 0o600 and stat.S_IMODE(checkpoint.archive.parent.stat().st_mode) == 0o700
    assert checkpoint.state_bytes == len("Miso is 5\n") + len("API_KEY=sk-the-agents-own\n")
    assert checkpoint.members == 3  # .env, memory/, memory/notes.md
    (state / "memory" / "notes.md").write_text("changed since")
    fork = tmp_path / "fork-state"
    assert restore_state(checkpoint, fork) == checkpoint.state_hash
    assert (fork / "memory" / "notes.md").read_text() == "Miso is 5\n"


def test_an_archive_that_writes_outside_or_changed_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    evil = _crafted(tmp_path, [("../outside.txt", b"owned"), ("/etc/x", b"abs")])
    with pytest.raises(RestoreRefused) as caught:
        restore_state(evil, tmp_path / "state")
    assert len(caught.value.problems) == 2 and "not a path inside the state folder" in str(caught.value)
    assert not (tmp_path / "outside.txt").exists() and not (tmp_path / "state").exists()
    changed = SavedCheckpoint("p", "exam", 5, "x", evil.archive, "0" * 64, 1)
    with pytest.raises(CheckpointError, match="changed since it was taken"):
        restore_state(changed, tmp_path / "state")


def test_a_crafted_archive_can_not_write_more_than_its_checkpoint_recorded(tmp_path: Path) -> None:
    """A small archive that expands to far more than the checkpoint recorded: refused while its
    member list is read, before a byte lands; the state folder it would have replaced is kept."""
    bomb = _crafted(tmp_path, [("a", b"\0" * (20 << 20)), ("b", b"\0" * (20 << 20))], state_bytes=1000, members=2)
    assert bomb.bytes < 200_000
    state = tmp_path / "state"
    state.mkdir()
    (state / "keep.txt").write_text("the fork's folder before the restore")
    with pytest.raises(RestoreRefused, match="more than the 1,000 bytes its checkpoint recorded"):
        restore_state(bomb, state)
    assert [p.name for p in state.iterdir()] == ["keep.txt"]  # nothing written, nothing lost
    many = _crafted(tmp_path, [(f"f{i}", b"") for i in range(50)], state_bytes=1, members=10)
    with pytest.raises(RestoreRefused, match="more than the 10 files"):
        restore_state(many, state)


def test_a_member_1500_folders_deep_is_refused_with_a_reason_not_a_recursion_error(tmp_path: Path) -> None:
    deep = _crafted(tmp_path, [("/".join(["d"] * 1500) + "/f", b"x")])
    with pytest.raises(RestoreRefused, match="1501 folders deep"):
        restore_state(deep, tmp_path / "state")
    assert not (tmp_path / "state").exists()


def test_a_restore_whose_hash_differs_leaves_no_half_state_behind(tmp_path: Path) -> None:
    wrong = _crafted(tmp_path, [("memory/notes.md", b"not what was logged")])
    with pytest.raises(RestoreRefused, match=r"hashes .*, not the logged"):
        restore_state(wrong, tmp_path / "state")
    assert not (tmp_path / "state").exists()


def test_links_into_the_agents_install_are_restored_as_they_were(tmp_path: Path) -> None:
    install = tmp_path / "node_modules" / "openclaw"
    (install / "dist" / "skills" / "web").mkdir(parents=True)
    rules = StateRules(links_into=(install,))
    state = tmp_path / "agent-state"
    (state / "plugin-skills").mkdir(parents=True)
    os.symlink(install / "dist" / "skills" / "web", state / "plugin-skills" / "web")
    os.symlink("plugin-skills/web", state / "web")
    checkpoint = SavedCheckpoint.logged("p", tmp_path, archive_state(state, tmp_path, "exam", rules))
    fork = tmp_path / "fork"
    assert restore_state(checkpoint, fork, rules) == checkpoint.state_hash == folder_hash(state, rules)
    assert os.readlink(fork / "plugin-skills" / "web") == str(install / "dist" / "skills" / "web")
    assert os.readlink(fork / "web") == "plugin-skills/web"
    with pytest.raises(RestoreRefused, match="outside the state folder"):  # another profile's rules
        restore_state(checkpoint, tmp_path / "other", StateRules())


def test_a_link_out_of_the_state_folder_is_refused_when_the_checkpoint_is_taken(tmp_path: Path) -> None:
    state = tmp_path / "agent-state"
    state.mkdir()
    os.symlink("/etc/passwd", state / "passwd")
    with pytest.raises(CheckpointError, match="passwd is a link to /etc/passwd, outside the state folder"):
        archive_state(state, tmp_path, "exam")
    assert not (tmp_path / "checkpoints" / "exam.tar.gz").exists()


def test_what_is_not_state_is_left_out_of_the_archive(tmp_path: Path) -> None:
    rules = StateRules(not_state=("cache", "tmp"))
    state = tmp_path / "agent-state"
    (state / "cache" / "control-ui-assets").mkdir(parents=True)
    (state / "cache" / "control-ui-assets" / "app.js").write_bytes(b"x" * 100_000)
    (state / "tmp").mkdir()
    (state / "tmp" / "compile").write_bytes(b"y" * 100_000)
    checkpoint, _ = _taken(tmp_path, rules)
    with tarfile.open(checkpoint.archive) as tar:
        assert sorted(tar.getnames()) == [".env", "memory", "memory/notes.md"]
    fork = tmp_path / "fork"
    assert restore_state(checkpoint, fork, rules) == checkpoint.state_hash
    assert not (fork / "cache").exists()


def _with_links(tmp_path: Path, members: list[tuple[str, str | bytes]]) -> SavedCheckpoint:
    """An archive of links (a str: the target) and files (bytes), in order."""
    archive = tmp_path / "links.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, value in members:
            info = tarfile.TarInfo(name)
            if isinstance(value, str):
                info.type, info.linkname = tarfile.SYMTYPE, value
                tar.addfile(info)
            else:
                info.size = len(value)
                tar.addfile(info, io.BytesIO(value))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    return SavedCheckpoint("p", "exam", 5, "x" * 64, archive, digest, archive.stat().st_size)


@pytest.mark.parametrize(
    "members",
    [
        [("b", "."), ("d/", "b/.."), ("d/pwned", b"owned")],  # a link named with a slash, then a file through it
        [("b", "."), ("a", "b/.."), ("a/pwned", b"owned")],  # a relative link leaving through another link
        [("b", "."), ("a", "b/..")],  # the same link, no file: the agent would reach out through it
        [("x", "y"), ("y", "x")],  # links that loop
    ],
    ids=["slash-named-link", "link-through-link", "escaping-link", "loop"],
)
def test_links_that_leave_the_state_folder_through_each_other_are_refused(
    tmp_path: Path, members: list[tuple[str, str | bytes]]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(RestoreRefused):
        restore_state(_with_links(tmp_path, members), run / "state")
    assert not (run / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_a_link_leaving_through_another_is_refused_when_the_checkpoint_is_taken(tmp_path: Path) -> None:
    state = tmp_path / "agent-state"
    state.mkdir()
    os.symlink(".", state / "b")
    os.symlink("b/..", state / "a")
    with pytest.raises(CheckpointError, match=re.escape("a is a link to b/.., which leaves the state folder")):
        archive_state(state, tmp_path, "exam")


def test_a_checkpoint_restores_after_its_profile_named_more_caches(tmp_path: Path) -> None:
    """Hashed as it was taken: a checkpoint from before `not_state` named `cache` still restores."""
    state = tmp_path / "agent-state"
    (state / "cache").mkdir(parents=True)
    (state / "cache" / "ui.js").write_text("x")
    (state / "notes.md").write_text("Miso")
    checkpoint = SavedCheckpoint.logged("p", tmp_path, archive_state(state, tmp_path, "exam"))
    assert restore_state(checkpoint, tmp_path / "fork", StateRules(not_state=("cache",))) == checkpoint.state_hash


LATIN1 = os.fsdecode(b"caf\xe9.md")  # a name the OS allows that is not UTF-8 (a lone surrogate in Python)


def test_a_name_that_is_not_utf8_survives_checkpoint_and_restore(tmp_path: Path) -> None:
    """Issue 59: `café.md` written in Latin-1 killed the checkpoint with a raw codec error, and
    every fork after it ("run 't' has no checkpoint")."""
    state = tmp_path / "agent-state"
    (state / LATIN1).parent.mkdir(parents=True)
    (state / LATIN1).write_text("Miso is 5\n")
    (state / os.fsdecode(b"d\xefr")).mkdir()
    (state / "link").symlink_to(LATIN1)  # a link whose target is such a name
    event = archive_state(state, tmp_path, "exam")
    assert event.state_hash == folder_hash(state)
    saved = SavedCheckpoint.logged("p", tmp_path, event)
    (state / LATIN1).write_text("changed\n")
    assert restore_state(saved, state) == event.state_hash
    assert sorted(os.listdir(os.fsencode(state))) == [b"caf\xe9.md", b"d\xefr", b"link"]
    assert os.readlink(os.fsencode(state / "link")) == b"caf\xe9.md"


def test_a_refused_restore_of_non_utf8_names_leaves_nothing_and_says_why_in_text(tmp_path: Path) -> None:
    """A crafted archive with such names whose hash differs: what it wrote is removed, and the
    refusal is text a log and a terminal can hold (the name escaped, not a codec error)."""
    wrong = _crafted(tmp_path, [(LATIN1, b"one"), (os.fsdecode(b"memory/\xff.md"), b"two")])
    with pytest.raises(RestoreRefused, match=r"hashes .*, not the logged") as refused:
        restore_state(wrong, tmp_path / "state")
    assert not (tmp_path / "state").exists()
    str(refused.value).encode("utf-8")  # strict: no lone surrogate in the message


def test_a_refusal_naming_a_non_utf8_file_is_printable_text(tmp_path: Path) -> None:
    state = tmp_path / "agent-state"
    state.mkdir()
    (state / LATIN1).symlink_to("/etc/passwd")  # a link out: refused, the link's name in the message
    with pytest.raises(CheckpointError) as refused:
        archive_state(state, tmp_path, "exam")
    assert "caf\\xe9.md" in str(refused.value)
    str(refused.value).encode("utf-8")
