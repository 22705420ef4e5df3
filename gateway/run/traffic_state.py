"""The recorder's view of a live run: which phase and question the run is in, which canaries
armed (`gateway.traffic.notices`, shared with the re-derivation of a recorded run), and the
calls the proxy still holds.

The LLM-traffic recorder attributes each exchange to the question being asked and watches
for revoked canaries; it learns both from the runner's actions as they happen, and — on
resume — from the logged events, so a resumed run's recorder is in the state it was in
when the run stopped. What a caller may rely on: feeding `replay` a log's events and then
the live actions gives the same recorder state as one uninterrupted run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from gateway.log.events import Event
from gateway.run.agents import recording_wanted, traffic_profile
from gateway.traffic.notices import RecorderNotices
from gateway.traffic.recorder import RunRecorder
from persona.benchmark.model import Benchmark
from persona.grading.exact import contains_expected


class RunTraffic(RecorderNotices):
    """Keeps a run's `RunRecorder` told where the run is (`RecorderNotices`), and waits for the
    calls the proxy still holds; built by `open_traffic`."""

    async def settled(self, timeout: float = 2.0) -> None:
        """Wait (briefly) for model calls the proxy still holds: a reply can reach us a moment
        before the call it came from is handed to the recorder."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self.recorder.in_flight > 0 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.01)


def open_traffic(
    agent: dict[str, Any],
    benchmark: Benchmark,
    log: Callable[[Event], Event],
    previous: list[Event],
    log_check: Callable[[], None] | None = None,
    secrets: Iterable[str] = (),
) -> RunTraffic | None:
    """The run's recorder, its state rebuilt from `previous` (the logged events, on resume);
    None when the agent's settings ask for no recording. `log_check`: see `RunRecorder`."""
    if not recording_wanted(agent):
        return None
    recorder = RunRecorder(
        log, traffic_profile(agent), evidence=contains_expected, log_check=log_check, secrets=secrets
    )
    traffic = RunTraffic(recorder, benchmark)
    traffic.replay(previous)
    return traffic
