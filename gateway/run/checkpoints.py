"""Checkpoints: an agent's whole state folder archived between two settled turns (design §9b).

A checkpoint is part of its run folder: `checkpoints/NAME.tar.gz` (the state folder's files,
paths relative to it) and a `checkpoint` event in the run's log giving the folder's content
hash, the archive's sha256 and the log position (the event's `seq`). The persona's state at
that point is not stored apart: a driver is deterministic given the logged persona turns, so
replaying the log up to the position rebuilds it (as a resumed run does).

What a caller may rely on: an archive is complete or absent (written beside, then renamed);
`restore_state` refuses an archive whose bytes differ from the logged digest, and extracts
only regular files and folders inside the state folder (tar's `data` filter: no absolute
paths, no `..`, no links pointing out, no devices) — an archive is data, never trusted as code.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from adapters.lifecycle import folder_hash
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


def archive_state(state_dir: Path, run_dir: Path, name: str) -> CheckpointSaved:
    """Archive `state_dir` as checkpoint `name` of the run in `run_dir`; returns the event to log
    (its `seq` is stamped when logged). A second checkpoint of the same name replaces the first
    (a resumed run taking it again after a crash between the archive and its log record)."""
    if not state_dir.is_dir():
        raise CheckpointError(f"the agent's state folder {state_dir} does not exist: nothing to archive")
    target = archive_path(run_dir, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    state_hash = folder_hash(state_dir)
    with tarfile.open(partial, "w:gz") as tar:
        for path in sorted(state_dir.rglob("*")):
            if path.is_symlink() or path.is_file() or path.is_dir():
                tar.add(path, arcname=str(path.relative_to(state_dir)), recursive=False)
    with open(partial, "rb") as f:
        os.fsync(f.fileno())
    os.replace(partial, target)
    return CheckpointSaved(
        name=name,
        state_hash=state_hash,
        archive=str(target.relative_to(run_dir)),
        archive_sha256=file_sha256(target),
        bytes=target.stat().st_size,
    )


def restore_state(checkpoint: SavedCheckpoint, state_dir: Path) -> str:
    """Replace `state_dir` by the checkpoint's archive; returns the restored folder's hash, which
    equals the checkpoint's `state_hash` (else `CheckpointError`)."""
    if not checkpoint.archive.is_file():
        raise CheckpointError(
            f"checkpoint {checkpoint.name!r} of run {checkpoint.run_id}: {checkpoint.archive} is missing"
        )
    if (digest := file_sha256(checkpoint.archive)) != checkpoint.archive_sha256:
        raise CheckpointError(
            f"checkpoint {checkpoint.name!r} of run {checkpoint.run_id}: {checkpoint.archive} changed since it was "
            f"taken (sha256 {digest[:12]}…, logged {checkpoint.archive_sha256[:12]}…); it can't be forked from"
        )
    shutil.rmtree(state_dir, ignore_errors=True)
    state_dir.mkdir(parents=True)
    try:
        with tarfile.open(checkpoint.archive, "r:gz") as tar:
            tar.extractall(state_dir, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise CheckpointError(
            f"checkpoint {checkpoint.name!r}: can't restore {checkpoint.archive}: {exc}"
        ) from None
    restored = folder_hash(state_dir)
    if restored != checkpoint.state_hash:
        raise CheckpointError(
            f"checkpoint {checkpoint.name!r} of run {checkpoint.run_id}: the restored state folder hashes "
            f"{restored[:12]}…, not the logged {checkpoint.state_hash[:12]}…"
        )
    return restored


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
            found[e.name] = SavedCheckpoint(
                run_id, e.name, e.seq, e.state_hash, run_dir / e.archive, e.archive_sha256, e.bytes
            )
    return list(found.values())
