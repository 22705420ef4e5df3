"""A stop signal ends a command within 10 s, whatever its clean-up is doing (gateway/cli/stopping.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import pytest

from gateway.cli.stopping import STOP_GRACE, run_until_stopped


def test_a_stop_ends_a_command_within_10_s_while_its_clean_up_renders() -> None:
    """Issue 59: a run stopped with SIGTERM rendered its report of a long log in its `finally`
    for over 5 minutes; the cancellation waited for it. Here the clean-up computes for 30 s."""
    rendered = []

    async def command() -> None:
        try:
            await asyncio.sleep(60)
        finally:  # a report of a long log, rendered synchronously: no await to cancel at
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                sum(range(1000))
            rendered.append(True)

    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_until_stopped(command())
    assert time.monotonic() - started < 10 and not rendered
    assert STOP_GRACE < 10


def test_a_clean_up_that_ends_in_time_ends_the_command_as_before() -> None:
    cleaned = []

    async def command() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.2)
            cleaned.append(True)

    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()
    with pytest.raises(KeyboardInterrupt):
        run_until_stopped(command())
    assert cleaned == [True]
    time.sleep(STOP_GRACE + 0.5)  # the grace timer was cancelled: no late interrupt arrives


def test_a_stop_ends_a_command_of_many_runs_within_10_s_whatever_each_renders() -> None:
    """Parallel runs: each run's clean-up renders its own report. The first interrupt ends the
    one under way; the loop then cleans up the others — each is interrupted in turn."""
    rendered = []

    async def one() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            deadline = time.monotonic() + 6
            while time.monotonic() < deadline:
                sum(range(1000))
            rendered.append(True)

    async def command() -> None:
        await asyncio.gather(*(one() for _ in range(4)))

    threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_until_stopped(command())
    assert time.monotonic() - started < 10
