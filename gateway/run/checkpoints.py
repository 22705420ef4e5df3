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

import errno
import hashlib
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from adapters.agent_processes import writers_of
from adapters.state_folder import (
    NO_RULES,
    StateRules,
    file_line,
    folder_hash,
    link_line,
    name_bytes,
    shown_name,
    state_problems,
    walk_state,
)
from gateway.log.events import CheckpointSaved, Event

CHECKPOINTS = "checkpoints"  # the folder of a run's checkpoint archives


class CheckpointError(ValueError):
    """A checkpoint can't be taken, found or restored; the message says which and why. A file
    name in it that is not UTF-8 is shown escaped (`caf\\xe9.md`): the message reaches the log
    and the terminal, which hold text."""

    def __init__(self, message: str) -> None:
        super().__init__(shown_name(message))


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
    failure = ""
    for _ in range(ARCHIVE_TRIES):
        try:  # the hash is of what the archive holds: one reading of the folder makes both
            state_hash, state_bytes, members = _write_archive(state_dir, partial, rules)
        except OSError as exc:
            if exc.errno in _LASTING:  # no room, no permission: reading again won't change it
                partial.unlink(missing_ok=True)
                raise CheckpointError(f"checkpoint {name!r} can't be written: {exc}; nothing was logged") from None
            failure = f" (last: {exc})"  # a file cut short while read (tarfile: "unexpected end of data")
            continue
        except ValueError as exc:  # a link or folder that became a file between the walk and the archive
            failure = f" (last: {exc})"
            continue
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        if folder_hash(state_dir, rules) == state_hash:  # a second reading: nothing writes it any more
            break
        failure = ""
    else:
        partial.unlink(missing_ok=True)
        writers = writers_of(state_dir)
        raise CheckpointError(
            f"checkpoint {name!r}: the state folder {state_dir} changed while it was archived, {ARCHIVE_TRIES} "
            "times" + failure + " — "
            + (
                f"{_listed([str(w) for w in writers])} still holds files in it open"
                if writers
                else "a process still writes it after the agent's stop (a worker it started?)"
            )
            + "; nothing was logged"
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
_LASTING = {errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EROFS}


class _Hashing:
    """A file read through: what tarfile copies into the archive is what is hashed."""

    def __init__(self, source: BinaryIO) -> None:
        self.source, self.digest = source, hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        chunk = self.source.read(size)
        self.digest.update(chunk)
        return chunk


def _write_archive(state_dir: Path, partial: Path, rules: StateRules) -> tuple[str, int, int]:
    """Archive the folder's state into `partial`; returns the hash of what was archived (as
    `folder_hash` computes it), its bytes and its members."""
    state_bytes = members = 0
    state = hashlib.sha256()
    with open(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as raw:
        with tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
            for entry in walk_state(state_dir, rules):
                members += 1
                if entry.kind != "file":
                    info = tar.gettarinfo(entry.path, arcname=entry.rel)
                    tar.addfile(info)
                    if info.issym():
                        state.update(link_line(entry.rel, info.linkname))
                    continue
                with open(entry.path, "rb") as source:
                    info = tar.gettarinfo(arcname=entry.rel, fileobj=source)
                    if info.islnk():  # a second name of one file: archived whole, as a restore writes it
                        info.type, info.linkname, info.size = tarfile.REGTYPE, "", os.fstat(source.fileno()).st_size
                    reader = _Hashing(source)
                    tar.addfile(info, reader)  # read() is all tarfile uses of it
                    state_bytes += info.size
                state.update(file_line(entry.rel, reader.digest.digest()))
        raw.flush()
        os.fsync(raw.fileno())
    return state.hexdigest(), state_bytes, members


def archive_state_hash(archive: Path) -> str:
    """What `folder_hash` gives for the folder the archive holds — each regular file's path and
    content digest, each link's path and target, in path order — read from the archive as a
    stream (one member in memory at a time). A checkpoint's archive must hash to its logged state:
    made so when it is taken (one reading of the folder gives both), and checked by `marathon
    verify`. Names are bytes, as the OS allows them. Raises `tarfile.TarError`, `OSError`."""
    found: dict[str, bytes] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if member.isreg():
                digest = hashlib.sha256()
                source = tar.extractfile(member)
                assert source is not None
                while chunk := source.read(1 << 20):
                    digest.update(chunk)
                found[member.name] = digest.digest()
            elif member.islnk() and isinstance(found.get(member.linkname), bytes):
                found[member.name] = found[member.linkname]  # a second name of a file archived before
            elif member.issym():
                found[member.name] = b"\0link\0" + name_bytes(member.linkname)
    digest = hashlib.sha256()
    for name in sorted(found, key=lambda n: tuple(n.split("/"))):
        value = found[name]
        digest.update(name_bytes(name) + value if value.startswith(b"\0link\0") else file_line(name, value))
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
