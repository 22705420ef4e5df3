"""The demo matrix on a local Ray (two worker processes) beside in-process `parallel`, in one
invocation so the ratios come from the same machine state; then the driver's overhead per
record a node streams.

For each K (default 10 and 50): K scripted demo marathons against the reference agent on its
offline stand-in, (a) as `parallel: K` runs them — K coroutines in one process — and (b) as
`executor: ray` runs them on `ray.init(num_cpus=2)`, one task per run reserving one CPU (so two
worker processes take the runs in turn). Each is a fresh child process. Printed: wall time,
persona↔agent exchanges per second, the driver's peak RSS, and — for Ray — the peak RSS of the
whole Ray tree (driver, GCS, raylet, workers, the relay) sampled every 0.2 s.

Then the relay alone: 100,000 records of a typical size sent in batches of
`remote_log.BATCH_RECORDS` and written to disk, and the driver's log follower reading them back
(what the progress board costs): µs per record each.
Usage: `.venv/bin/python bench/ray_matrix.py [K ...]`.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
AGENT = {"adapter": "reference", "context_tokens": 400}


def tree_rss_mib(root: int) -> float:
    """Resident memory of `root` and all its descendants, from /proc."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(stat[1])
            rss[int(entry.name)] = int(stat[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    return sum(rss.get(pid, 0) for pid in tree) / 2**20


def one(mode: str, k: int) -> dict[str, float]:
    import adapters.reference.agent  # noqa: F401 - the anthropic SDK's import is not a run's cost
    from gateway.cli.scheduling import run_all
    from gateway.log.events import (
        Replied,
    )
    from gateway.log.runlog import EVENTS_FILE, read_log
    from gateway.log.vocabulary import TerminationReason
    from gateway.run.config import RunSpec
    from gateway.run.placement import RayExecutor, Resources

    peak_tree = 0.0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak_tree
        while not stop.is_set():
            peak_tree = max(peak_tree, tree_rss_mib(os.getpid()))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    with tempfile.TemporaryDirectory() as tmp:
        recordings = Path(tmp)
        specs = [
            RunSpec(f"d{n}", ROOT / "benchmarks" / "demo-en", AGENT, resources=Resources(num_cpus=1))
            for n in range(k)
        ]
        executor = RayExecutor(address="local") if mode == "ray" else None
        started = time.perf_counter()
        outcomes = run_all(specs, recordings, fresh=True, parallel=k, executor=executor)
        elapsed = time.perf_counter() - started
        assert all(getattr(o, "reason", None) == TerminationReason.COMPLETED for o in outcomes), outcomes
        exchanges = sum(
            isinstance(e, Replied)
            for n in range(k)
            for e in read_log(recordings / f"d{n}" / EVENTS_FILE).events
        )
    stop.set()
    sampler.join()
    driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": elapsed, "exchanges": exchanges, "driver_mib": driver, "tree_mib": peak_tree}


def relay_cost(records: int = 100_000) -> dict[str, float]:
    """µs per record: the relay writing streamed batches; the driver's follower reading them."""
    import ray

    from gateway.cluster.relay import LogRelay
    from gateway.cluster.remote_log import BATCH_RECORDS
    from gateway.log.events import Header, LLMExchange
    from gateway.log.follower import LogFollower
    from gateway.log.runlog import EVENTS_FILE, pack_record

    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            relay = ray.remote(LogRelay).options(num_cpus=0).remote(tmp)
            lease, seq, _ = ray.get(relay.open.remote("r", Header(run_id="r"), True, "bench"))
            sample = LLMExchange(  # an agent's model call as the recorder logs it: bodies are blob refs
                api="anthropic",
                path="/v1/messages",
                status=200,
                model="claude-sonnet-4-5",
                base=41,
                base_len=38,
                message_refs=["b" * 16, "c" * 16],
                tool_names=["memory_search", "memory_write"],
                text="Your sister Anna moved to Tbilisi in March.",
                usage={"input_tokens": 12000, "output_tokens": 80},
                duration=1.2,
            )
            batches = []
            for start in range(0, records, BATCH_RECORDS):
                batch = []
                for n in range(start, min(records, start + BATCH_RECORDS)):
                    sample.seq, sample.ts = seq + n, time.time()
                    batch.append((sample.seq, pack_record(sample.to_record())))
                batches.append(batch)
            began = time.perf_counter()
            for batch in batches:
                ray.get(relay.append.remote("r", lease, batch))
            write_us = (time.perf_counter() - began) / records * 1e6
            ray.get(relay.close.remote("r", lease))
            size = (Path(tmp) / "r" / EVENTS_FILE).stat().st_size
            began = time.perf_counter()
            read = len(LogFollower(Path(tmp) / "r" / EVENTS_FILE).read_new()) - 1
            follow_us = (time.perf_counter() - began) / read * 1e6
            assert read == records
    finally:
        ray.shutdown()
    return {"write_us": write_us, "follow_us": follow_us, "bytes": size / records}


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        print(json.dumps(one(sys.argv[2], int(sys.argv[3]))))
        return
    if sys.argv[1:] == ["--relay"]:
        print(json.dumps(relay_cost()))
        return
    ks = [int(a) for a in sys.argv[1:]] or [10, 50]
    print(f"{'K':>4} {'mode':<24} {'wall s':>7} {'exch':>6} {'exch/s':>7} {'driver MiB':>10} {'all MiB':>8}")
    for k in ks:
        rows = {}
        for mode in ("parallel", "ray"):
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode, str(k)],
                capture_output=True,
                text=True,
                check=True,
            )
            rows[mode] = r = json.loads(out.stdout.strip().splitlines()[-1])
            label = "in-process parallel" if mode == "parallel" else "Ray, 2 worker processes"
            print(
                f"{k:>4} {label:<24} {r['seconds']:>7.1f} {r['exchanges']:>6} {r['exchanges'] / r['seconds']:>7.1f} "
                f"{r['driver_mib']:>10.0f} {r['tree_mib']:>8.0f}"
            )
        p, q = rows["parallel"], rows["ray"]
        print(
            f"     ray / parallel: throughput ×{(q['exchanges'] / q['seconds']) / (p['exchanges'] / p['seconds']):.2f}, "
            f"driver RSS ×{q['driver_mib'] / p['driver_mib']:.2f}, all processes ×{q['tree_mib'] / p['tree_mib']:.2f}"
        )
    out = subprocess.run([sys.executable, __file__, "--relay"], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"relay: {r['write_us']:.1f} µs per streamed record written (batches, {r['bytes']:.0f} B each); "
        f"the driver's follower reads one back in {r['follow_us']:.1f} µs"
    )


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
