"""What a bot sends that is not the reply to the message just sent — a late reply, a heartbeat,
a greeting — is logged apart and never graded or joined to another message's reply. The bot
is a real python-telegram-bot process on our emulated Bot API."""

from __future__ import annotations

import sys
from pathlib import Path

from gateway.log.events import (
    AgentInitiated,
    ErrorEvent,
    Evaluation,
    LateReply,
    Replied,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import REPO, BenchFactory

BOT = REPO / "tests" / "adapters" / "bots" / "ptb_memory_bot.py"


def bot_agent(**settings: object) -> dict[str, object]:
    env = dict(settings.pop("env", {}))  # type: ignore[call-overload]
    return {
        "adapter": "telegram",
        "quiet": 0.3,
        "timeout": 30,
        "process": {
            "command": [sys.executable, str(BOT)],
            "env": {"TELEGRAM_API_ROOT": "${TELEGRAM_API_ROOT}", "TELEGRAM_BOT_TOKEN": "${TELEGRAM_BOT_TOKEN}", **env},
            "ready_timeout": 60,
        },
        **settings,
    }


async def test_a_reply_after_the_timeout_is_a_late_reply_to_its_own_message(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    agent = bot_agent(timeout=1.5, grace=10, env={"SLOW_FIRST": "3"})
    outcome = await run_spec(RunSpec("late", make_benchmark(), agent), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "late" / EVENTS_FILE)
    assert [e.kind for e in log.events if isinstance(e, ErrorEvent) and e.source == "agent"] == ["timeout"]
    late = [e for e in log.events if isinstance(e, LateReply)]
    first_message = next(e for e in log.events if isinstance(e, Replied)).seq
    assert len(late) == 1 and late[0].text == "Got it, I'll remember." and late[0].seq < first_message
    assert late[0].answers.startswith("Hello!") or "Ada" in late[0].answers  # the message that timed out
    # no reply holds another message's answer: each is the bot's one answer to its own message
    assert all("\n" not in e.text for e in log.events if isinstance(e, Replied))
    scores = {e.question_id: e.score for e in log.events if isinstance(e, Evaluation)}
    assert set(scores) == {"q1", "q2", "q3"} and scores["q1"] == 10
    report = (tmp_path / "late" / "report.md").read_text()
    assert "### Late replies: 1" in report


async def test_heartbeats_and_greetings_are_logged_as_the_agents_own_never_graded(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    heartbeat = "First heartbeat alert: nothing needs attention."
    agent = bot_agent(
        initiated=["^First heartbeat alert"],
        env={"HEARTBEAT": heartbeat, "GREETING": "Hi! I'm your assistant.", "CHAT_ID": "424242"},
    )
    outcome = await run_spec(RunSpec("hb", make_benchmark(), agent), tmp_path)
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "hb" / EVENTS_FILE)
    own = [(e.text, e.why) for e in log.events if isinstance(e, AgentInitiated)]
    assert ("Hi! I'm your assistant.", "sent between turns") in own
    assert own.count((heartbeat, "matches the profile's `initiated` patterns")) == 3  # one per question
    assert not [e for e in log.events if isinstance(e, Replied) and "heartbeat" in e.text]
    answers = {e.question_id: e.answer for e in log.events if isinstance(e, Evaluation)}
    assert answers["q1"] == "You told me: My cat is called Miso"  # the heartbeat right after it left out
    report = (tmp_path / "hb" / "report.md").read_text()
    assert "### Messages the agent sent on its own: 4 (never graded)" in report
