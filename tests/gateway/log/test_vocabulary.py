"""The log's kinds are closed vocabularies: read back as members, a value off the list refused
with its name, format 2's slips migrated to name their fact and question."""

from __future__ import annotations

from pathlib import Path

import msgpack

import adapters.base as adapter_errors
from gateway.log.events import (
    FORMAT_VERSION,
    MAGIC,
    ErrorEvent,
    Header,
    InvalidEvent,
    LLMExchange,
    PersonaSlip,
    RunEnded,
    Said,
    SessionChanged,
)
from gateway.log.frames import frame
from gateway.log.runlog import RunLogWriter, read_log
from gateway.log.vocabulary import (
    CallKind,
    ErrorKind,
    ErrorSource,
    Purpose,
    SessionAction,
    SlipKind,
    TerminationReason,
)


def test_kinds_are_read_back_as_members_of_their_vocabulary(tmp_path: Path) -> None:
    path = tmp_path / "events.msgpack"
    with RunLogWriter.create(path, Header(run_id="r")) as w:
        w.append(Said(text="hi", purpose=Purpose.NUDGE, question_id="q1"))
        w.append(SessionChanged(action=SessionAction.COMPACT))
        w.append(ErrorEvent(source=ErrorSource.AGENT_LLM, kind=ErrorKind.RATE_LIMITED, message="429"))
        w.append(LLMExchange(kind=CallKind.BACKGROUND))
        w.append(PersonaSlip(kind=SlipKind.FACT_NOT_SAID, detail="home:1 marked told", fact="home:1"))
        w.append(RunEnded(reason=TerminationReason.LIMIT_REACHED, detail="agent_turns: 30 messages sent"))
    said, session, error, call, slip, end = read_log(path).events
    assert isinstance(said, Said) and said.purpose is Purpose.NUDGE
    assert isinstance(session, SessionChanged) and session.action is SessionAction.COMPACT
    assert isinstance(error, ErrorEvent) and error.source is ErrorSource.AGENT_LLM and error.source.agents
    assert error.kind is ErrorKind.RATE_LIMITED
    assert isinstance(call, LLMExchange) and call.kind is CallKind.BACKGROUND and call.kind.conversational
    assert isinstance(slip, PersonaSlip) and slip.kind is SlipKind.FACT_NOT_SAID and slip.fact == "home:1"
    assert isinstance(end, RunEnded) and end.reason is TerminationReason.LIMIT_REACHED
    assert end.reason.final and end.detail == "agent_turns: 30 messages sent"  # the detail apart


def test_an_event_built_from_a_value_holds_the_member() -> None:
    """However an event is built (a test, a replace() with a value), its kind is a member."""
    error = ErrorEvent(source="agent", kind="timeout")  # type: ignore[arg-type]
    assert error.source is ErrorSource.AGENT and error.kind is ErrorKind.TIMEOUT


def _log(path: Path, version: int, *records: dict[str, object]) -> Path:
    header = {"t": "header", "seq": 0, "ts": 1.0, "magic": MAGIC, "format": version, "run_id": "r"}
    path.write_bytes(b"".join(frame(msgpack.packb(r)) for r in (header, *records)))
    return path


def test_a_kind_off_its_list_is_an_invalid_record_naming_the_value(tmp_path: Path) -> None:
    path = _log(
        tmp_path / "events.msgpack",
        FORMAT_VERSION,
        {"t": "error", "seq": 1, "ts": 2.0, "source": "agent", "kind": "timeot", "message": "x"},
        {"t": "say", "seq": 2, "ts": 3.0, "text": "hi", "purpose": "line"},
    )
    bad, fine = read_log(path).events
    assert isinstance(bad, InvalidEvent) and "field 'kind' is 'timeot', expected one of" in bad.problem
    assert "'timeout'" in bad.problem  # the list it should have been from
    assert isinstance(fine, Said) and fine.purpose is Purpose.LINE


def test_a_format_2_slip_is_migrated_to_name_its_fact_and_question(tmp_path: Path) -> None:
    path = _log(
        tmp_path / "events.msgpack",
        2,
        {"t": "persona_slip", "seq": 1, "ts": 2.0, "kind": "fact_not_said",
         "detail": "home:1.3 marked told, but 34 never said since the file was read"},
        {"t": "persona_slip", "seq": 2, "ts": 3.0, "kind": "answer_leaked",
         "detail": "q7: the message asking it holds its answer 'Pixel'"},
        {"t": "persona_slip", "seq": 3, "ts": 4.0, "kind": "out_of_character", "detail": "As an AI: hi"},
        # a record appended by this version to a resumed format-2 log: left as written
        {"t": "persona_slip", "seq": 4, "ts": 5.0, "kind": "fact_not_said", "detail": "x:1 marked told",
         "fact": "home:2", "question_id": ""},
    )  # fmt: skip
    log = read_log(path)
    assert log.format == 2
    slips = [e for e in log.events if isinstance(e, PersonaSlip)]
    assert slips[0].missing == ["34"]  # "…, but 34 never said": the details, read out of the words
    assert [(s.kind, s.fact, s.question_id) for s in slips] == [
        (SlipKind.FACT_NOT_SAID, "home:1.3", ""),
        (SlipKind.ANSWER_LEAKED, "", "q7"),
        (SlipKind.OUT_OF_CHARACTER, "", ""),
        (SlipKind.FACT_NOT_SAID, "home:2", ""),
    ]


def test_every_adapter_error_kind_is_a_logged_error_kind() -> None:
    """The runner logs an adapter error as `ErrorKind(exc.kind)`: a kind an adapter raises that
    the log's vocabulary lacks would end a run with a ValueError."""
    errors = [
        cls
        for cls in vars(adapter_errors).values()
        if isinstance(cls, type) and issubclass(cls, adapter_errors.AdapterError)
    ]
    assert len(errors) >= 8
    assert {ErrorKind(cls.kind) for cls in errors}  # raises for a kind off the list


def test_an_end_without_its_reason_is_invalid_not_a_completed_run(tmp_path: Path) -> None:
    """A reason's default must never stand in for a missing one: the run would count as final."""
    path = _log(tmp_path / "events.msgpack", FORMAT_VERSION, {"t": "end", "seq": 1, "ts": 2.0, "detail": ""})
    (end,) = read_log(path).events
    assert isinstance(end, InvalidEvent) and "field 'reason' is missing" in end.problem
