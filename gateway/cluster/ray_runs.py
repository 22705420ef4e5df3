"""The driver's side of runs on a Ray cluster, and the task each run is on its node.

`RayCluster` connects (`ray.init`), starts the `LogRelay` actor on this (the driver's) node and
hands out `RemoteRun`s: the same face as a local `Run` (`spec`, `run_dir`, `progress`,
`execute()`), so `marathon run` schedules pairs, shared resources and the progress board alike.
A `RemoteRun`:
- holds the run folder's `RunLock` here for as long as its task may write;
- skips a run whose log already ended for good, without a task;
- submits one Ray task with the run's resources and `max_retries` (a task whose node or worker
  died is retried by Ray on another node; the retry resumes from the driver's log);
- follows the log file here for the progress board (the figures are the log's), and the
  relay's record of where each run is for the board's node column;
- on Ctrl-C cancels its task — the runner there logs `interrupted` and ends its agent — and
  waits for it a while;
- writes the run's reports here when the task has ended.

The task (`execute_on_node`) runs the same `Run` as a local run, in a folder of the node's
temp dir: the agent's process, its state and its ports are the node's.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
import os
import shutil
import socket
import tempfile
from pathlib import Path
from typing import Any

from gateway.log.events import (
    Event,
    Header,
    RunStart,
)
from gateway.log.follower import LogFollower
from gateway.log.lineage import inherited_events
from gateway.log.lock import RunLock
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError, read_log, run_status
from gateway.log.vocabulary import TerminationReason
from gateway.report.markdown import reports_behind, write_reports
from gateway.run.agents import describe_agent
from gateway.run.checkpoints import SavedCheckpoint
from gateway.run.config import RunSpec
from gateway.run.forking import find_checkpoint
from gateway.run.placement import RayExecutor, Resources, resources_for
from gateway.run.progress import RunProgress
from gateway.run.run_header import RunOutcome
from gateway.run.runner import Run
from persona.benchmark.model import Benchmark

CANCEL_WAIT = 60.0  # s a stopped run gets to log `interrupted` and end its agent
STOP_POLL = 1.0  # s between a node's looks at the relay for a stop the driver asked for
FOLLOW_EVERY = 0.5  # s between reads of a run's log for the progress board


class ExecutorUnavailable(RuntimeError):
    """Ray can't be used: not installed, or no cluster at the address."""


def execute_on_node(
    spec: RunSpec,
    benchmark: Benchmark,
    relay: Any,
    fresh: bool,
    location: str,
    fork: tuple[SavedCheckpoint, list[Event], Any] | None = None,
) -> dict[str, Any]:
    """One run, as a Ray task on whichever node Ray chose: the same runner as a local run, its
    log streamed to the driver's relay. Returns how it ended (a `RunOutcome`'s fields).
    `fork`: a fork's checkpoint, inherited prefix and archive (an object-store reference), all
    found on the driver; the archive is written into this node's folder for the run to restore."""
    import ray

    from gateway.cluster.remote_log import RelayJournal

    node_id = ray.get_runtime_context().get_node_id()
    node = node_label(ray.util.get_node_ip_address(), node_id)  # type: ignore[no-untyped-call]
    # per node and per driver recordings folder: a run id names a run only within its recordings
    recordings = hashlib.sha256(location.encode()).hexdigest()[:10]
    work = Path(tempfile.gettempdir()) / "marathonbench-runs" / node_id[:12] / recordings
    # people's conversations and agents' memories: private, as the driver's recordings are
    umask = os.umask(0o077)
    try:
        work.mkdir(parents=True, exist_ok=True, mode=0o700)
        journal = RelayJournal(relay, spec.id, node, location, work / spec.id)
        lineage = None
        if fork is not None:
            checkpoint, inherited, archive = fork
            here = work / ".forks" / spec.id / checkpoint.archive.name
            here.parent.mkdir(parents=True, exist_ok=True)
            here.write_bytes(ray.get(archive))
            lineage = (dataclasses.replace(checkpoint, archive=here), inherited)
        run = Run(spec, work, fresh=fresh, journal=journal, benchmark=benchmark, lineage=lineage)
        outcome = asyncio.run(_until_stopped(run, relay))
    finally:
        os.umask(umask)
    if outcome.reason is not None and outcome.reason.final:  # the driver has the log and agent.log's end
        shutil.rmtree(work / spec.id, ignore_errors=True)
    return {
        "reason": outcome.reason.value if outcome.reason else None,
        "skipped": outcome.skipped,
        "resumed": outcome.resumed,
        "resent": outcome.resent,
        "detail": outcome.detail,
    }


async def _until_stopped(run: Run, relay: Any) -> RunOutcome:
    """Execute `run`, and stop it as Ctrl-C stops a local run when the driver asks the relay to
    (its own Ctrl-C): the runner is cancelled here, logs `interrupted` through the relay and
    ends its agent — a stop Ray's own cancel can't give, since a cancelled task's calls to the
    relay may be refused."""
    main = asyncio.current_task()
    assert main is not None

    async def watch() -> None:
        while True:
            await asyncio.sleep(STOP_POLL)
            with contextlib.suppress(Exception):  # a relay that doesn't answer: the runner's writes say so
                if await relay.stop_requested.remote(run.spec.id):
                    main.cancel()
                    return

    watcher = asyncio.create_task(watch())
    try:
        return await run.execute()
    except asyncio.CancelledError:
        return run.outcome  # it ended `interrupted`, logged
    finally:
        watcher.cancel()


def _unreachable(address: str) -> str:
    """Why the head at HOST:PORT can't be reached ("" when it answers, or for auto/local)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        return ""
    try:
        socket.create_connection((host, int(port)), timeout=3).close()
    except OSError as exc:
        return (
            f"no Ray cluster answers at {address} ({exc.strerror or exc}): start its head with "
            '`ray start --head --port PORT` (docs/scale-out.md), or use address "auto" on a node of it'
        )
    return ""


def node_label(ip: str, node_id: str) -> str:
    """How a run's log names its node: `IP/node id` (the board shows the id's first 6)."""
    return f"{ip}/{node_id}"


class RayCluster:
    """One `marathon run`'s connection to a Ray cluster: connect, make `RemoteRun`s, close."""

    def __init__(self, executor: RayExecutor, recordings: Path) -> None:
        self.executor = executor
        self.recordings = recordings
        self.relay: Any = None
        self._task: Any = None
        self._benchmarks: dict[tuple[object, ...], tuple[Benchmark, Any]] = {}
        self.runs: list[RemoteRun] = []

    def connect(self) -> None:
        try:
            import ray
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        except ImportError:
            raise ExecutorUnavailable(
                "`executor: ray` needs Ray, an optional extra: pip install -e '.[ray]' in a checkout "
                "(or pip install 'marathonbench[ray]')"
            ) from None
        from gateway.cluster.relay import LogRelay

        # "token authentication is enabled" on every connect: Ray's default, not news to the user
        logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
        options: dict[str, Any] = {"logging_level": logging.WARNING}
        if self.executor.runtime_env:
            options["runtime_env"] = self.executor.runtime_env
        if problem := _unreachable(self.executor.address):  # ray.init would retry for minutes
            raise ExecutorUnavailable(problem)
        try:
            if self.executor.address == "local":
                ray.init(include_dashboard=False, **options)
            else:
                ray.init(address=self.executor.address, **options)
        except ConnectionError as exc:
            raise ExecutorUnavailable(
                f"no Ray cluster at {self.executor.address!r}: start one with `ray start --head` "
                f'(docs/scale-out.md), or use address "local" ({exc})'
            ) from None
        here = ray.get_runtime_context().get_node_id()
        self.relay = (
            ray.remote(LogRelay)
            .options(
                num_cpus=0,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=here, soft=False),
            )
            .remote(str(self.recordings))
        )
        self._task = ray.remote(execute_on_node)

    def close(self) -> None:
        import ray

        if ray.is_initialized():
            ray.shutdown()

    def run(self, spec: RunSpec, fresh: bool) -> RemoteRun:
        run = RemoteRun(self, spec, fresh)
        self.check_feasible(spec.id, run.resources)
        self.runs.append(run)
        return run

    def check_feasible(self, run_id: str, resources: Resources) -> None:
        """Refuse, before any run starts, a run no node of the cluster could ever take (Ray
        would otherwise keep it pending for ever, with a warning in its own log)."""
        import ray

        wanted = {"CPU": resources.num_cpus, **resources.custom}
        if resources.memory is not None:
            wanted["memory"] = float(resources.memory)
        nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]
        if any(all(have.get(k, 0.0) >= v for k, v in wanted.items()) for have in nodes):
            return
        declared = sorted({k for have in nodes for k in have if not k.startswith("node:")})
        raise ExecutorUnavailable(
            f"run {run_id} asks for {wanted}, which no node of the cluster has (its nodes declare "
            f"{', '.join(declared)}); start nodes with e.g. `ray start --resources "
            "'{\"agent_slot\": 2}'` or lower the run's `resources`"
        )

    def benchmark(self, spec: RunSpec) -> tuple[Benchmark, Any]:
        """The run's benchmark, loaded here, and put in Ray's object store once per benchmark
        (nodes need none of its files)."""
        import ray

        # the transforms a fork's benchmark has (checkpoint, questions, restated evidence) too
        key = (
            str(spec.benchmark), spec.rung, str(spec.pool or ""),
            spec.checkpoint_at, spec.until, spec.questions, spec.restate,
        )  # fmt: skip
        if key not in self._benchmarks:
            benchmark = spec.played_benchmark()
            self._benchmarks[key] = (benchmark, ray.put(benchmark))
        return self._benchmarks[key]

    def affinity(self, node_id: str) -> Any:
        """A soft preference for `node_id` when it is alive (None otherwise): a resumed run goes
        back to the node holding its agent's state, and elsewhere only when that node is full."""
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        alive = {n.get("NodeID") for n in ray.nodes() if n.get("Alive")}  # type: ignore[no-untyped-call]
        if not node_id or node_id not in alive:
            return None
        return NodeAffinitySchedulingStrategy(node_id=node_id, soft=True)

    async def watch_nodes(self) -> None:
        """Keep every run's `progress.node` up to date from the relay (for the board)."""
        while True:
            with contextlib.suppress(Exception):  # the board is best effort; the runs are not
                where: dict[str, str] = await self.relay.where.remote()
                for run in self.runs:
                    run.progress.node = where.get(run.spec.id, run.progress.node)
            await asyncio.sleep(1.0)


class RemoteRun:
    def __init__(self, cluster: RayCluster, spec: RunSpec, fresh: bool) -> None:
        self.cluster = cluster
        self.spec = spec
        self.fresh = fresh
        self.run_dir = cluster.recordings / spec.id
        self.benchmark, self._benchmark_ref = cluster.benchmark(spec)
        self.resources = resources_for(spec.resources, spec.agent)
        self.progress = RunProgress(
            spec.id,
            len(self.benchmark.phases),
            len(self.benchmark.questions),
            stand_in=bool(describe_agent(spec.agent).get("offline_stand_in")),
        )
        self._follower = LogFollower(self.run_dir / EVENTS_FILE)

    async def execute(self) -> RunOutcome:
        """Run (or resume) on the cluster to an end. Raises `RunInUse` when another process
        writes this run, and what the run raised on its node (a damaged log, a changed benchmark)."""
        lock = RunLock.acquire(self.run_dir)
        try:
            return await self._execute()
        finally:
            lock.release()

    async def _execute(self) -> RunOutcome:
        from ray.exceptions import RayError, RayTaskError, TaskCancelledError

        log_path = self.run_dir / EVENTS_FILE
        outcome = RunOutcome(self.spec.id, self.run_dir, None)
        options = {
            **self.resources.ray_options(),
            "max_retries": self.cluster.executor.max_retries,
            "retry_exceptions": False,  # only a lost worker or node is retried, never our errors
        }
        if not self.fresh and log_path.exists():
            log = read_log(log_path)
            status = run_status(log)
            if status is not None and status.final:
                outcome.skipped, outcome.reason = True, status
                if reports_behind(self.run_dir):  # the driver stopped between its end record and its report
                    with contextlib.suppress(OSError, RunLogFormatError):
                        write_reports(log, self.benchmark, self.run_dir)
                return outcome
            # back to the node that has its agent's state, if that node is still there
            ran_on = next((e.node for e in reversed(log.events) if isinstance(e, RunStart) and e.node), "")
            if strategy := self.cluster.affinity(ran_on.rpartition("/")[2]):
                options["scheduling_strategy"] = strategy
        ref = self.cluster._task.options(**options).remote(
            self.spec,
            self._benchmark_ref,
            self.cluster.relay,
            self.fresh,
            f"{log_path} on the driver",
            self._fork(),
        )
        follow = asyncio.create_task(self._follow(log_path))
        raised: Exception | None = None
        ended: dict[str, Any] = {}
        try:
            ended = await ref
        except asyncio.CancelledError:
            await self._stop(ref)
            raise
        except TaskCancelledError:  # cancelled by someone else (`ray job stop`, a dashboard)
            outcome.reason = TerminationReason.INTERRUPTED
            outcome.detail = "its Ray task was cancelled from outside this marathon"
        except RayTaskError as exc:
            if isinstance(exc.cause, Exception) and not isinstance(exc.cause, RayError):
                raised = exc.cause  # what the run raised on its node, as a local run raises it
            else:
                outcome.reason = TerminationReason.ERROR
                outcome.detail = f"the run's Ray task failed: {exc}".splitlines()[0]
        except RayError as exc:  # its node died more often than max_retries allows, the cluster went away
            outcome.reason = TerminationReason.ERROR
            outcome.detail = f"the run's Ray task failed ({type(exc).__name__}): {exc}".splitlines()[0]
        finally:
            follow.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follow
            self._catch_up(log_path)
            with contextlib.suppress(OSError, RunLogFormatError):  # as a local run's, however it ended
                write_reports(read_log(log_path), self.benchmark, self.run_dir)
        if raised is not None:
            raise raised
        if ended:
            outcome.reason = TerminationReason(ended["reason"]) if ended.get("reason") else None
            outcome.skipped, outcome.resumed = bool(ended["skipped"]), bool(ended["resumed"])
            outcome.resent, outcome.detail = int(ended["resent"]), str(ended["detail"])
        return outcome

    def _fork(self) -> tuple[SavedCheckpoint, list[Event], Any] | None:
        """A fork's checkpoint and inherited prefix, read here on the driver (where the parent's
        folder is), and its archive put in the object store for the node. Raises
        `CheckpointError` as a local fork does."""
        import ray

        if self.spec.parent is None:
            return None
        checkpoint = find_checkpoint(self.cluster.recordings, *self.spec.parent)
        inherited = (
            inherited_events(
                self.run_dir / EVENTS_FILE, Header(run_id=self.spec.id, parent=checkpoint.reference())
            )
            if self.spec.parent_prefix
            else []
        )
        return checkpoint, inherited, ray.put(checkpoint.archive.read_bytes())

    async def _stop(self, ref: Any) -> None:
        """Ctrl-C: ask the run to stop (through the relay, which its node polls), and wait at
        most CANCEL_WAIT for its task to end — by then it logged `interrupted` and ended its
        agent. A task that doesn't end in time is cancelled by Ray (and its agent's guard ends
        the agent when its worker goes)."""
        import ray

        with contextlib.suppress(Exception):
            await self.cluster.relay.request_stop.remote(self.spec.id)
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(ref.future())), CANCEL_WAIT)
        except TimeoutError:
            ray.cancel(ref)
        except Exception:  # it ended, with an error of its own: nothing more to stop
            return

    async def _follow(self, log_path: Path) -> None:
        """Feed the progress board from the log on this disk, once the run's task opened it
        (before, a `--fresh` run's old log is still there)."""
        while True:
            await asyncio.sleep(FOLLOW_EVERY)
            if self.progress.node:
                self._catch_up(log_path)

    def _catch_up(self, log_path: Path) -> None:
        if not log_path.exists():
            return
        try:
            events = self._follower.read_new()
        except (OSError, RunLogFormatError):
            return
        if self._follower.restarted:
            self.progress.restart()
        for event in events:
            self.progress.observe(event)
