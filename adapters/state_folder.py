"""An agent's state folder: what in it is state, how it is hashed, where its links may point.

A checkpoint archives the state folder and a fork restores it, so three questions have one
answer here, shared by the hash, the archive and the restore:

- **What is state.** A profile names what is not (`process.not_state`: caches, temp folders,
  given as paths relative to the state folder); those are left out of the hash and the archive,
  and a fork starts without them, as the agent does after clearing its cache.
- **How it is hashed.** `folder_hash` streams each file (a 1.5 GB file costs a 1 MB buffer, not
  1.5 GB of memory) over the folder's relative paths in a fixed order; a link counts as its
  target's text, never as what it points at. A folder with no links and nothing left out hashes
  as it did before links were known, so older checkpoints still restore to their logged hash.
- **Where a link may point.** Inside the state folder (kept relative to it), or — when absolute —
  into a read-only place the profile names (`process.links_into`, e.g. `${AGENT_INSTALL}`, the
  agent's own install: OpenClaw links its plugin skills there). Anything else is refused when a
  checkpoint is taken (`state_problems`, raised by the archive as a `CheckpointError`), so a
  checkpoint that exists can be forked.

The walk is iterative (a folder 1,500 levels deep is no `RecursionError`) and never follows a
link. What is neither a file, a folder nor a link — a socket, a fifo, a device — is a running
agent's, not its state: left out of the hash and the archive.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Literal

HASH_CHUNK = 1 << 20  # bytes read at a time when hashing a file
MAX_DEPTH = 128  # path parts below the state folder a checkpoint may hold (a restore refuses more)

EntryKind = Literal["file", "dir", "link"]


@dataclass(frozen=True)
class StateRules:
    """What a profile says about its agent's state folder (see the module docstring)."""

    not_state: tuple[str, ...] = ()  # relative paths (folders or files) that are not state
    links_into: tuple[Path, ...] = ()  # absolute folders an absolute link may point into

    def excludes(self, rel: str) -> bool:
        """Whether `rel` (a posix path relative to the state folder) is left out."""
        return any(rel == skip or rel.startswith(skip + "/") for skip in self._skips)

    @cached_property
    def _skips(self) -> tuple[str, ...]:
        """`not_state` as the walk compares it (normalised once: asked of every path walked)."""
        normal = (str(PurePosixPath(s)).strip("/") for s in self.not_state)
        return tuple(s for s in normal if s and s != ".")

    def allows(self, absolute: str) -> bool:
        """Whether an absolute path lies in a place the profile lets links point into."""
        resolved = os.path.normpath(absolute)
        return any(resolved == str(root) or resolved.startswith(str(root).rstrip("/") + "/") for root in self.links_into)

    def link_problem(self, rel: str, links: Mapping[str, str]) -> str | None:
        """Why the link at `rel` can't be kept (None: it can). `links` maps every link of the
        folder (relative path → target as written): a relative target is resolved through the
        folder's other links, as the kernel would, so `a → b/..` with `b → .` is seen leaving."""
        target = links[rel]
        allowed = ", ".join(str(r) for r in self.links_into) or "none named by the profile"
        where = resolve_link(rel, links)
        if where is None:
            return f"{rel} is a link to {target}, which loops through other links"
        inside, path = where
        if inside is None:
            return f"{rel} is a link to {target}, which leaves the state folder"
        if not inside and not self.allows(path):
            return f"{rel} is a link to {target}, outside the state folder (links may point into: {allowed})"
        return None


MAX_LINK_HOPS = 40  # as the kernel's limit on links followed in one path


def resolve_link(rel: str, links: Mapping[str, str]) -> tuple[bool | None, str] | None:
    """Where the link at `rel` leads, following the folder's own links: (True, path inside the
    folder), (False, an absolute path outside it), (None, "") when a relative step leaves the
    folder; None when the links loop. Absolute places outside are not followed further (the
    profile names them read-only; their own links are theirs)."""
    current = list(PurePosixPath(rel).parent.parts)
    pending = list(PurePosixPath(links[rel]).parts)
    absolute = False
    if pending and pending[0] == "/":
        absolute, current, pending = True, [], pending[1:]
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not current and not absolute:
                return None, ""
            if current:
                current.pop()
            continue
        current.append(part)
        joined = "/".join(current)
        if not absolute and joined in links:
            hops += 1
            if hops > MAX_LINK_HOPS:
                return None
            target = list(PurePosixPath(links[joined]).parts)
            current.pop()
            if target and target[0] == "/":
                absolute, current, target = True, [], target[1:]
            pending = target + pending
    return (not absolute), ("/" + "/".join(current) if absolute else "/".join(current))


NO_RULES = StateRules()  # a state folder that is all state and holds no links out (the reference agent's)


@dataclass(frozen=True)
class Entry:
    """One path in a state folder, as the hash and the archive see it."""

    rel: str  # posix, relative to the state folder
    kind: EntryKind
    path: Path
    size: int = 0  # a file's bytes
    target: str = ""  # a link's target, as written

    @property
    def depth(self) -> int:
        return len(PurePosixPath(self.rel).parts)


def walk_state(folder: Path, rules: StateRules = NO_RULES) -> Iterator[Entry]:
    """Every file, folder and link under `folder` (not `folder` itself) that is state, in the
    hash's order (by path parts); links are not followed; sockets, fifos and devices are skipped."""
    found: list[Entry] = []
    stack = [(folder, "")]
    while stack:
        here, prefix = stack.pop()
        with os.scandir(here) as entries:
            for item in entries:
                rel = f"{prefix}{item.name}"
                if rules.excludes(rel):
                    continue
                mode = item.stat(follow_symlinks=False).st_mode
                path = Path(item.path)
                if stat.S_ISLNK(mode):
                    found.append(Entry(rel, "link", path, target=os.readlink(item.path)))
                elif stat.S_ISDIR(mode):
                    found.append(Entry(rel, "dir", path))
                    stack.append((path, rel + "/"))
                elif stat.S_ISREG(mode):
                    found.append(Entry(rel, "file", path, size=item.stat(follow_symlinks=False).st_size))
    found.sort(key=lambda e: tuple(e.rel.split("/")))
    return iter(found)


def folder_hash(folder: Path | None, rules: StateRules = NO_RULES) -> str:
    """sha256 over a folder's state (see the module docstring); "none" when there is no folder.
    An empty folder and no folder differ ("none" vs the hash of nothing)."""
    if folder is None or not folder.is_dir():
        return "none"
    digest = hashlib.sha256()
    for entry in walk_state(folder, rules):
        if entry.kind == "file":
            digest.update(file_line(entry.rel, file_digest(entry.path)))
        elif entry.kind == "link":
            digest.update(link_line(entry.rel, entry.target))
    return digest.hexdigest()


def name_bytes(name: str) -> bytes:
    """A path as the OS holds it: any bytes a file name may have, not only UTF-8 (a Latin-1
    `café.md` reaches Python as a lone surrogate, and a strict `.encode()` would fail on it)."""
    return os.fsencode(name)


def shown_name(text: str) -> str:
    """`text` with the bytes of a non-UTF-8 file name escaped (`caf\\xe9.md`), so it can be
    logged, written to a report and printed: those hold text."""
    return name_bytes(text).decode("utf-8", "backslashreplace")


def file_line(rel: str, digest: bytes) -> bytes:
    """What a regular file adds to the folder's hash (also read from an archive: checkpoints.py)."""
    return name_bytes(rel) + b"\0" + digest


def link_line(rel: str, target: str) -> bytes:
    """What a link adds to the folder's hash: its path and its target as written."""
    return name_bytes(rel) + b"\0link\0" + name_bytes(target)


def file_digest(path: Path) -> bytes:
    """A file's sha256, read in chunks (memory stays flat whatever its size)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.digest()


def state_problems(folder: Path, rules: StateRules) -> list[str]:
    """What in `folder` a checkpoint can't keep faithfully (links out of bounds, paths deeper
    than `MAX_DEPTH`); [] when it can all be archived and restored."""
    problems: list[str] = []
    deepest: Entry | None = None
    entries = list(walk_state(folder, rules))
    links = {e.rel: e.target for e in entries if e.kind == "link"}
    for entry in entries:
        if entry.kind == "link" and (problem := rules.link_problem(entry.rel, links)):
            problems.append(problem)
        if entry.depth > MAX_DEPTH and (deepest is None or entry.depth > deepest.depth):
            deepest = entry
    if deepest is not None:
        problems.append(f"{deepest.rel[:60]}… lies {deepest.depth} folders deep (a checkpoint keeps at most {MAX_DEPTH})")
    return problems
