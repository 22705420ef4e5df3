"""Benchmarks loaded in this process, kept while their files stay as they were.

A run's preflight, the run itself, a ladder's pool screening (which loads the benchmarks it
screens against) and the report each asked for the same benchmark: a 20,000-question one was
parsed and linted several times over. What a caller may rely on: a kept benchmark is handed
out only when every file it read still holds the same bytes (read again and compared by
digest) and the folder's `.md` files are the same names, sizes and times — an edit is always
seen, never a stale benchmark. Failed loads are never kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import stat
from dataclasses import replace
from pathlib import Path

from persona.benchmark.model import Benchmark

MAX_FILE_BYTES = 8 * 1024 * 1024  # one benchmark file
# all of a benchmark's files together: 40 chapters of 7.9 MB took 82 s and 5 GB to check; the
# largest real benchmarks are well under 1 MB
MAX_BENCHMARK_BYTES = 32 * 1024 * 1024

_Stamp = tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, int, int], ...]]


class LoadedBenchmarks:
    def __init__(self, keep: int = 8) -> None:
        self._keep = keep
        self._kept: dict[Path, tuple[_Stamp, Benchmark]] = {}

    def get(self, root: Path) -> Benchmark | None:
        """The benchmark at `root` as loaded before, if none of its files changed since."""
        kept = self._kept.get(root.resolve())
        if kept is None or kept[0] != _stamp(root, kept[0][0]):
            return None
        bench = kept[1]
        return bench if bench.root == root else replace(bench, root=root)  # as this caller spells it

    def keep(self, root: Path, files_read: list[str], bench: Benchmark) -> None:
        self._kept[root.resolve()] = (_stamp(root, tuple(sorted(files_read))), bench)
        while len(self._kept) > self._keep:
            del self._kept[next(iter(self._kept))]


def _stamp(root: Path, rels: tuple[str, ...]) -> _Stamp:
    """What a loaded benchmark depends on: the digest of each file it read, and the `.md`
    files it may have looked at (name, size, mtime) — equal stamps, the same benchmark."""
    digests = []
    for rel in rels:
        try:
            real = (root / rel).resolve()
            info = real.stat()
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:  # a FIFO would hang
                raise ValueError(rel)
            digests.append(hashlib.sha256(real.read_bytes()).hexdigest())
        except (OSError, ValueError):
            digests.append("")  # gone or unreadable: the stamp differs, the load says why
    listing = []
    for path in sorted([*root.glob("*.md"), *root.glob("facts/*.md")]):
        with contextlib.suppress(OSError):
            info = path.stat()
            listing.append((path.name, info.st_size, info.st_mtime_ns))
    return rels, tuple(digests), tuple(listing)


LOADED = LoadedBenchmarks()
