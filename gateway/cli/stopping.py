"""How every `marathon` command stops when told: Ctrl-C, `kill` (SIGTERM) and a closed terminal
(SIGHUP) all end it the same clean way, however it was started.

Why not `asyncio.run`: it turns SIGINT into a cancellation of the main task only when SIGINT
has its default handler. A command started in the background from a script (`marathon run
cfg.jsonc &`, `nohup`, many CI runners) inherits SIGINT as *ignored* — rightly, a Ctrl-C in the
script's terminal is not meant for it — and then nothing stopped it but SIGKILL: our SIGTERM
handler re-raised SIGINT, which was ignored. Here SIGTERM and SIGHUP cancel the main task
themselves, and SIGINT does too unless it was ignored when the command started.

What a caller may rely on: `run_until_stopped(coro)` returns what `coro` returns; the first stop
signal cancels it (its `finally` blocks run: runs log `interrupted`, agents are ended, servers
closed) and then raises KeyboardInterrupt; a second signal raises KeyboardInterrupt at once. A
cancellation waits for the code under way to yield, and a `finally` may render a report of a
long log for minutes (issue 59: a SIGTERM took over 5 minutes): so `STOP_GRACE` seconds after
the first signal, if the command has not ended, KeyboardInterrupt is raised wherever it is. What
a report writer leaves then is whole or absent (gateway/whole_file.py), and the agents are
ended by the exit itself (adapters/lifecycle.py) — a stop signal ends a command within 10 s.
Outside of it (the synchronous parts of a command) a stop signal raises KeyboardInterrupt.
"""

from __future__ import annotations

import _thread
import asyncio
import signal
import threading
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
STOP_GRACE = 5.0  # seconds a stopped command may take to end cleanly before it is interrupted


def stop_signals_interrupt() -> None:
    """For the synchronous parts of a command: SIGTERM and SIGHUP raise KeyboardInterrupt, as
    Ctrl-C does (whatever SIGINT's disposition, which is left as it is)."""

    def as_ctrl_c(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    for sig in STOP_SIGNALS:
        signal.signal(sig, as_ctrl_c)


def sigint_ignored() -> bool:
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def run_until_stopped[T](coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)` that SIGTERM, SIGHUP and (unless ignored) SIGINT stop cleanly."""
    ended = threading.Event()
    stops = 0
    task: asyncio.Task[T] | None = None
    loop: asyncio.AbstractEventLoop | None = None

    def on_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stops
        stops += 1
        if stops == 1 and task is not None and loop is not None and not task.done():
            task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake a loop asleep in select()
            threading.Thread(target=interrupt_if_still_running, daemon=True).start()
            return
        raise KeyboardInterrupt

    def interrupt_if_still_running() -> None:
        """After `STOP_GRACE` s, a second stop, sent to ourselves — again each half second, until the
        command has ended (the loop's own clean-up of other tasks may compute too). SIGTERM,
        whose handler is ours whatever SIGINT's disposition."""
        if ended.wait(STOP_GRACE):
            return
        while not ended.is_set():
            _thread.interrupt_main(signal.SIGTERM)
            if ended.wait(0.5):
                return

    wanted = STOP_SIGNALS if sigint_ignored() else (signal.SIGINT, *STOP_SIGNALS)
    previous = {sig: signal.signal(sig, on_stop) for sig in wanted}
    try:  # the handlers stay ours until the loop's clean-up has ended, too
        with asyncio.Runner() as runner:
            loop = runner.get_loop()
            task = loop.create_task(coro)
            try:
                return loop.run_until_complete(task)
            except asyncio.CancelledError:
                if stops and task.uncancel() == 0:
                    raise KeyboardInterrupt from None
                raise
    finally:
        ended.set()
        for sig, handler in previous.items():
            if signal.getsignal(sig) is on_stop:
                signal.signal(sig, handler)


RUNS = ("run", "demo", "replay")  # commands that leave a run log to resume
REPORTS = ("report", "compare")  # commands that write reports whole or not at all


def interrupted_message(command: str | None, fresh: bool = False) -> str:
    """What Ctrl-C left behind, for the command it stopped."""
    if command in RUNS:
        again = "it again without --fresh" if fresh else "the same command again"
        return f"interrupted; the run log is intact — run {again} to resume"
    if command in REPORTS:
        return (
            "interrupted; the run logs are untouched and no report was half-written "
            "(each is replaced whole or not at all) — run it again for the reports"
        )
    return "interrupted"
