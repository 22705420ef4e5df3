"""Run-log throughput: write and read 100k typical events, and rebuild a run's state from them.

Prints records per second for writing (one os.write per record, as the runner does) and
reading, and the time to rebuild a run's state (the report summary) from a 100k-event log.
Figures only; nothing here is asserted. Usage: `.venv/bin/python bench/runlog_throughput.py [N]`.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.log.events import Asked, Evaluation, Event, FactTold, Header, PhaseEntered, Replied, Said
from gateway.log.runlog import RunLogWriter, read_log
from gateway.report.markdown import summarize
from gateway.run.resume import conversation
from persona.benchmark.loader import load_benchmark

DEMO = Path(__file__).resolve().parents[1] / "benchmarks" / "demo-en"


def typical_events(n: int) -> list[Event]:
    """A marathon's mix: mostly say/reply pairs of chat length, facts told, some questions."""
    rng = random.Random(1)
    words = "the rent rose to euros from march my cat pixel eats salmon flavoured food every day".split()

    def text(k: int) -> str:
        return " ".join(rng.choice(words) for _ in range(k))

    out: list[Event] = []
    while len(out) < n:
        roll = rng.random()
        if roll < 0.01:
            out.append(PhaseEntered(index=len(out) % 50, chapter="ch.md", title="Phase"))
        elif roll < 0.05:
            q = f"q{rng.randint(1, 15)}"
            out += [
                Asked(question_id=q, text=text(10), expected="1,915 euros"),
                Replied(text=text(30), elapsed=0.8),
            ]
            out.append(Evaluation(question_id=q, score=10.0, reason="found '1,915 euros'", answer=text(30)))
        else:
            out += [
                Said(text=text(40), purpose="fact", fact_ids=["home:1.3"]),
                Replied(text=text(25), elapsed=1.2),
            ]
            out.append(FactTold(file="home", fact_id="1.3"))
    return out[:n]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    events = typical_events(n)
    bench = load_benchmark(DEMO)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.msgpack"
        started = time.perf_counter()
        with RunLogWriter.create(path, Header(run_id="bench", benchmark={"name": "demo-en"})) as writer:
            for event in events:
                writer.append(event)
        write_s = time.perf_counter() - started
        size = path.stat().st_size

        started = time.perf_counter()
        log = read_log(path)
        read_s = time.perf_counter() - started
        assert len(log.events) == n

        started = time.perf_counter()
        conversation(log.events)  # what a resume replays
        summarize(log, bench)  # what a report derives
        rebuild_s = time.perf_counter() - started

    print(f"events: {n:,}  log size: {size / 1e6:.1f} MB ({size / n:.0f} B/event)")
    print(f"write:   {n / write_s:>10,.0f} records/s  ({write_s:.2f} s, one os.write per record)")
    print(f"read:    {n / read_s:>10,.0f} records/s  ({read_s:.2f} s, typed events)")
    print(f"rebuild: {rebuild_s + read_s:.2f} s to read and rebuild a run's state (replay pairs + summary)")


if __name__ == "__main__":
    main()
