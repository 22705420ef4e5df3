"""`marathon rescore RUN --traffic` and verify's "could the measurement see" checks, as a user
runs them: on an OpenClaw run recorded before issue 58's fix (the corpus keeps one), on a run
of today's reference agent, and on logs made blind on purpose."""

from __future__ import annotations

import shutil
from pathlib import Path

from gateway.cli.traffic_seen import traffic_problems
from gateway.log.events import CompactionSeen, ErrorEvent, LLMExchange, Replied, RunStart, SessionChanged
from gateway.log.runlog import EVENTS_FILE, RunLogWriter, read_log
from gateway.log.vocabulary import CallKind, ErrorKind, ErrorSource, SessionAction
from gateway.report.markdown import render_run_report
from gateway.report.recordings import benchmark_of, load_run
from gateway.report.traffic_figures import TrafficFigures
from gateway.report.traffic_overlay import TRAFFIC_FILE, rederive_run
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import DEMO, REPO
from tests.marathon_cli import marathon

BEFORE_FIX = REPO / "tests" / "gateway" / "traffic" / "corpus" / "openclaw-ws-before-fix" / "openclaw"


def _copy_as_recorded(tmp_path: Path) -> Path:
    """The corpus run in a recordings folder of its own, with the report.md its run wrote."""
    run = tmp_path / "rec" / "openclaw"
    shutil.copytree(BEFORE_FIX, run)
    (run / "expected.json5").unlink()
    log = read_log(run / EVENTS_FILE)
    (run / "report.md").write_text(render_run_report(log, benchmark_of(log.header), run), encoding="utf-8")
    return run


def test_verify_names_a_blind_run_and_rescore_traffic_corrects_it(tmp_path: Path) -> None:
    run = _copy_as_recorded(tmp_path)
    blind = marathon("verify", str(run), cwd=REPO)  # the log names its benchmark from the checkout
    assert blind.returncode == 1, blind.stderr
    assert (
        "traffic_seen — 8 replies while recording, 16 model calls recorded, none answered the persona"
        in blind.stderr
    )
    assert "'recorder bypassed' warning beside 16 recorded model calls" in blind.stderr
    assert "every invariant held" not in blind.stderr

    done = marathon("rescore", str(run), "--traffic", cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert (
        "answering calls: 0 → 16" in done.stdout
        and "memory calls charged to a question: 0 → 4" in done.stdout
    )
    assert (run / TRAFFIC_FILE).is_file() and "| answering calls | 0 | 16 |" in (
        run / "traffic-rescore.md"
    ).read_text()
    assert (
        read_log(run / EVENTS_FILE).events == read_log(BEFORE_FIX / EVENTS_FILE).events
    )  # the log is untouched

    held = marathon("verify", str(run), cwd=REPO)
    assert held.returncode == 0, held.stderr
    assert "every invariant held" in held.stderr
    # every report reads the re-derivation: each graded question has calls that answered it
    recorded = load_run(run)
    answering = {
        e.question_id
        for e in recorded.log.events
        if isinstance(e, LLMExchange) and e.kind is CallKind.ORDINARY
    }
    assert answering >= {"q1", "q2", "q3"}
    assert recorded.summary.memory_calls and all(
        m.question_id or not m.background for m in recorded.summary.memory_calls
    )

    inspected = marathon("inspect", str(run), cwd=REPO).stdout
    assert "note: traffic readings re-derived by `marathon rescore RUN --traffic`" in inspected
    assert " background " not in inspected and "score=0.0" in inspected  # q3's 0 is shown, not hidden
    assert "**Log read:** traffic readings re-derived" in (run / "report.md").read_text()

    # the log grows (a resumed run): the stored re-derivation no longer applies, and verify says so
    writer, _ = RunLogWriter.resume(run / EVENTS_FILE)
    writer.append(ErrorEvent(source=ErrorSource.RUNNER, kind=ErrorKind.ADAPTER_ERROR, message="later"))
    writer.close()
    stale = marathon("verify", str(run), cwd=REPO)
    assert stale.returncode == 1 and "was derived from another state of the log" in stale.stderr


async def test_rederiving_a_run_of_todays_code_gives_back_its_own_readings(tmp_path: Path) -> None:
    """The demo on the reference agent, compactions and memory calls included: the re-derivation
    from its recorded exchanges is the recorder's own reading, figure by figure."""
    await run_spec(RunSpec("d", DEMO, {"adapter": "reference", "context_tokens": 400}), tmp_path)
    log = read_log(tmp_path / "d" / EVENTS_FILE)
    recorded = TrafficFigures.of(log.events)
    assert recorded.compactions and sum(recorded.answering.values()) > 10 and recorded.memory
    again = rederive_run(tmp_path / "d", log, benchmark_of(log.header))
    assert TrafficFigures.of(again.events).as_json() == recorded.as_json()
    kept = [e for e in again.events if not isinstance(e, LLMExchange)]
    assert len(again.events) == len(log.events) and len(kept) == len(
        [e for e in log.events if not isinstance(e, LLMExchange)]
    )


def test_rescore_traffic_refuses_what_is_no_whole_run_and_a_garbled_result_is_named(tmp_path: Path) -> None:
    done = marathon("rescore", str(tmp_path), "--traffic", cwd=tmp_path)
    assert done.returncode == 1 and "not a run folder (no events.msgpack in it)" in done.stderr
    run = _copy_as_recorded(tmp_path)
    data = (run / EVENTS_FILE).read_bytes()
    middle = len(data) // 2
    (run / EVENTS_FILE).write_bytes(
        data[:middle] + bytes(300) + data[middle + 300 :]
    )  # damage with records after
    damaged = marathon("rescore", str(run), "--traffic", cwd=REPO)
    assert (
        damaged.returncode == 1
        and "damaged at byte" in damaged.stderr
        and "nothing was re-derived" in damaged.stderr
    )
    assert not (run / TRAFFIC_FILE).exists()

    (run / EVENTS_FILE).write_bytes(data)
    (run / TRAFFIC_FILE).write_bytes(b"\x93garbage")
    inspected = marathon("inspect", str(run), cwd=REPO)
    assert (
        "traffic-rescore.msgpack: not a traffic re-derivation: the traffic readings are the recorded ones"
        in inspected.stdout
    )
    verified = marathon("verify", str(run), cwd=REPO)
    assert (
        verified.returncode == 1
        and "traffic_seen — " in verified.stderr
        and "rescore RUN --traffic` again" in verified.stderr
    )


def _exchange(seq: int, kind: CallKind = CallKind.ORDINARY) -> LLMExchange:
    return LLMExchange(kind=kind, seq=seq)


def test_a_compaction_command_with_nothing_seen_is_named_and_a_tried_one_is_not() -> None:
    start = [RunStart(llm_url="http://127.0.0.1:1", seq=1), _exchange(2), Replied(text="ok", seq=3)]
    command = SessionChanged(action=SessionAction.COMPACT, reply="Compaction finished", seq=5)
    after = [_exchange(6), Replied(text="Miso", seq=7)]
    blind = traffic_problems([*start, _exchange(4), command, *after])
    assert blind == [
        "the compaction command (event 5) was answered 'Compaction finished' but no compaction was seen in the "
        "recorded traffic: the compactions figure of this run is not what the agent did"
    ]
    seen = CompactionSeen(kind="generic", seq=8)
    assert traffic_problems([*start, command, _exchange(6), seen, Replied(text="Miso", seq=9)]) == []
    assert traffic_problems([*start, _exchange(4, CallKind.SUMMARY), command, *after]) == []  # tried, failed
    unsupported = SessionChanged(action=SessionAction.COMPACT, detail="unsupported", seq=5)
    assert traffic_problems([*start, unsupported, *after]) == []
    assert (
        traffic_problems([RunStart(seq=1), _exchange(2, CallKind.BACKGROUND), Replied(text="ok", seq=3)])
        == []
    )  # not recorded
