"""Crafted logs with wrong-typed fields: every reader that displays skips the bad record and
says nothing false about the rest; resume refuses to build on it, naming the record."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.cli.logs import _event_line
from gateway.log.events import (
    Asked,
    CompactionSeen,
    ErrorEvent,
    Evaluation,
    Event,
    Header,
    InvalidEvent,
    LLMExchange,
    MemoryCallSeen,
    PhaseEntered,
    Replied,
    RunStart,
    Said,
)
from gateway.log.frames import frame
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError, RunLogWriter, read_log
from gateway.report.markdown import render_markdown
from gateway.report.summary import summarize
from gateway.viewer.watch import RunWatch
from persona.benchmark.loader import load_benchmark
from tests.conftest import DEMO

BENCH = load_benchmark(DEMO)
EVENTS: list[Event] = [
    RunStart(resumed=False, session_id="s1", llm_url="http://127.0.0.1:1"),
    PhaseEntered(index=0, chapter="ch1.md", title="One", require_all_facts=["profile"]),
    Said(text="hello", purpose="line", fact_ids=["profile:1.1"]),
    Replied(text="hi", elapsed=0.5),
    Asked(question_id="q1", text="Where do I live?", expected="Lisbon", tags=["update"]),
    LLMExchange(api="anthropic", model="m", usage={"input": 3, "output": 1}, question_id="q1"),
    MemoryCallSeen(tool="memory_search", operation="read", exchange=5, question_id="q1"),
    CompactionSeen(kind="summary", tokens_before=900, tokens_after=200, exchange=5, phase=0),
    Replied(text="Lisbon", elapsed=0.2),
    Evaluation(question_id="q1", score=10.0, reason="found", attempts=1, first_score=10.0, answer="Lisbon"),
    ErrorEvent(source="agent", kind="timeout", message="slow"),
]
INTS = st.integers(-(2**63), 2**64 - 1)  # what msgpack can hold
WRONG = st.one_of(
    st.text(max_size=5), INTS, st.floats(allow_nan=False), st.booleans(), st.none(),
    st.lists(INTS, max_size=2), st.dictionaries(st.text(max_size=3), INTS, max_size=2),
    st.binary(max_size=4),
)  # fmt: skip


def records() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / EVENTS_FILE
        with RunLogWriter.create(
            path, Header(run_id="r", benchmark={"name": BENCH.name, "hash": BENCH.content_hash})
        ) as w:
            for event in EVENTS:
                w.append(event)
        return [msgpack.unpackb(msgpack.packb(e.to_record()), raw=False) for e in read_log(path).events]


BASE = records()


def write_crafted(
    folder: Path, which: int, name: str, value: Any, base: list[dict[str, Any]] | None = None
) -> Path:
    run_dir = folder / "r"
    run_dir.mkdir(exist_ok=True)
    path = run_dir / EVENTS_FILE
    head = Header(run_id="r", benchmark={"name": BENCH.name, "hash": BENCH.content_hash}).to_record()
    crafted = [dict(r) for r in (BASE if base is None else base)]
    crafted[which][name] = value
    path.write_bytes(
        b"".join(frame(msgpack.packb(r, use_bin_type=True)) for r in [head | {"seq": 0}, *crafted])
    )
    return path


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_wrong_typed_field_never_crashes_a_reader_and_stops_resume(data: st.DataObject) -> None:
    which = data.draw(st.integers(0, len(BASE) - 1))
    name = data.draw(st.sampled_from(sorted(k for k in BASE[which] if k != "t")))
    value = data.draw(WRONG)
    with tempfile.TemporaryDirectory() as folder:
        path = write_crafted(Path(folder), which, name, value)
        log = read_log(path)  # never raises on a field
        invalid = [e for e in log.events if isinstance(e, InvalidEvent)]
        render_markdown(summarize(log, BENCH))  # `report`
        for event in log.events:
            _event_line(event)  # `inspect`
        watch = RunWatch(path.parent)
        asyncio.run(watch.refresh())
        watch.summary(), watch.series()  # the viewer
        assert not watch.error
        if invalid:
            assert invalid[0].seq == BASE[which].get("seq", -1) or name == "seq"
            with pytest.raises(RunLogFormatError, match="is not what its type declares"):
                RunLogWriter.resume(path)
        else:
            RunLogWriter.resume(path)[0].close()


def test_score_ten_in_words_is_reported_with_its_record_and_the_rest_stands(tmp_path: Path) -> None:
    which = next(i for i, r in enumerate(BASE) if r["t"] == "evaluation")
    path = write_crafted(tmp_path, which, "score", "ten")
    log = read_log(path)
    (bad,) = [e for e in log.events if isinstance(e, InvalidEvent)]
    assert bad.problem == "a 'evaluation' record: field 'score' is str, expected float"
    summary = summarize(log, BENCH)
    assert summary.evaluations == {} and summary.exchanges == 1  # q1 is ungraded, not scored
    assert f"- record {bad.seq}: a 'evaluation' record: field 'score' is str" in render_markdown(summary)
    assert _event_line(bad).startswith("INVALID, skipped")
    with pytest.raises(RunLogFormatError, match=f"record {bad.seq} is not what its type declares"):
        RunLogWriter.resume(path)


@pytest.mark.parametrize(
    ("tag", "name", "value", "said"),
    [
        ("end", "reason", "str", "field 'reason' is 'str', expected one of"),
        ("say", "ts", 1e308, "field 'ts' is 1e+308, not a time"),
        ("say", "ts", float("nan"), "not a time"),
    ],
)
def test_a_value_no_reader_can_use_is_an_invalid_record(
    tmp_path: Path, tag: str, name: str, value: Any, said: str
) -> None:
    """`end.reason = "str"` raised ValueError in `inspect` and resume; a time of 1e308 raised
    OverflowError in `report`. Right type, impossible value: the record is skipped, said, and
    resume refuses to build on it."""
    from gateway.log.events import RunEnded

    ended = [RunEnded(reason="completed", seq=len(BASE) + 1).to_record()] if tag == "end" else []
    crafted_base = [*BASE, *ended]
    which = next(i for i, r in enumerate(crafted_base) if r["t"] == tag)
    path = write_crafted(tmp_path, which, name, value, crafted_base)
    log = read_log(path)
    (bad,) = [e for e in log.events if isinstance(e, InvalidEvent)]
    assert said in bad.problem
    from gateway.log.runlog import run_status

    run_status(log)  # `inspect`'s status line
    render_markdown(summarize(log, BENCH))  # `report`
    with pytest.raises(RunLogFormatError, match="is not what its type declares"):
        RunLogWriter.resume(path)


def test_a_header_created_past_any_calendar_is_a_malformed_log(tmp_path: Path) -> None:
    path = tmp_path / EVENTS_FILE
    head = Header(run_id="r", created=1e308).to_record() | {"seq": 0}
    path.write_bytes(frame(msgpack.packb(head, use_bin_type=True)))
    with pytest.raises(RunLogFormatError, match=r"malformed header record .*field 'created' is 1e\+308"):
        read_log(path)
