"""The mitmproxy addon's hooks driven directly with mitmproxy's own test helpers."""

from __future__ import annotations

from mitmproxy import http
from mitmproxy.flow import Error
from mitmproxy.test import taddons, tflow

from gateway.log.events import LLMExchange
from gateway.log.runlog import RunLogWriteError
from gateway.traffic.hub import _TrafficAddon
from gateway.traffic.profile import load_profile
from gateway.traffic.recorder import RunRecorder
from tests.gateway.traffic.conftest import MemoryLog


def test_a_flow_of_no_run_is_refused() -> None:
    addon = _TrafficAddon()
    with taddons.context(addon):
        flow = tflow.tflow()
        addon.requestheaders(flow)
        assert flow.response is not None and flow.response.status_code == 503


def test_a_finished_flow_is_recorded_for_its_run() -> None:
    addon = _TrafficAddon()
    log = MemoryLog()
    with taddons.context(addon):
        flow = tflow.tflow(resp=True)
        addon.recorders[flow.client_conn.proxy_mode.full_spec] = RunRecorder(log, load_profile(None))
        flow.request.headers["accept-encoding"] = "gzip"
        flow.request.headers["authorization"] = "Bearer sk-secret-canary"
        addon.requestheaders(flow)
        assert "accept-encoding" not in flow.request.headers  # chunks must stay readable
        addon.responseheaders(flow)
        addon.response(flow)
    (exchange,) = [e for e in log.events if isinstance(e, LLMExchange)]
    assert exchange.status == 200 and exchange.api == "unknown"
    assert exchange.request_headers["authorization"] == "«redacted»"


def _streamed_flow(addon: _TrafficAddon, recorder: RunRecorder) -> http.HTTPFlow:
    flow = tflow.tflow(resp=True)
    assert flow.response is not None
    addon.recorders[flow.client_conn.proxy_mode.full_spec] = recorder
    flow.response.headers["content-type"] = "text/event-stream; charset=utf-8"
    addon.requestheaders(flow)
    addon.responseheaders(flow)
    return flow


SSE = [b"event: message_start\ndata: {}\n\n", b"event: content_block_delta\ndata: {}\n\n"]
FINAL = [b"event: message_delta\ndata: {}\n\nevent: message_st", b"op\ndata: {}\n\n"]


def test_event_streams_pass_at_once_and_only_the_final_event_waits_for_the_log() -> None:
    addon = _TrafficAddon()
    log = MemoryLog()
    with taddons.context(addon):
        flow = _streamed_flow(addon, RunRecorder(log, load_profile(None)))
        gate = flow.response.stream if flow.response else None
        assert callable(gate)
        assert [gate(chunk) for chunk in SSE] == [[chunk] for chunk in SSE]  # not delayed
        assert gate(FINAL[0]) == [FINAL[0]]  # the marker is not whole yet
        assert gate(FINAL[1]) == []  # "message_stop" completed: held
        assert not log.of(LLMExchange)
        assert gate(b"") == [FINAL[1]]  # released once the exchange is in the log
        assert len(log.of(LLMExchange)) == 1 and flow.error is None
        addon.response(flow)  # the hook after the stream records nothing twice
    assert len(log.of(LLMExchange)) == 1


def test_a_stream_whose_log_fails_is_cut_before_its_final_event() -> None:
    addon = _TrafficAddon()
    with taddons.context(addon):
        recorder = RunRecorder(MemoryLog(broken=True), load_profile(None))
        flow = _streamed_flow(addon, recorder)
        gate = flow.response.stream if flow.response else None
        assert callable(gate)
        assert gate(SSE[0]) == [SSE[0]] and gate(b"data: [DONE]\n\n") == []
        assert gate(b"") == []  # nothing more goes out
        assert flow.error is not None and flow.error.msg == Error.KILLED_MESSAGE
        assert not recorder.healthy


def test_a_stream_is_refused_before_it_starts_when_the_log_has_no_room() -> None:
    def no_room() -> None:
        raise RunLogWriteError(28, "only 12 bytes free for run log")

    addon = _TrafficAddon()
    refusals: list[str] = []
    with taddons.context(addon):
        recorder = RunRecorder(MemoryLog(), load_profile(None), echo=refusals.append, log_check=no_room)
        flow = _streamed_flow(addon, recorder)
        assert flow.response is not None and not flow.response.stream
        addon.response(flow)
        assert flow.response.status_code == 503 and b"cannot write its log" in flow.response.content
    assert not recorder.healthy and "only 12 bytes free" in (recorder.failure or "")
    assert len(refusals) == 1 and refusals[0].startswith("REFUSED GET /path")


def test_a_failing_log_replaces_the_answer() -> None:
    addon = _TrafficAddon()
    with taddons.context(addon):
        flow = tflow.tflow(resp=True)
        recorder = RunRecorder(MemoryLog(broken=True), load_profile(None))
        addon.recorders[flow.client_conn.proxy_mode.full_spec] = recorder
        addon.response(flow)
        assert flow.response is not None and flow.response.status_code == 503
        assert not recorder.healthy
