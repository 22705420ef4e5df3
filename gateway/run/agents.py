"""Turning a run's `agent` settings into a live `AgentAdapter` (and whatever it needs running).

Settings may name a profile (`adapters/profiles/*.jsonc`) and override it. Adapters: `http`
(JSON or OpenAI-compatible), `websocket`, `openclaw-ws`, `telegram` (we emulate the Bot API;
the bot points its API root at us), and `reference` — the bundled agent, started here on a
free port with its memory in the run's folder, over `surface` http, telegram or websocket, on
the offline stand-in unless `model_base_url` is given.

With a `process` block the agent is started for the run (`adapters.lifecycle`), its state
folder reset from a snapshot on a fresh run (never on resume), its environment given
`${LLM_URL}` (the recorder), `${TELEGRAM_API_ROOT}` and `${TELEGRAM_BOT_TOKEN}`. A profile's
`new_session: "restart"` restarts the process for a new session. Everything started here is
stopped on exit, also on Ctrl-C.

With a `RunRecorder`, the agent's LLM traffic goes through the recorder: the reference agent
is pointed at it; another agent is told `${LLM_URL}` (or must be pointed at `llm.port`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from adapters.base import (
    AdapterConfigError,
    AgentAdapter,
    compact_commands,
    kept_session,
    number_setting,
)
from adapters.http import HttpAdapter
from adapters.http_server import free_port, serve
from adapters.letta import LettaAdapter
from adapters.lifecycle import AgentProcess, reset_state
from adapters.openclaw import OpenClawAdapter
from adapters.profiles import resolve
from adapters.reference.faults import MemoryFaults
from adapters.reference.standin import STANDIN_NAME, standin_app
from adapters.state_folder import NO_RULES, StateRules, folder_hash
from adapters.telegram import TelegramAdapter
from adapters.websocket import WebSocketAdapter
from gateway.log.redact import Redactor
from gateway.run.checkpoints import SavedCheckpoint
from gateway.run.process_adapters import RestartingAdapter, WatchedAdapter
from gateway.run.restore import restore_state
from gateway.run.setting_keys import agent_key_problems
from gateway.traffic.profile import TrafficProfile, agent_profile
from gateway.traffic.recorder import RunRecorder
from persona.benchmark.model import Benchmark

# `llm.upstream: "standin"`: the agent's model calls go, through the recorder, to the offline
# stand-in served for the run — a rehearsal of a real agent's setup with no key and no cost
# (every report says the stand-in answered, not an LLM)
STANDIN_UPSTREAM = "standin"

ADAPTERS = ("http", "websocket", "openclaw-ws", "telegram", "letta", "reference")
SURFACES = ("http", "telegram", "websocket")

type Record = Callable[[str], Awaitable[str]]


def describe_agent(settings: dict[str, Any]) -> dict[str, Any]:
    """What the log header and report record about the agent: settings, secrets redacted, and
    the model it runs on when we know it (the stand-in is always named as such)."""
    settings = resolve(settings)
    llm = settings.get("llm") if isinstance(settings.get("llm"), dict) else {}
    names = llm.get("secret_names") if isinstance(llm, dict) else None
    extra = frozenset(str(n) for n in names) if isinstance(names, list) else frozenset()
    info = Redactor(extra).value(settings)
    if isinstance(llm, dict) and llm.get("upstream") == STANDIN_UPSTREAM:
        info["model"] = STANDIN_NAME
        info["offline_stand_in"] = True
    if settings.get("adapter") == "reference":
        if settings.get("model_base_url"):
            info["model"] = settings.get("model", "standin-1")  # what the agent sends (agents.py below)
        else:
            info["model"] = STANDIN_NAME
            info["offline_stand_in"] = True
    return dict(info)


def initial_state_promise(settings: dict[str, Any]) -> str:
    """What a fresh run of this agent can promise about its starting state (the plan says it
    before the runs; each run's start logs the hash it found)."""
    settings = resolve(settings)
    if settings.get("adapter") == "reference":
        return "empty (the run's own state folder, emptied at a fresh start)"
    process = settings.get("process")
    if not isinstance(process, dict):
        return "unknown (an agent we don't start: its state is its own)"
    if process.get("snapshot"):
        return f"the snapshot {process['snapshot']} (copied in at a fresh start)"
    state = str(process.get("state_dir", "${RUN_DIR}/agent-state"))
    if state.startswith("${RUN_DIR}"):
        return "empty (the run's own state folder, emptied at a fresh start)"
    return f"unknown (the state folder {state} is outside the run and has no snapshot)"


def make_adapter(settings: dict[str, Any]) -> AgentAdapter:
    kind = settings.get("adapter")
    if kind == "http":
        return HttpAdapter(settings)
    if kind == "websocket":
        return WebSocketAdapter(settings)
    if kind == "letta":
        return LettaAdapter(settings)
    if kind == "openclaw-ws":
        return OpenClawAdapter(settings)
    if kind == "telegram":
        return TelegramAdapter(settings)
    raise AdapterConfigError(f"unknown agent adapter {kind!r}; available: {', '.join(ADAPTERS)}")


def check_agent_settings(settings: dict[str, Any]) -> None:
    """Raise `AdapterConfigError` (a ValueError) for settings that can't work, before a run starts:
    an unknown key (`gateway.run.setting_keys`), an unknown profile or adapter, a bad URL, a
    secret named from an unset environment variable."""
    resolved = resolve(settings)
    for _, message in agent_key_problems(resolved):  # `--set contxt_tokens=400`, a profile's own
        raise AdapterConfigError(message)
    llm = resolved.get("llm") if isinstance(resolved.get("llm"), dict) else {}
    for name, port in (("port", resolved.get("port")), ("llm.port", (llm or {}).get("port"))):
        if port not in (None, "auto") and (isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535):
            raise AdapterConfigError(f'`{name}` must be a port number (0–65535) or "auto", not {port!r}')
    process = resolved.get("process")
    if isinstance(process, dict):
        for name in ("ready_timeout", "stop_timeout"):
            number_setting(process, name, 0)
    try:
        settings = assign_ports(resolved)
        if settings.get("adapter") == "reference":  # the autopsy's switches (adapters/reference/faults.py)
            MemoryFaults.of(settings.get("faults"))
    except ValueError as exc:
        raise AdapterConfigError(str(exc)) from None
    kind = settings.get("adapter")
    if kind == "reference":
        if settings.get("surface", "http") not in SURFACES:
            raise AdapterConfigError(f"reference agent `surface` must be one of {', '.join(SURFACES)}")
        key_env = str(settings.get("api_key_env", "ANTHROPIC_API_KEY"))
        if settings.get("model_base_url") and not os.environ.get(key_env):
            raise AdapterConfigError(
                f"the reference agent on {settings['model_base_url']} needs its model's API key in ${key_env} "
                "(or name another variable with api_key_env), which is not set"
            )
        return
    make_adapter(settings)


def check_agent_can_play(settings: dict[str, Any], benchmark: Benchmark) -> None:
    """Refuse, before a run starts, a benchmark that needs `await bench.compact()` on an agent
    that can't be asked to compact — instead of an `unsupported` logged mid-run and [C]
    questions that then test nothing."""
    needs = [p for p in benchmark.phases if "compact" in p.actions]
    if not needs:
        return
    settings = resolve(settings)
    if settings.get("adapter") == "reference" or compact_commands(settings):
        return
    where = ", ".join(f"{p.chapter} ({p.title})" for p in needs[:3])
    raise AdapterConfigError(
        f"the benchmark asks the agent to compact (`await bench.compact()` in {where}), but this agent "
        "has no compaction command (`compact_commands` in its settings or profile: /compact for "
        "OpenClaw, /compress for Hermes). Alternatives: configure the agent's own compaction "
        "threshold so it compacts before that phase, or use `await bench.newSession()` there"
    )


def shared_resources(settings: dict[str, Any]) -> set[str]:
    """What a run of this agent holds that another run could also want: a fixed port (the
    agent's, or its LLM recorder's), the agent behind a URL (its memory is shared by whoever
    talks to it), a state folder outside the run's own. Runs sharing any of them must not
    overlap; the reference agent holds none (everything it uses is per run)."""
    settings = resolve(settings)
    if settings.get("adapter") == "reference":
        return set()
    held: set[str] = set()
    url = settings.get("url")
    if isinstance(url, str) and isinstance(settings.get("port"), int):  # a fixed port fills ${PORT}
        url = url.replace("${PORT}", str(settings["port"]))
    if isinstance(url, str) and url and "${PORT}" not in url:  # an `auto` port is the run's own
        parsed = urlsplit(url)
        held.add(
            f"agent {parsed.hostname}:{parsed.port or (443 if parsed.scheme in ('https', 'wss') else 80)}"
        )
    llm = settings.get("llm")
    if isinstance(llm, dict) and isinstance(llm.get("port"), int) and llm["port"]:
        held.add(f"port {llm['port']}")
    process = settings.get("process")
    if isinstance(process, dict):
        state = process.get("state_dir")
        if isinstance(state, str) and "${RUN_DIR}" not in state:
            held.add(f"state folder {state}")
    return held


@dataclass(frozen=True)
class AgentHandle:
    adapter: AgentAdapter
    llm_url: str | None  # where the agent's LLM calls must go to be recorded
    notes: list[str] = field(default_factory=list)  # what starting it found and did
    # the state folder as the agent started on it: a hash (a fresh run: its snapshot's, or an
    # empty folder's), or "unknown (why)" — an agent we don't start keeps a state of its own
    state: str = "unknown (an agent we don't start: its state is its own)"
    # the folder holding the agent's whole state, when we hold it (None: it can't checkpoint)
    state_dir: Path | None = None
    # stop the agent cleanly, do the work (archive its state folder), start it again on the
    # same session: what a checkpoint does between two settled turns
    # (`again` False: stop and do the work only — the run ends at this checkpoint)
    restart_around: Callable[[Callable[[], None], bool], Awaitable[None]] | None = None
    state_rules: StateRules = NO_RULES  # what of the state folder is state (its profile's)
    restored: bool = False  # this start restored a checkpoint (`state` is its hash)


def recording_wanted(settings: dict[str, Any]) -> bool:
    """The reference agent is always recorded (unless `record_llm: false`); another agent when
    its settings say where its LLM lives (`llm.upstream`)."""
    settings = resolve(settings)
    if settings.get("adapter") == "reference":
        return bool(settings.get("record_llm", True))
    llm = settings.get("llm")
    return isinstance(llm, dict) and isinstance(llm.get("upstream"), str)


def traffic_profile(settings: dict[str, Any]) -> TrafficProfile:
    """The recorder's profile for an agent (`gateway.traffic.profile.agent_profile`): the same
    for a run, a chat, a probe and a re-derivation of a recorded run."""
    return agent_profile(settings)


_PORT_PLACEHOLDER = re.compile(r"\$\{(PORT|LLM_PORT)\}")


def assign_ports(settings: dict[str, Any]) -> dict[str, Any]:
    """`port: "auto"` and `llm.port: "auto"` become free loopback ports, and `${PORT}` /
    `${LLM_PORT}` in any of the settings' strings (the URL, the process's command and env)
    become the ports — so a profile fits any machine and two runs never share a port."""
    out = dict(settings)
    ports: dict[str, str] = {}
    if out.get("port") == "auto":
        out["port"] = free_port()
    if isinstance(out.get("port"), int):
        ports["PORT"] = str(out["port"])
    llm = out.get("llm")
    if isinstance(llm, dict):
        if llm.get("port") == "auto":
            out["llm"] = llm = {**llm, "port": free_port()}
        if isinstance(llm.get("port"), int):
            ports["LLM_PORT"] = str(llm["port"])

    def fill_ports(value: Any) -> Any:
        if isinstance(value, str):
            return _PORT_PLACEHOLDER.sub(lambda m: ports.get(m.group(1), m.group(0)), value)
        if isinstance(value, dict):
            return {k: fill_ports(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill_ports(v) for v in value]
        return value

    filled: dict[str, Any] = fill_ports(out)
    return filled


@asynccontextmanager
async def open_agent(
    settings: dict[str, Any],
    run_dir: Path,
    recorder: RunRecorder | None = None,
    *,
    fresh: bool = True,
    restore: SavedCheckpoint | None = None,
) -> AsyncIterator[AgentHandle]:
    """`fresh`: the state folder reset (its snapshot, or empty); `restore`: a fork's first start,
    the state folder restored from a checkpoint instead; neither: kept as it is (a resume)."""
    check_agent_settings(settings)
    settings = assign_ports(resolve(settings))
    async with AsyncExitStack() as stack:

        async def record(upstream: str, port: int = 0) -> str:
            """Open a recorder listener forwarding to `upstream`; returns its URL."""
            from gateway.traffic.hub import RecorderHub  # mitmproxy loads only when recording

            assert recorder is not None
            hub = RecorderHub.shared()
            listener = await hub.open(upstream, recorder, port)
            stack.push_async_callback(hub.close, listener)
            return listener.url

        if settings["adapter"] == "reference":
            yield await _start_reference(
                settings, run_dir, stack, record if recorder is not None else None, fresh, restore
            )
            return
        adapter = make_adapter(settings)
        # closed last: after the agent's process stopped (a bot mid long-poll on our Bot API
        # would otherwise log tracebacks while it is stopped)
        stack.push_async_callback(adapter.close)
        values: dict[str, str] = {
            name: str(port)
            for name, port in (
                ("PORT", settings.get("port")),
                ("LLM_PORT", (settings.get("llm") or {}).get("port")),
            )
            if isinstance(port, int)
        }
        llm = settings.get("llm") or {}
        upstream = str(llm.get("upstream", ""))
        if upstream == STANDIN_UPSTREAM:  # a rehearsal with no key: the offline stand-in as the model
            served = await serve(standin_app())
            stack.push_async_callback(served.stop)
            upstream = served.url
        llm_url = await record(upstream, int(llm.get("port", 0))) if recorder is not None else None
        if llm_url:
            values["LLM_URL"] = llm_url
        telegram = adapter if isinstance(adapter, TelegramAdapter) else None
        if telegram is not None:
            values["TELEGRAM_API_ROOT"] = await telegram.start()
            values["TELEGRAM_BOT_TOKEN"] = telegram.emulator.token
        process_settings = settings.get("process")
        process: AgentProcess | None = None
        if isinstance(process_settings, dict):
            process = AgentProcess(process_settings, run_dir, values)
            if restore is not None:
                state = restore_state(restore, process.state_dir, process.rules)
            else:
                state = process.reset() if fresh else folder_hash(process.state_dir, process.rules)
            stack.push_async_callback(process.stop)
            if telegram is not None:  # runs first at exit: the bot's long poll ends now, not in 50 s
                stack.callback(telegram.release_polls)
            await process.start()
            if settings.get("new_session") == "restart":
                adapter = RestartingAdapter(adapter, process)
            adapter = WatchedAdapter(adapter, process)
        if telegram is not None:
            await telegram.wait_for_bot(
                float((process_settings or {}).get("ready_timeout", 60)), process.exited if process else None
            )
        if process is None:
            yield AgentHandle(adapter, llm_url, [])
        else:
            yield AgentHandle(
                adapter,
                llm_url,
                process.notes,
                state,
                process.state_dir,
                _restarter(adapter, process, telegram),
                process.rules,
                restored=restore is not None,
            )


def _restarter(
    adapter: AgentAdapter, process: AgentProcess, telegram: TelegramAdapter | None
) -> Callable[[Callable[[], None], bool], Awaitable[None]]:
    """Stop a started agent, do `work`, start it again (unless `again` is False) and reopen its
    session (a bot on our Bot API keeps its emulator and polls again; another surface reconnects)."""
    inner = adapter.inner if isinstance(adapter, WatchedAdapter) else adapter
    if isinstance(inner, RestartingAdapter):
        inner = inner.inner

    async def around(work: Callable[[], None], again: bool = True) -> None:
        resume = kept_session(inner)
        if telegram is None:
            await inner.close()
        await process.stop()
        if telegram is not None:
            telegram.bot_stopped()
        work()
        if not again:
            return
        await process.start()
        if telegram is not None:
            await telegram.wait_for_bot(process.ready_timeout, process.exited)
        else:
            await inner.open(resume)

    return around


async def _start_reference(
    settings: dict[str, Any],
    run_dir: Path,
    stack: AsyncExitStack,
    record: Record | None,
    fresh: bool,
    restore: SavedCheckpoint | None,
) -> AgentHandle:
    # imported here: the anthropic SDK takes ~2 s to import, and only this agent needs it
    from adapters.reference.agent import COMPACT_COMMAND, AgentConfig, ReferenceAgent

    base_url = settings.get("model_base_url")
    api_key = "offline-stand-in"
    if base_url:
        api_key = os.environ.get(str(settings.get("api_key_env", "ANTHROPIC_API_KEY")), "")
    else:
        standin = await serve(standin_app())
        stack.push_async_callback(standin.stop)
        base_url = standin.url
    llm_url = await record(str(base_url)) if record is not None else None
    state_dir = run_dir / "agent-state"
    if restore is not None:
        state = restore_state(restore, state_dir)
    else:
        state = reset_state(state_dir, run_dir, None) if fresh else folder_hash(state_dir)
    agent = ReferenceAgent(
        AgentConfig(
            base_url=llm_url or str(base_url),
            api_key=api_key,
            memory_dir=run_dir / "agent-state" / "memory",
            model=str(settings.get("model", "standin-1")),
            context_tokens=int(settings.get("context_tokens", 1200)),
            keep_turns=int(settings.get("keep_turns", 2)),
            stream=bool(settings.get("stream", True)),
            llm_timeout=float(settings.get("llm_timeout", 120)),
            memory=bool(settings.get("memory", True)),
            faults=MemoryFaults.of(settings.get("faults")),
        )
    )
    stack.push_async_callback(agent.close)
    surface = settings.get("surface", "http")
    timeout = settings.get("timeout", 60)
    adapter: AgentAdapter
    if surface == "telegram":
        from adapters.reference.telegram_bot import run_bot

        telegram = TelegramAdapter(
            {"quiet": settings.get("quiet", 0.15), "timeout": timeout, "compact_commands": [COMPACT_COMMAND]}
        )
        api_root = await telegram.start()
        stack.push_async_callback(telegram.close)
        stop = asyncio.Event()
        bot = asyncio.create_task(run_bot(agent, api_root, telegram.emulator.token, stop))

        async def stop_bot() -> None:
            stop.set()
            with contextlib.suppress(
                Exception
            ):  # the run is over; a bot failing on the way out changes nothing
                await asyncio.wait_for(bot, 10)

        stack.push_async_callback(stop_bot)
        stack.callback(telegram.release_polls)  # runs first at exit: the bot stops at once
        await telegram.wait_for_bot(10)
        adapter = telegram
    elif surface == "websocket":
        from adapters.reference.ws_server import serve_websocket

        server, ws_url = await serve_websocket(agent)

        async def stop_server() -> None:
            server.close()
            await server.wait_closed()

        stack.push_async_callback(stop_server)
        adapter = WebSocketAdapter(
            {
                "url": ws_url,
                "match": {"session": "{session}"},
                "timeout": timeout,
                "session_prefix": "ref",
                "compact_commands": [COMPACT_COMMAND],
            }
        )
    else:
        served = await serve(agent.app())
        stack.push_async_callback(served.stop)
        adapter = HttpAdapter(
            {
                "url": f"{served.url}/chat",
                "timeout": timeout,
                "session_prefix": "ref",
                "compact_commands": [COMPACT_COMMAND],
            }
        )
    if surface != "telegram":  # (the emulated Bot API closes after the bot, above)
        stack.push_async_callback(adapter.close)

    async def around(work: Callable[[], None], again: bool = True) -> None:
        # in-process, with no work of its own between settled turns: stopped as it is; started
        # again as a new process would be — with its memory folder and no turns in context
        work()
        agent.sessions.clear()

    return AgentHandle(adapter, llm_url, [], state, state_dir, around, restored=restore is not None)
