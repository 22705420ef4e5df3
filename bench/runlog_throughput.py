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
from gateway.report.summary import summarize
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


def _write(path: Path, events: list[Event], framed: bool) -> float:
    started = time.perf_counter()
    header = Header(run_id="bench", benchmark={"name": "demo-en"}, format=2 if framed else 1)
    path.unlink(missing_ok=True)
    with RunLogWriter(path, next_seq=0, framed=framed) as writer:
        writer.append(header)
        for event in events:
            writer.append(event)
    return time.perf_counter() - started


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    events = typical_events(n)
    bench = load_benchmark(DEMO)
    print(f"events: {n:,}; format 2 (a CRC per record) beside format 1 (plain msgpack), same run")
    with tempfile.TemporaryDirectory() as tmp:
        for framed in (False, True):
            path = Path(tmp) / f"events-{int(framed)}.msgpack"
            write_s = _write(path, events, framed)
            size = path.stat().st_size
            started = time.perf_counter()
            log = read_log(path)
            read_s = time.perf_counter() - started
            assert len(log.events) == n and log.format == (2 if framed else 1)
            started = time.perf_counter()
            conversation(log.events)  # what a resume replays
            summarize(log, bench)  # what a report derives
            rebuild_s = time.perf_counter() - started
            print(f"format {log.format}: log {size / 1e6:.1f} MB ({size / n:.0f} B/event)")
            print(f"  write:   {n / write_s:>10,.0f} records/s  ({write_s:.2f} s, one os.write per record)")
            print(f"  read:    {n / read_s:>10,.0f} records/s  ({read_s:.2f} s, typed events)")
            print(
                f"  rebuild: {rebuild_s + read_s:.2f} s to read and rebuild a run's state (replay pairs + summary)"
            )


if __name__ == "__main__":
    main()
