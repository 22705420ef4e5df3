"""Checkpoints: an agent's whole state folder archived between two settled turns (design §9b).

A checkpoint is part of its run folder: `checkpoints/NAME.tar.gz` (the state folder's files,
paths relative to it) and a `checkpoint` event in the run's log giving the folder's content
hash, the archive's sha256 and the log position (the event's `seq`). The persona's state at
that point is not stored apart: a driver is deterministic given the logged persona turns, so
replaying the log up to the position rebuilds it (as a resumed run does).

What a caller may rely on: an archive is complete or absent (written beside, then renamed),
readable by its owner only, and holds what a restore can put back exactly (checked when it is
taken: adapters/state_folder.py); restoring it (gateway/run/restore.py) is bounded and leaves
either the checkpoint's state or nothing.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path

from adapters.state_folder import NO_RULES, StateRules, folder_hash, state_problems, walk_state
from gateway.log.events import CheckpointSaved, Event

CHECKPOINTS = "checkpoints"  # the folder of a run's checkpoint archives


class CheckpointError(ValueError):
    """A checkpoint can't be taken, found or restored; the message says which and why."""


@dataclass(frozen=True)
class SavedCheckpoint:
    """A checkpoint as its run's log records it."""

    run_id: str
    name: str
    seq: int  # the `checkpoint` event's position in the parent's log
    state_hash: str
    archive: Path
    archive_sha256: str
    bytes: int
    state_bytes: int = 0  # what restoring it writes (0: not recorded, an older log)
    members: int = 0
    left_out: tuple[str, ...] = ()  # what its profile said was not state when it was taken

    @classmethod
    def logged(cls, run_id: str, run_dir: Path, event: CheckpointSaved) -> SavedCheckpoint:
        """The checkpoint a logged `checkpoint` event of run `run_id` (in `run_dir`) records."""
        return cls(
            run_id, event.name, event.seq, event.state_hash, run_dir / event.archive, event.archive_sha256,
            event.bytes, event.state_bytes, event.members, tuple(event.left_out),
        )

    def reference(self) -> dict[str, object]:
        """What a fork's header records of it (`Header.parent`)."""
        return {
            "run": self.run_id,
            "checkpoint": self.name,
            "seq": self.seq,
            "state_hash": self.state_hash,
            "archive_sha256": self.archive_sha256,
        }


def archive_path(run_dir: Path, name: str) -> Path:
    return run_dir / CHECKPOINTS / f"{name}.tar.gz"


def archive_state(state_dir: Path, run_dir: Path, name: str, rules: StateRules = NO_RULES) -> CheckpointSaved:
    """Archive `state_dir` as checkpoint `name` of the run in `run_dir`; returns the event to log
    (its `seq` is stamped when logged). A second checkpoint of the same name replaces the first
    (a resumed run taking it again after a crash between the archive and its log record).

    Refused here (`CheckpointError`), not when a fork starts: a folder holding what a restore
    could not put back as it was (a link out of the folder to a place the profile doesn't name,
    a path deeper than a restore allows, a socket). What `rules.not_state` names is left out of
    the archive and the hash. The archive is readable by its owner only: it holds the agent's
    own secrets (an `.env`, a token file) as they were."""
    if not state_dir.is_dir():
        raise CheckpointError(f"the agent's state folder {state_dir} does not exist: nothing to archive")
    if problems := state_problems(state_dir, rules):
        raise CheckpointError(
            f"checkpoint {name!r} can't keep the state folder {state_dir} as it is: {_listed(problems)}"
        )
    target = archive_path(run_dir, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.parent.chmod(0o700)
    partial = target.with_name(f".{target.name}.partial")
    for _ in range(ARCHIVE_TRIES):
        state_hash = folder_hash(state_dir, rules)
        state_bytes, members = _write_archive(state_dir, partial, rules)
        if archive_state_hash(partial) == state_hash:  # the archive holds the state the log will claim
            break
    else:
        partial.unlink(missing_ok=True)
        raise CheckpointError(
            f"checkpoint {name!r}: the state folder {state_dir} changed while it was archived, {ARCHIVE_TRIES} "
            "times — a process of the agent still writes it after its stop (a worker it started?); "
            "nothing was logged"
        )
    os.replace(partial, target)
    return CheckpointSaved(
        name=name,
        state_hash=state_hash,
        archive=str(target.relative_to(run_dir)),
        archive_sha256=file_sha256(target),
        bytes=target.stat().st_size,
        state_bytes=state_bytes,
        members=members,
        left_out=list(rules.not_state),
    )


ARCHIVE_TRIES = 3  # readings of a folder that keeps changing before the checkpoint is refused


def _write_archive(state_dir: Path, partial: Path, rules: StateRules) -> tuple[int, int]:
    state_bytes = members = 0
    with open(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as raw:
        with tarfile.open(fileobj=raw, mode="w:gz") as tar:
            for entry in walk_state(state_dir, rules):
                tar.add(entry.path, arcname=entry.rel, recursive=False)
                members += 1
                state_bytes += entry.size
        raw.flush()
        os.fsync(raw.fileno())
    return state_bytes, members


def archive_state_hash(archive: Path) -> str:
    """What `folder_hash` gives for the folder the archive holds — each regular file's path and
    content digest, each link's path and target, in path order — read from the archive as a
    stream (one member in memory at a time). A checkpoint's archive must hash to its logged state:
    checked when it is taken, and by `marathon verify`. Raises `tarfile.TarError`, `OSError`."""
    found: dict[str, bytes] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if member.isreg():
                digest = hashlib.sha256()
                source = tar.extractfile(member)
                assert source is not None
                while chunk := source.read(1 << 20):
                    digest.update(chunk)
                found[member.name] = member.name.encode() + b"\0" + digest.digest()
            elif member.islnk() and member.linkname in found:  # a second name of a file archived before
                found[member.name] = member.name.encode() + found[member.linkname][len(member.linkname.encode()) :]
            elif member.issym():
                found[member.name] = member.name.encode() + b"\0link\0" + member.linkname.encode()
    digest = hashlib.sha256()
    for name in sorted(found, key=lambda n: tuple(n.split("/"))):
        digest.update(found[name])
    return digest.hexdigest()


def _listed(problems: list[str], at_most: int = 5) -> str:
    shown = "; ".join(problems[:at_most])
    return shown + (f"; and {len(problems) - at_most} more" if len(problems) > at_most else "")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def checkpoints_in(run_id: str, run_dir: Path, events: list[Event]) -> list[SavedCheckpoint]:
    """The checkpoints a run's log records, in order (a name taken twice: the last one)."""
    found: dict[str, SavedCheckpoint] = {}
    for e in events:
        if isinstance(e, CheckpointSaved):
            found[e.name] = SavedCheckpoint.logged(run_id, run_dir, e)
    return list(found.values())
