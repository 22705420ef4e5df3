"""State folders at size: the memory a checkpoint's hash takes, and what a crafted archive writes.

    .venv/bin/python bench/state_folders.py [--mb 512]

Prints, side by side in one run: the peak memory (tracemalloc) of hashing a state folder holding
one large file — read whole (how `folder_hash` read it before) and streamed (now) — and the
bytes a 1 MB-class crafted archive (far more than its checkpoint recorded) wrote into the state
folder before it was refused.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import sys
import tarfile
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.state_folder import folder_hash
from gateway.run.checkpoints import SavedCheckpoint
from gateway.run.restore import RestoreRefused, restore_state


def whole_file_hash(folder: Path) -> str:
    """The hash as it was computed before streaming: each file read whole."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def peak(call: object) -> tuple[float, float, object]:
    assert callable(call)
    tracemalloc.start()
    started = time.perf_counter()
    result = call()
    seconds = time.perf_counter() - started
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top / 2**20, seconds, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=512, help="the large file's size")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        state = Path(temp) / "state"
        state.mkdir()
        with open(state / "big.bin", "wb") as f:
            for _ in range(args.mb):
                f.write(b"\x01" * (1 << 20))
        whole_mib, whole_s, a = peak(lambda: whole_file_hash(state))
        stream_mib, stream_s, b = peak(lambda: folder_hash(state))
        assert a == b, "the streamed hash must equal the whole-file one"
        print(f"hashing a state folder with one {args.mb} MB file: peak memory")
        print(f"  read whole: {whole_mib:8.1f} MiB  {whole_s:5.2f} s")
        print(f"  streamed:   {stream_mib:8.1f} MiB  {stream_s:5.2f} s   ({whole_mib / max(stream_mib, 0.01):,.0f}× less)")
        archive = Path(temp) / "crafted.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            for n in range(4):
                info = tarfile.TarInfo(f"f{n}")
                info.size = 256 << 20
                tar.addfile(info, io.BytesIO(b"\0" * info.size))
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        checkpoint = SavedCheckpoint("p", "exam", 1, "0" * 64, archive, digest, archive.stat().st_size, 1000, 4)
        target = Path(temp) / "restored"
        started = time.perf_counter()
        try:
            restore_state(checkpoint, target)
        except RestoreRefused as exc:
            refused = str(exc)
        written = sum(p.stat().st_size for p in target.rglob("*") if p.is_file()) if target.exists() else 0
        print(
            f"a crafted archive of {archive.stat().st_size / 2**20:.1f} MiB expanding to 1 GiB (its checkpoint "
            f"recorded 1,000 bytes): refused in {time.perf_counter() - started:.2f} s, {written:,} bytes written"
        )
        print(f"  {refused[:160]}")


if __name__ == "__main__":
    main()
