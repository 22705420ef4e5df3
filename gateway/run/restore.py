"""Restoring a checkpoint into a state folder: bounded, checked before anything is written, and
all or nothing.

An archive is data from disk, never trusted: a crafted one must not fill the disk, write outside
the state folder, recurse without end, or leave what it wrote behind. So a restore

1. refuses an archive whose bytes differ from the digest its log records — before reading it;
2. reads the archive's member list once without writing a byte, refusing what it may not hold:
   a path that is absolute, climbs out (`..`) or passes through a link; anything but files,
   folders and links; a path deeper than `MAX_DEPTH`; a link the profile's rules don't allow
   (adapters/state_folder.py); more bytes or members than the checkpoint recorded (an older log
   that recorded neither: `FALLBACK_RATIO` × the archive's size, at least `FALLBACK_FLOOR`);
3. writes the members, counting the bytes again as they land;
4. compares the folder's hash with the checkpoint's.

Any refusal raises one `RestoreRefused` naming every problem found. Refused before a byte was
written (1, 2), the state folder is left as it was; refused while writing or by its hash (3, 4),
what the restore wrote is removed and the folder is absent — never half a checkpoint. A fork's
next start restores again either way. The folder is hashed with what the checkpoint left out when
it was taken (`left_out`), so a profile that later names more caches still restores old ones.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from adapters.state_folder import MAX_DEPTH, NO_RULES, StateRules, folder_hash
from gateway.run.checkpoints import CheckpointError, SavedCheckpoint, file_sha256

FALLBACK_RATIO = 100  # an older checkpoint (no recorded size): at most this × its archive's bytes
FALLBACK_FLOOR = 1 << 30  # … and at least 1 GiB
FALLBACK_MEMBERS = 1_000_000
COPY_CHUNK = 1 << 20


class RestoreRefused(CheckpointError):
    """A checkpoint that can't be restored as it was taken; `problems` lists every reason, and
    nothing the restore wrote is left in the state folder."""

    def __init__(self, checkpoint: SavedCheckpoint, problems: list[str]) -> None:
        self.checkpoint = checkpoint
        self.problems = problems
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        super().__init__(
            f"checkpoint {checkpoint.name!r} of run {checkpoint.run_id} ({checkpoint.archive}) can't be "
            f"restored: {shown} — nothing of it was kept"
        )


@dataclass(frozen=True)
class RestoreBounds:
    """What one restore may write."""

    bytes: int
    members: int
    depth: int = MAX_DEPTH

    @classmethod
    def of(cls, checkpoint: SavedCheckpoint) -> RestoreBounds:
        if checkpoint.state_bytes or checkpoint.members:
            return cls(checkpoint.state_bytes, checkpoint.members)
        return cls(max(FALLBACK_RATIO * checkpoint.bytes, FALLBACK_FLOOR), FALLBACK_MEMBERS)


def restore_state(checkpoint: SavedCheckpoint, state_dir: Path, rules: StateRules = NO_RULES) -> str:
    """Replace `state_dir` by the checkpoint's archive; returns the restored folder's hash, which
    equals the checkpoint's `state_hash`. Raises `RestoreRefused` (a `CheckpointError`) otherwise
    (see the module docstring for what is left)."""
    if not checkpoint.archive.is_file():
        raise RestoreRefused(checkpoint, [f"{checkpoint.archive} is missing"])
    if (digest := file_sha256(checkpoint.archive)) != checkpoint.archive_sha256:
        raise RestoreRefused(
            checkpoint,
            [f"the archive changed since it was taken (sha256 {digest[:12]}…, logged {checkpoint.archive_sha256[:12]}…)"],
        )
    bounds = RestoreBounds.of(checkpoint)
    try:
        members = _checked_members(checkpoint, rules, bounds)
    except (tarfile.TarError, OSError, EOFError, UnicodeError) as exc:
        raise RestoreRefused(checkpoint, [f"the archive can't be read: {exc}"]) from None
    shutil.rmtree(state_dir, ignore_errors=True)
    state_dir.mkdir(parents=True)
    taken = StateRules(not_state=checkpoint.left_out, links_into=rules.links_into)  # hashed as it was taken
    try:
        _extract(checkpoint.archive, members, state_dir, bounds)
        restored = folder_hash(state_dir, taken)
    except (tarfile.TarError, OSError, EOFError, _OverBound, UnicodeError) as exc:
        shutil.rmtree(state_dir, ignore_errors=True)
        raise RestoreRefused(checkpoint, [f"writing it failed: {exc}"]) from None
    if restored != checkpoint.state_hash:
        shutil.rmtree(state_dir, ignore_errors=True)
        raise RestoreRefused(
            checkpoint, [f"the restored folder hashes {restored[:12]}…, not the logged {checkpoint.state_hash[:12]}…"]
        )
    return restored


class _OverBound(Exception):
    pass


def _checked_members(checkpoint: SavedCheckpoint, rules: StateRules, bounds: RestoreBounds) -> dict[str, tarfile.TarInfo]:
    """The archive's members by path, read without writing; `RestoreRefused` with every problem.
    Reading stops at the first bound passed (a crafted archive is not decompressed to its end)."""
    problems: list[str] = []
    members: dict[str, tarfile.TarInfo] = {}
    links: dict[str, str] = {}
    total = 0
    with tarfile.open(checkpoint.archive, "r:gz") as tar:
        for member in tar:
            rel = member.name
            path = PurePosixPath(rel)
            if path.is_absolute() or ".." in path.parts or not path.parts or str(path) != rel:
                problems.append(f"{rel[:80]} is not a path inside the state folder")
                continue
            if len(path.parts) > bounds.depth:
                problems.append(f"{rel[:60]}… lies {len(path.parts)} folders deep (at most {bounds.depth})")
                break
            if any(str(parent) in links for parent in path.parents):
                problems.append(f"{rel[:80]} lies behind a link")
                continue
            if member.issym():
                links[rel] = member.linkname
            elif member.islnk() or not (member.isfile() or member.isdir()):
                problems.append(f"{rel[:80]} is neither a file, a folder nor a link")
                continue
            total += member.size if member.isfile() else 0
            members[rel] = member
            if total > bounds.bytes:
                problems.append(f"it holds more than the {bounds.bytes:,} bytes its checkpoint recorded")
                break
            if len(members) > bounds.members:
                problems.append(f"it holds more than the {bounds.members:,} files its checkpoint recorded")
                break
    problems += [p for rel in links if (p := rules.link_problem(rel, links))]  # through each other, as the kernel
    if problems:
        raise RestoreRefused(checkpoint, problems)
    return members


def _extract(archive: Path, members: dict[str, tarfile.TarInfo], state_dir: Path, bounds: RestoreBounds) -> None:
    """Write the checked members (folders first by order in the archive; a file's parent is made
    when missing), counting bytes as they land."""
    written = 0
    root = os.path.realpath(state_dir)
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            checked = members.get(member.name)
            if checked is None or (checked.offset, checked.type, checked.linkname, checked.size) != (
                member.offset,
                member.type,
                member.linkname,
                member.size,
            ):
                raise _OverBound(f"{member.name[:80]} is not what the archive held when it was checked")
            target = state_dir / member.name
            target.parent.mkdir(parents=True, exist_ok=True)
            if not os.path.realpath(target.parent).startswith(root + os.sep) and os.path.realpath(target.parent) != root:
                raise _OverBound(f"{member.name[:80]} would be written outside the state folder")
            if member.isdir():
                target.mkdir(exist_ok=True)
            elif member.issym():
                os.symlink(member.linkname, target)
            else:
                source = tar.extractfile(member)
                assert source is not None
                with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as out:
                    while chunk := source.read(COPY_CHUNK):
                        written += len(chunk)
                        if written > bounds.bytes:
                            raise _OverBound(f"more than {bounds.bytes:,} bytes")
                        out.write(chunk)
                os.chmod(target, (member.mode & 0o755) | 0o600)
