from __future__ import annotations

import io
from pathlib import Path

from gateway.log.events import CompactionSeen, LLMExchange, Replied, Said, SessionChanged
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.run.chat import chat
from tests.marathon_cli import marathon


async def test_a_typed_chat_with_the_reference_profile_is_recorded(tmp_path: Path) -> None:
    lines = io.StringIO("My cat is called Miso\n/new-session\nWhat is my cat called?\n\n")
    printed: list[str] = []
    run_dir = await chat({"profile": "reference"}, tmp_path, lines, printed.append)
    log = read_log(run_dir / EVENTS_FILE)
    assert [e.text for e in log.events if isinstance(e, Said)] == [
        "My cat is called Miso",
        "What is my cat called?",
    ]
    assert [e.text for e in log.events if isinstance(e, Replied)][
        -1
    ] == "From my notes: My cat is called Miso."
    assert any(isinstance(e, SessionChanged) for e in log.events)
    assert any(isinstance(e, LLMExchange) for e in log.events)
    # the smaller model input after /new-session is the new session, not a compaction
    assert not [e for e in log.events if isinstance(e, CompactionSeen)], [str(p) for p in printed]
    assert "agent> From my notes: My cat is called Miso." in printed


def test_profiles_lists_the_known_agents(tmp_path: Path) -> None:
    result = marathon("profiles", cwd=tmp_path)
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert {
        "openclaw-http",
        "openclaw-ws",
        "openclaw-telegram",
        "hermes-http",
        "hermes-telegram",
        "letta",
        "openai-generic",
        "reference",
    } <= set(names)
