"""The embedded mitmproxy: one Master per process, one reverse-mode listener per run.

All mitmproxy-touching code lives in this module (mitmproxy has no supported embedding API;
we pin `mitmproxy>=12,<13`). One Master serves every run in the process — mitmproxy keeps its
context in module globals, so two Masters would record each other's traffic — and each run
gets its own `reverse:UPSTREAM@127.0.0.1:PORT` mode; flows are routed to the run's
`RunRecorder` by the mode they arrived on. Server-sent events are passed to the agent chunk by
chunk while the whole body is kept for the recorder (`store_streamed_bodies`).

Reverse mode only ever forwards to the configured upstream: the listener is not an open proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from mitmproxy import http, master, options
from mitmproxy.addons import default_addons
from mitmproxy.proxy import mode_specs

from adapters.http_server import free_port, warn_if_exposed
from gateway.log.runlog import REFUSED_TRAFFIC
from gateway.traffic.recorder import RawExchange, RunRecorder

_REFUSED = json.dumps(
    {
        "type": "error",
        "error": {
            "type": "api_error",
            "message": REFUSED_TRAFFIC,
        },
    }
).encode()


@dataclass(frozen=True)
class Listener:
    mode: str
    url: str
    upstream: str


def _refusal() -> http.Response:
    return http.Response.make(503, _REFUSED, {"content-type": "application/json"})


# the last event of a stream in the wire formats we know (Anthropic Messages, OpenAI Chat
# Completions, OpenAI Responses): the part of a stream held until the exchange is in the log
_FINAL_EVENTS = (b"event: message_stop", b"data: [DONE]", b"response.completed")


class _StreamGate:
    """The stream callable of a streamed (server-sent events) response. Chunks go on to the
    agent as they come — an agent's first token is never delayed — until one holds the
    format's final event (`_FINAL_EVENTS`); from there on chunks are held, and go out only
    once the exchange is in the log. If logging fails the flow is killed: the agent gets a
    stream without its final event and without an end of message — an error in every client,
    never a whole unrecorded answer. (A format we don't know has no final event to hold; the
    missing end of message is then what the agent sees.)

    Returns lists, never `b""`: mitmproxy sends an empty bytes chunk, which in chunked
    encoding is the end-of-body marker."""

    def __init__(self, addon: _TrafficAddon, flow: http.HTTPFlow) -> None:
        self.addon = addon
        self.flow = flow
        self.held: list[bytes] = []
        self.body = bytearray()

    def __call__(self, chunk: bytes) -> list[bytes]:
        if chunk:
            self.body += chunk
            recent = self.body[-(len(chunk) + 32) :]  # a marker may straddle two chunks
            if self.held or any(marker in recent for marker in _FINAL_EVENTS):
                self.held.append(chunk)
                return []
            return [chunk]
        if self.addon.record(self.flow, error="", body=bytes(self.body)):
            return self.held
        self.flow.kill()
        return []


class _TrafficAddon:
    """Routes each flow to its run's recorder; keeps streams flowing; fails closed: an answer
    goes to the agent only once it is in the log — a plain one is replaced by a 503, a stream
    is cut (`_StreamGate`), a streamed call is refused before it starts when the log can't
    take it (`RunRecorder.ready`)."""

    def __init__(self) -> None:
        self.recorders: dict[str, RunRecorder] = {}
        self.first_byte: dict[str, float] = {}
        self.in_flight: set[str] = set()  # flows counted in their recorder's `in_flight`

    def _recorder(self, flow: http.HTTPFlow) -> RunRecorder | None:
        return self.recorders.get(flow.client_conn.proxy_mode.full_spec)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        recorder = self._recorder(flow)
        if recorder is None or not recorder.healthy:
            flow.response = _refusal()
            flow.metadata["marathon_recorded"] = True  # settled: nothing to record
            if recorder is not None:
                recorder.refused(flow.request.method, flow.request.path)
            return
        # chunks are forwarded as wire bytes: ask for them uncompressed so they can be read
        flow.request.headers.pop("accept-encoding", None)
        self.in_flight.add(flow.id)
        recorder.in_flight += 1

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        assert flow.response is not None
        self.first_byte[flow.id] = time.time()
        if "text/event-stream" not in flow.response.headers.get("content-type", ""):
            return
        recorder = self._recorder(flow)
        if recorder is not None and flow.id in self.in_flight and recorder.ready():
            flow.response.stream = _StreamGate(self, flow)
        # else: not streamed; `response` replaces it with a refusal once the body is in

    def response(self, flow: http.HTTPFlow) -> None:
        if not flow.metadata.pop("marathon_recorded", False) and not self.record(flow, error=""):
            assert flow.response is not None
            if not flow.response.stream:
                flow.response = _refusal()

    def error(self, flow: http.HTTPFlow) -> None:
        if not flow.metadata.pop("marathon_recorded", False):
            self.record(flow, error=str(flow.error) if flow.error else "connection failed")

    def record(self, flow: http.HTTPFlow, error: str, body: bytes | None = None) -> bool:
        """Log the flow's exchange (`body`: a streamed response's, collected by its gate);
        False when it could not be logged, and the answer must not reach the agent whole."""
        flow.metadata["marathon_recorded"] = True
        recorder = self._recorder(flow)
        first = self.first_byte.pop(flow.id, 0.0)
        if recorder is not None and flow.id in self.in_flight:
            self.in_flight.discard(flow.id)
            recorder.in_flight -= 1
        if recorder is None:
            return False
        if not recorder.healthy:
            recorder.refused(flow.request.method, flow.request.path)
            return False
        response = flow.response
        if body is None and response is not None:
            body = response.get_content(strict=False) or b""
        raw = RawExchange(
            method=flow.request.method,
            path=flow.request.path,
            request_headers=dict(flow.request.headers.items()),
            request_body=flow.request.get_content(strict=False) or b"",
            status=response.status_code if response else 0,
            response_headers=dict(response.headers.items()) if response else {},
            response_body=body or b"",
            started=flow.request.timestamp_start,
            first_byte=first,
            ended=(response.timestamp_end or time.time()) if response else time.time(),
            error=error,
        )
        try:
            recorder.record(raw)
        except Exception as exc:  # fail closed: never let an unrecorded answer through
            logging.getLogger(__name__).error("recorder failed: %s", exc)
            recorder.refused(flow.request.method, flow.request.path)
            return False
        return True


class RecorderHub:
    """The process's one mitmproxy Master, started on first use and stopped when the last
    listener closes. Use `RecorderHub.shared()`; all methods run on the caller's event loop."""

    _shared: RecorderHub | None = None

    def __init__(self) -> None:
        self.addon = _TrafficAddon()
        self.master: master.Master | None = None
        self.task: asyncio.Task[None] | None = None
        self.modes: list[str] = []
        # mitmproxy writes a CA (with its private key) into its confdir; it exists only while
        # the master runs, so a finished process leaves none behind in the shared temp folder
        self.confdir: tempfile.TemporaryDirectory[str] | None = None
        self._lock = asyncio.Lock()

    @classmethod
    def shared(cls) -> RecorderHub:
        if cls._shared is None:
            cls._shared = cls()
        return cls._shared

    async def _start(self) -> master.Master:
        if self.master is not None:
            return self.master
        self.confdir = tempfile.TemporaryDirectory(prefix="marathon-mitm-")
        m = master.Master(options.Options())
        m.addons.add(*default_addons())
        m.addons.add(self.addon)
        # options after the addons: addon options don't exist before, and constructor values are unseen
        m.options.update(
            listen_host="127.0.0.1",
            mode=[],
            store_streamed_bodies=True,
            confdir=self.confdir.name,
            connection_strategy="lazy",
        )
        self.master = m
        self.task = asyncio.create_task(m.run())
        await asyncio.sleep(0)
        return m

    async def open(
        self, upstream: str, recorder: RunRecorder, port: int = 0, host: str = "127.0.0.1"
    ) -> Listener:
        """Start a listener that forwards to `upstream` and records into `recorder`."""
        warn_if_exposed(host, "the LLM-traffic recorder")
        async with self._lock:
            m = await self._start()
            port = port or free_port(host)
            spec = mode_specs.ProxyMode.parse(f"reverse:{upstream}@{host}:{port}")
            self.addon.recorders[spec.full_spec] = recorder
            await self._apply(m, [*self.modes, spec.full_spec])
            server = self._proxyserver(m).servers[spec]
            if server.last_exception is not None or not server.listen_addrs:
                self.addon.recorders.pop(spec.full_spec, None)
                await self._apply(m, [x for x in self.modes if x != spec.full_spec])
                raise OSError(f"recorder can't listen on {host}:{port}: {server.last_exception}")
            bound = server.listen_addrs[0][1]
            return Listener(spec.full_spec, f"http://{host}:{bound}", upstream)

    async def close(self, listener: Listener) -> None:
        async with self._lock:
            if self.master is None:
                return
            await self._apply(self.master, [x for x in self.modes if x != listener.mode])
            self.addon.recorders.pop(listener.mode, None)
            if not self.modes:
                await self._stop()

    @staticmethod
    def _proxyserver(m: master.Master) -> Any:
        return m.addons.get("proxyserver")

    async def _apply(self, m: master.Master, modes: list[str]) -> None:
        self.modes = modes
        m.options.update(mode=modes)
        await self._proxyserver(m).servers.update([mode_specs.ProxyMode.parse(x) for x in modes])

    async def _stop(self) -> None:
        m, task = self.master, self.task
        self.master, self.task = None, None
        if m is None:
            return
        ps = self._proxyserver(m)
        await ps.servers.update([])
        for _ in range(50):  # let in-flight flows finish
            if not ps.connections:
                break
            await asyncio.sleep(0.02)
        m.shutdown()
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.confdir is not None:
            self.confdir.cleanup()
            self.confdir = None
