"""The mitmproxy addon's hooks driven directly with mitmproxy's own test helpers."""

from __future__ import annotations

from mitmproxy.test import taddons, tflow

from gateway.log.events import LLMExchange
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


def test_event_streams_are_streamed() -> None:
    addon = _TrafficAddon()
    with taddons.context(addon):
        flow = tflow.tflow(resp=True)
        assert flow.response is not None
        flow.response.headers["content-type"] = "text/event-stream; charset=utf-8"
        addon.responseheaders(flow)
        assert flow.response.stream


def test_a_failing_log_replaces_the_answer() -> None:
    addon = _TrafficAddon()
    with taddons.context(addon):
        flow = tflow.tflow(resp=True)
        recorder = RunRecorder(MemoryLog(broken=True), load_profile(None))
        addon.recorders[flow.client_conn.proxy_mode.full_spec] = recorder
        addon.response(flow)
        assert flow.response is not None and flow.response.status_code == 503
        assert not recorder.healthy
