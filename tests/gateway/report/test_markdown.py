"""The per-run report: what it says about the agent's traffic."""

from __future__ import annotations

from pathlib import Path

from gateway.log.events import ErrorEvent, Header, LLMExchange, MemoryCallFailed, MemoryCallSeen
from gateway.log.runlog import EVENTS_FILE, REFUSED_TRAFFIC, RunLogWriter, read_log
from gateway.report.markdown import render_markdown
from gateway.report.summary import summarize
from persona.benchmark.loader import load_benchmark
from tests.conftest import BenchFactory


def test_an_agents_memory_flushes_are_in_the_report_not_only_in_inspect(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    path = tmp_path / EVENTS_FILE
    with RunLogWriter.create(path, Header(run_id="r")) as log:
        for kind in ("ordinary", "memory_flush", "summary", "ordinary"):
            log.append(LLMExchange(kind=kind, model="m"))
    report = render_markdown(summarize(read_log(path), load_benchmark(make_benchmark())))
    assert "- memory flushes seen: 1 (the agent's silent turns storing memories before it compacts)" in report


def test_memory_calls_the_tool_refused_are_counted_apart(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    path = tmp_path / EVENTS_FILE
    with RunLogWriter.create(path, Header(run_id="r")) as log:
        log.append(LLMExchange(model="m"))
        calls = [log.append(MemoryCallSeen(tool="memory", operation="write")) for _ in range(3)]
        log.append(MemoryCallSeen(tool="session_search", operation="read"))
        log.append(MemoryCallFailed(call=calls[2].seq, detail="would exceed the limit"))
    report = render_markdown(summarize(read_log(path), load_benchmark(make_benchmark())))
    assert "- memory tool calls: 4 (1 read, 3 write), 1 of them returned an error" in report


def test_an_agent_error_caused_by_the_recorders_refusal_is_reported_as_ours(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    """Runs logged before a full disk stopped them `log_failed` hold agent errors quoting the
    recorder's refusal: the report lists them with marathon's errors, not the agent's."""
    quoted = f"HTTP 502: model call failed: Error code: 503 - {{'message': '{REFUSED_TRAFFIC}'}}"
    path = tmp_path / EVENTS_FILE
    with RunLogWriter.create(path, Header(run_id="r")) as log:
        log.append(ErrorEvent(source="agent", kind="http_status", message=quoted))
        log.append(ErrorEvent(source="agent", kind="timeout", message="no reply within 5 s"))
    summary = summarize(read_log(path), load_benchmark(make_benchmark()))
    assert [e.kind for e in summary.agent_errors] == ["timeout"]
    report = render_markdown(summary)
    assert f"- runner recorder_refused: {quoted}" in report
    assert "- agent http_status" not in report
