"""K scripted demo marathons at once, each against its own reference agent (own stand-in
model, own recorder listener, own ports, own log) in one `marathon run`-style process, as
`parallel: K` runs them: aggregate persona↔agent exchanges per second, the agents' LLM calls
per second through the recorder, and the process's peak memory, for K = 1, 10, 50.

Each K runs in a fresh child process so its peak RSS is its own; the Ks run one after another
in one invocation so the ratios come from the same machine state.
Usage: `.venv/bin/python bench/parallel_runs.py [K ...]`.
"""

from __future__ import annotations

import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


async def one_k(k: int) -> dict[str, float]:
    import adapters.reference.agent  # noqa: F401 - the anthropic SDK's import (~2 s) is not a run's cost
    from gateway.log.events import (
        LLMExchange,
        Replied,
    )
    from gateway.log.runlog import EVENTS_FILE, read_log
    from gateway.log.vocabulary import TerminationReason
    from gateway.run.config import RunSpec
    from gateway.run.runner import Run

    with tempfile.TemporaryDirectory() as tmp:
        recordings = Path(tmp)
        agent = {"adapter": "reference", "context_tokens": 400}
        runs = [Run(RunSpec(f"d{n}", ROOT / "benchmarks" / "demo-en", agent), recordings) for n in range(k)]
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(r.execute() for r in runs))
        elapsed = time.perf_counter() - started
        assert all(o.reason == TerminationReason.COMPLETED for o in outcomes)
        exchanges = llm = 0
        for n in range(k):
            events = read_log(recordings / f"d{n}" / EVENTS_FILE).events
            exchanges += sum(isinstance(e, Replied) for e in events)
            llm += sum(isinstance(e, LLMExchange) for e in events)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"k": k, "seconds": elapsed, "exchanges": exchanges, "llm_calls": llm, "peak_mib": peak_mib}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(asyncio.run(one_k(int(sys.argv[2])))))
        return
    ks = [int(a) for a in sys.argv[1:]] or [1, 10, 50]
    print(
        f"{'K':>4} {'wall s':>8} {'exchanges':>10} {'exch/s':>8} {'LLM calls/s':>12} {'peak MiB':>9} {'MiB/run':>8}"
    )
    base: dict[str, float] | None = None
    for k in ks:
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(k)], capture_output=True, text=True, check=True
        ).stdout
        r = json.loads(out.strip().splitlines()[-1])
        rate = r["exchanges"] / r["seconds"]
        base = base or r
        print(
            f"{k:>4} {r['seconds']:>8.1f} {r['exchanges']:>10.0f} {rate:>8.1f} "
            f"{r['llm_calls'] / r['seconds']:>12.1f} {r['peak_mib']:>9.0f} "
            f"{(r['peak_mib'] - base['peak_mib']) / max(k - 1, 1) if k > 1 else 0:>8.1f}"
        )
    print(
        "(exch/s: persona messages answered per second, all runs together; MiB/run: peak above K=1, per extra run)"
    )


if __name__ == "__main__":
    main()
