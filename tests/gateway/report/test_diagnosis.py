"""The diagnostic chain of protocol 001 on hand-made logs: for a wrong answer, the first link
of told → written → retrieved → in the model's input → used that the log shows broken."""

from __future__ import annotations

import json
from pathlib import Path

from gateway.log.events import (
    Asked,
    Blob,
    Event,
    EvidenceCheck,
    Header,
    LLMExchange,
    MemoryCallFailed,
    MemoryCallSeen,
    Said,
)
from gateway.log.runlog import EVENTS_FILE, RunLogWriter, read_log
from gateway.report.diagnosis import UNKNOWN, Diagnoser
from gateway.report.recordings import RecordedRun
from gateway.report.summary import summarize
from gateway.traffic.recorder import blob_ref
from persona.benchmark.loader import load_benchmark
from tests.conftest import BenchFactory

TOLD = Said(text="My cat is called Miso", purpose="fact")
RESULT = json.dumps(
    {"role": "user", "content": [{"type": "tool_result", "content": "note: the cat is Miso"}]}
).encode()


def run_of(tmp: Path, bench: Path, events: list[Event], observed: bool = True) -> RecordedRun:
    path = tmp / EVENTS_FILE
    with RunLogWriter.create(path, Header(run_id="r", persona={"driver": "scripted"})) as log:
        if observed:
            log.append(LLMExchange(kind="ordinary", model="m"))
        for event in events:
            log.append(event)
    benchmark = load_benchmark(bench)
    run_log = read_log(path)
    return RecordedRun(tmp, run_log, benchmark, summarize(run_log, benchmark))


def write_events(text: str, seq: int) -> list[Event]:
    """A memory write of `text`: the exchange that made it (logged as record `seq`), then the
    recorder's finding pointing at it."""
    return [
        LLMExchange(kind="ordinary", tool_calls=[{"name": "memory_write", "arguments": {"text": text}}]),
        MemoryCallSeen(tool="memory_write", operation="write", exchange=seq),
    ]


def test_each_broken_link_is_found(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    bench = make_benchmark()
    asked = Asked(question_id="q1", text="What is my cat called?")
    cases: list[tuple[str, list[Event]]] = [
        ("not told", [asked]),
        ("not written", [TOLD, asked]),
        # the write was made and its tool refused it (Hermes' memory full): nothing was stored
        (
            "not written",
            [TOLD, *write_events("cat: Miso", 3), MemoryCallFailed(call=4, detail="full"), asked],
        ),
        ("not retrieved", [TOLD, *write_events("cat: Miso", 3), asked]),  # header 0, exchange 1, TOLD 2
        (
            "not used",
            [
                TOLD,
                *write_events("cat: Miso", 3),
                asked,
                Blob(ref=blob_ref(RESULT), data=RESULT),
                LLMExchange(kind="ordinary", question_id="q1", message_refs=[blob_ref(RESULT)]),
            ],
        ),
    ]
    for n, (link, events) in enumerate(cases):
        run = run_of(tmp_path / str(n), bench, events)
        assert Diagnoser(run).broken_link("q1", "Miso") == link, (n, link)


def test_still_in_context_means_it_was_not_used_and_unrecorded_traffic_is_unknown(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    bench = make_benchmark()
    in_context = run_of(
        tmp_path / "a",
        bench,
        [TOLD, Asked(question_id="q1"), EvidenceCheck(question_id="q1", in_context=True)],
    )
    assert Diagnoser(in_context).broken_link("q1", "Miso") == "not used"
    blind = run_of(tmp_path / "b", bench, [TOLD, Asked(question_id="q1")], observed=False)
    assert Diagnoser(blind).broken_link("q1", "Miso") == UNKNOWN


def test_a_list_answer_written_in_pieces_is_written(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    bench = make_benchmark()
    told = Said(text="The goldfish are Salt and Pepper", purpose="fact")
    events: list[Event] = [told, *write_events("goldfish: Salt", 3), *write_events("goldfish: Pepper", 5)]
    run = run_of(tmp_path, bench, [*events, Asked(question_id="q1")])
    assert Diagnoser(run).broken_link("q1", "Salt, Pepper") == "not retrieved"  # both pieces were written
