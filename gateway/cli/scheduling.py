"""Running a matrix's runs: which at once, in what order, in this process or on a Ray
cluster (`marathon run`, `demo`, and `bench/`). What a caller may rely on: `run_all` returns
one outcome or exception per spec, in order; a run that fails in our code doesn't stop the
others; Ctrl-C interrupts all of them (each logs `interrupted`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from gateway.cli.stopping import run_until_stopped
from gateway.cluster.ray_runs import RayCluster, RemoteRun
from gateway.run.agents import shared_resources
from gateway.run.config import RunSpec
from gateway.run.fork_group import clear_stale_forks
from gateway.run.placement import RayExecutor, address_problem
from gateway.run.progress import ProgressBoard
from gateway.run.run_header import RunOutcome
from gateway.run.runner import Run


def run_all(
    specs: Sequence[RunSpec],
    recordings: Path,
    fresh: bool,
    parallel: int = 1,
    executor: RayExecutor | None = None,
) -> list[RunOutcome | BaseException]:
    """Run `specs`, at most `parallel` at once, each isolated (its own log, agent, recorder
    listener and ports). A run that fails in our code doesn't stop the others; Ctrl-C
    interrupts all of them cleanly (each logs `interrupted`) and the same command resumes all.
    With a Ray `executor` each run is a task on the cluster; its resources, not `parallel`,
    decide how many run at once. `fresh` first clears the forks of every run taught again
    (gateway/run/fork_group.py); `ForkInUse` when one is being written, before anything runs."""
    if fresh:
        cleared = clear_stale_forks(recordings, {spec.id for spec in specs})
        for parent, count in Counter(_parent_of(fork, specs) for fork in cleared).items():
            print(f"[{parent}] --fresh: cleared {count} fork(s) of its earlier teaching", flush=True)

    async def go() -> list[RunOutcome | BaseException]:
        if executor is None:
            runs = [Run(spec, recordings, fresh=fresh) for spec in specs]
            return await schedule(runs, specs, fresh, asyncio.Semaphore(parallel), None)
        cluster = RayCluster(executor, recordings)
        cluster.connect()
        try:
            remote = [cluster.run(spec, fresh) for spec in specs]  # all feasible, or none starts
            return await schedule(remote, specs, fresh, asyncio.Semaphore(len(remote)), cluster)
        finally:
            cluster.close()

    return run_until_stopped(go())


def _parent_of(fork: Path, specs: Sequence[RunSpec]) -> str:
    """The run of `specs` whose teaching a cleared fork was of (its name starts with it)."""
    return max((s.id for s in specs if fork.name.startswith(s.id + ".")), key=len, default=fork.name)


async def schedule(
    runs: Sequence[Run | RemoteRun],
    specs: Sequence[RunSpec],
    fresh: bool,
    gate: asyncio.Semaphore,
    cluster: RayCluster | None,
) -> list[RunOutcome | BaseException]:
    """Start each run when it may: the second run of an A/B pair after the first, runs sharing
    an agent, a fixed port or a state folder one after another, at most `gate` at once."""
    # a single run too: a run of an hour that prints nothing looks stuck (on a terminal the line
    # is redrawn in place; in a CI log a line every few seconds when something changed)
    board = ProgressBoard([r.progress for r in runs])
    # the second run of an A/B pair starts when the first has ended: the drawn order holds
    first_done = {s.run_meta.pair: asyncio.Event() for s in specs if s.run_meta.position == 1}

    # a fork starts when the run it forks from has ended (its checkpoint is there)
    parents = {s.parent[0] for s in specs if s.parent is not None}
    ended = {r.spec.id: asyncio.Event() for r in runs if r.spec.id in parents}

    # runs that share an agent, a fixed port or a state folder take turns
    held = {r.spec.id: sorted(shared_resources(r.spec.agent)) for r in runs}
    locks = {key: asyncio.Lock() for keys in held.values() for key in keys}

    async def one(run: Run | RemoteRun) -> RunOutcome:
        pair = run.spec.run_meta.pair
        if run.spec.run_meta.position == 2 and pair in first_done:
            await first_done[pair].wait()
        if run.spec.parent is not None and run.spec.parent[0] in ended:
            await ended[run.spec.parent[0]].wait()
        try:
            async with contextlib.AsyncExitStack() as stack:
                for key in held[run.spec.id]:  # always in the same order: no deadlock
                    await stack.enter_async_context(locks[key])
                return await gated(run)
        finally:
            if pair in first_done and run.spec.run_meta.position == 1:
                first_done[pair].set()
            if run.spec.id in ended:
                ended[run.spec.id].set()

    async def gated(run: Run | RemoteRun) -> RunOutcome:
        async with gate:
            if len(runs) == 1:
                print(
                    f"[{run.spec.id}] {'starting fresh' if fresh else 'starting or resuming'} → {run.run_dir}",
                    flush=True,
                )
            return await run.execute()

    watchers = [asyncio.create_task(board.watch())]
    if cluster is not None:
        watchers.append(asyncio.create_task(cluster.watch_nodes()))
    try:
        return list(await asyncio.gather(*(one(r) for r in runs), return_exceptions=True))
    finally:
        for watcher in watchers:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher


def choose_executor(
    configured: RayExecutor | None, flag: str | None, address: str | None
) -> RayExecutor | None:
    """The config's `executor`, as `--executor` / `--address` change it."""
    if flag == "local":
        if address:
            raise ValueError("--address names a Ray cluster; it can't go with --executor local")
        return None
    if flag is None and address is None:
        return configured
    base = configured or RayExecutor()
    if address is None:
        return base
    if problem := address_problem(address):
        raise ValueError(problem)
    return replace(base, address=address)
