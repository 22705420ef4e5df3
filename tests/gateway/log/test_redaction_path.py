"""One redaction path for every text that enters a log: every event type, canaries in every
field it has, written through the run log's writer — none reaches the file, by value or by
shape. A run's retried errors, a URL's password and a secret the upstream echoes go the same way."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest

from gateway.log.events import Event, Header
from gateway.log.records import EVENT_TYPES
from gateway.log.redact import Redactor, secret_values
from gateway.log.runlog import RunLogWriter

VALUE = "s3cr3t-VALUE-of-the-run-7731"  # a configured secret: no shape gives it away
SHAPED = "Bearer abcdefghijklmnop1234567890"  # a secret by its shape alone
URL = "http://bob:hunter2-password@agent.example/chat"


def canary_for(hint: Any) -> Any:
    text = f"{VALUE} {SHAPED} {URL}"
    origin = typing.get_origin(hint) or hint
    if origin is bytes or hint == "bytes":
        return text.encode()
    if origin in (list, tuple):
        return [text, {"nested": text}]
    if origin is dict:
        return {"k": text, "deep": [text]}
    if hint is str or "str" in str(hint):
        return text
    return None


@pytest.mark.parametrize("name", sorted(EVENT_TYPES))
def test_no_event_type_writes_a_secret(name: str, tmp_path: Path) -> None:
    cls = EVENT_TYPES[name]
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name in ("seq", "ts") or not f.init:
            continue
        canary = canary_for(hints.get(f.name))
        if canary is not None:
            values[f.name] = canary
    if not values:
        pytest.skip(f"{name} has no text field")
    writer = RunLogWriter.create(tmp_path / "events.msgpack", Header(run_id="r"))
    writer.redactor = Redactor(values=[VALUE])
    event: Event = cls(**values)
    writer.append(event)
    writer.close()
    data = (tmp_path / "events.msgpack").read_bytes()
    assert VALUE.encode() not in data, f"{name}: the configured secret value reached the log"
    assert b"abcdefghijklmnop1234567890" not in data, f"{name}: a bearer token reached the log"
    assert b"hunter2-password" not in data, f"{name}: a URL's password reached the log"


def test_the_secret_values_of_a_run_s_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATEWAY_TOKEN", "gw-token-0123456789")
    monkeypatch.setenv("JUDGE_KEY", "judge-key-0123456789")
    settings = {
        "agent": {
            "url": "http://bob:hunter2-password@127.0.0.1:9/chat",
            "headers": {"Authorization": "Bearer ${GATEWAY_TOKEN}"},
            "token": "123456789:MARATHON-openclaw-token-00000000",
            "timeout": 30,
        },
        "persona": {"grading": {"judge": "anthropic:m", "api_key_env": "JUDGE_KEY"}},
    }
    assert secret_values(settings) == {
        "hunter2-password",
        "gw-token-0123456789",
        "123456789:MARATHON-openclaw-token-00000000",
        "judge-key-0123456789",
    }
