"""Text a hostile agent sends can't make a run log unwritable (lone surrogates)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from gateway.log.events import ErrorEvent, Header, LLMExchange, Replied
from gateway.log.runlog import RunLogWriter, read_log
from gateway.log.scrub import REPLACEMENT, scrub, scrub_text
from gateway.traffic.profile import load_profile
from gateway.traffic.recorder import RawExchange, RunRecorder

# any text, lone surrogates (which JSON's "\ud800" escape produces) included
TEXTS = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40)


@settings(max_examples=200, deadline=None)
@given(TEXTS)
@example("a\ud800b\udfff c")
def test_any_text_scrubs_to_encodable_text_and_only_surrogates_change(text: str) -> None:
    clean, replaced = scrub_text(text)
    clean.encode("utf-8")  # never raises
    assert len(clean) == len(text)
    assert replaced == sum(1 for a, b in zip(text, clean, strict=True) if a != b)
    assert all(b == REPLACEMENT for a, b in zip(text, clean, strict=True) if a != b)
    assert scrub({text: [text, (text,)]})[1] == 3 * replaced


@settings(max_examples=60, deadline=None)
@given(TEXTS)
@example("reply \ud800")
def test_any_reply_text_is_written_and_read_back(tmp_path_factory: object, text: str) -> None:
    path = Path(str(tmp_path_factory.mktemp("log"))) / "events.msgpack"  # type: ignore[attr-defined]
    with RunLogWriter.create(path, Header(run_id="r")) as writer:
        writer.append(Replied(text=text))
    (event,) = read_log(path).events
    assert isinstance(event, Replied) and event.text == scrub_text(text)[0]


def test_a_surrogate_in_an_llm_body_is_recorded_with_a_warning_not_a_503(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    with RunLogWriter.create(path, Header(run_id="r")) as writer:
        recorder = RunRecorder(writer.append, load_profile(None))
        request = json.dumps({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi \ud800"}]})
        response = '{"type": "message", "content": [{"type": "text", "text": "bad \\ud800 text"}], "usage": {}}'
        recorder.record(
            RawExchange("POST", "/v1/messages", {}, request.encode(), 200, {"content-type": "application/json"},
                        response.encode())
        )  # fmt: skip
        assert recorder.healthy
    exchange = next(e for e in read_log(path).events if isinstance(e, LLMExchange))
    assert exchange.text == f"bad {REPLACEMENT} text"
    assert any("lone surrogate" in w for w in exchange.warnings)
    assert not [e for e in read_log(path).events if isinstance(e, ErrorEvent)]
