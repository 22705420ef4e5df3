"""The memory autopsy's links on hand-made logs (what protocol 001's diagnostic chain checked
before it): for a wrong answer, the stage the log and the memory files show — a refused write
stores nothing, a list answer written in pieces is stored, a value still in context was in the
model's input, and with the traffic unrecorded nothing is guessed."""

from __future__ import annotations

import json
from pathlib import Path

from gateway.log.events import (
    Asked,
    Blob,
    Evaluation,
    Event,
    EvidenceCheck,
    Header,
    LLMExchange,
    MemoryCallFailed,
    MemoryCallSeen,
    Said,
)
from gateway.log.runlog import EVENTS_FILE, RunLogWriter, read_log
from gateway.report.autopsy import NoStage, QuestionAutopsy, Stage, autopsy
from gateway.report.recordings import RecordedRun
from gateway.report.summary import summarize
from gateway.traffic.recorder import blob_ref
from persona.benchmark.loader import load_benchmark
from tests.conftest import TINY, BenchFactory

TOLD = Said(text="My cat is called Miso", purpose="fact")
RESULT = json.dumps(
    {"role": "user", "content": [{"type": "tool_result", "content": "note: the cat is Miso"}]}
).encode()


def q1(tmp: Path, bench: Path, events: list[Event], observed: bool = True, memory: str | None = None) -> QuestionAutopsy:
    """q1 ("What is my cat called?") answered wrong after `events`; `memory`: the reference
    agent's notes file at the end (None: no memory files to read)."""
    path = tmp / EVENTS_FILE
    tmp.mkdir(parents=True, exist_ok=True)
    agent = {"adapter": "reference"} if memory is not None else {}
    with RunLogWriter.create(path, Header(run_id="r", persona={"driver": "scripted"}, agent=agent)) as log:
        if observed:
            log.append(LLMExchange(kind="ordinary", model="m"))
        for event in events:
            log.append(event)
        log.append(Evaluation(question_id="q1", score=0.0, answer="I don't know.", reason="wrong"))
    if memory is not None:
        (tmp / "agent-state" / "memory").mkdir(parents=True)
        (tmp / "agent-state" / "memory" / "notes.md").write_text(memory)
    benchmark = load_benchmark(bench)
    run_log = read_log(path)
    run = RecordedRun(tmp, run_log, benchmark, summarize(run_log, benchmark))
    (found,) = [q for q in autopsy(run).questions if q.question_id == "q1"]
    return found


def write_events(text: str, seq: int) -> list[Event]:
    """A memory write of `text`: the exchange that made it (logged as record `seq`), then the
    recorder's finding pointing at it."""
    return [
        LLMExchange(kind="ordinary", tool_calls=[{"name": "memory_write", "arguments": {"text": text}}]),
        MemoryCallSeen(tool="memory_write", operation="write", exchange=seq),
    ]


ASKED = Asked(question_id="q1", text="What is my cat called?")


def test_each_stage_on_a_hand_made_log(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    bench = make_benchmark()
    assert q1(tmp_path / "a", bench, [ASKED]).no_stage is NoStage.NOT_TOLD
    assert q1(tmp_path / "b", bench, [TOLD, ASKED], memory="").stage is Stage.NEVER_STORED
    # the write was made and its tool refused it (Hermes' memory full): nothing was stored
    refused = [TOLD, *write_events("cat: Miso", 3), MemoryCallFailed(call=4, detail="full"), ASKED]
    assert q1(tmp_path / "c", bench, refused, memory="").stage is Stage.WRITE_REFUSED
    written = [TOLD, *write_events("cat: Miso", 3), ASKED]  # header 0, exchange 1, TOLD 2
    assert q1(tmp_path / "d", bench, written, memory="- cat: Miso\n").stage is Stage.NOT_RETRIEVED
    # written, "saved" — and not in memory at the end: never kept, or kept then lost? (issue 60: a
    # tool may say "saved" and save nothing) — unknown, named, unless a later reading saw it kept
    lost = q1(tmp_path / "e", bench, written, memory="- the dog is Rex\n")
    assert lost.stage is Stage.UNKNOWN and "no state read after the write shows memory kept it" in lost.unseen
    seen_kept = [
        *written[:-1],
        Asked(question_id="q2", text="What pet do I have?"),
        Blob(ref=blob_ref(RESULT), data=RESULT),
        LLMExchange(kind="ordinary", question_id="q2", message_refs=[blob_ref(RESULT)]),
        ASKED,
    ]
    assert q1(tmp_path / "e2", bench, seen_kept, memory="- the dog is Rex\n").stage is Stage.STORED_THEN_LOST
    unseen = q1(tmp_path / "f", bench, written)  # no memory files to read: lost or not found?
    assert unseen.stage is Stage.UNKNOWN and "memory is not in files" in unseen.unseen
    read = [
        *written,
        Blob(ref=blob_ref(RESULT), data=RESULT),
        LLMExchange(kind="ordinary", question_id="q1", message_refs=[blob_ref(RESULT)]),
    ]
    assert q1(tmp_path / "g", bench, read, memory="- cat: Miso\n").stage is Stage.NOT_USED


def test_still_in_context_was_in_the_input_and_unrecorded_traffic_is_unknown(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    in_context = [TOLD, ASKED, EvidenceCheck(question_id="q1", in_context=True)]
    # "Miso" is in every fact about the cat: the string in context may be another fact's line,
    # and with no request bodies to read again, whether this fact was in the input is unknown
    shared = q1(tmp_path / "s", make_benchmark(), in_context)
    assert shared.stage is Stage.UNKNOWN and "its value is also in pets:1.2, pets:1.3" in shared.unseen, shared.verdict
    pets = "# Pets\n\n## 1. Cat\n1.1 My cat is called Miso\n1.2 She is 4 years old\n1.3 She eats tuna\n"
    bench = make_benchmark(pets__md=pets, ch1__md=TINY["ch1.md"].replace("Miso turned", "She turned"))
    assert q1(tmp_path / "a", bench, in_context).stage is Stage.NOT_USED  # the cat's name is this fact's alone
    blind = q1(tmp_path / "b", bench, [TOLD, ASKED], observed=False)
    assert blind.stage is Stage.UNKNOWN and blind.unseen == "the agent's LLM traffic was not recorded"


def test_a_list_answer_written_in_pieces_is_stored(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    exam = "# Two\n\n## Exam\n❓ q1 What are my goldfish called? Correct answer: Salt, Pepper\n"
    bench = make_benchmark(ch2__md=exam)
    told = Said(text="The goldfish are Salt and Pepper", purpose="fact")
    events: list[Event] = [told, *write_events("goldfish: Salt", 3), *write_events("goldfish: Pepper", 5), ASKED]
    found = q1(tmp_path, bench, events, memory="- goldfish: Salt\n- goldfish: Pepper\n")
    assert found.stage is Stage.NOT_RETRIEVED, found.verdict  # both pieces written, both still there


def test_letta_s_memory_is_read_from_its_database(tmp_path: Path) -> None:
    """Letta keeps memory in SQLite, not files: its core-memory blocks and the archival passages
    not deleted are the texts the autopsy searches; the database is only read."""
    import sqlite3

    from gateway.report.memory_state import MemoryState

    db = tmp_path / "agent-state" / ".letta" / "sqlite.db"
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as con:
        con.execute("create table block (label text, value text)")
        con.execute("create table archival_passages (id text, text text, is_deleted boolean)")
        con.execute("insert into block values ('human', 'Their cat is called Miso.')")
        con.execute("insert into archival_passages values ('p1', 'Rent: 1,210 a month', 0), ('p2', 'Ex: Daniel', 1)")
    before = db.read_bytes()
    agent = {"adapter": "letta", "memory_store": {"kind": "letta-sqlite", "path": ".letta/sqlite.db"}}
    memory = MemoryState.at_end(agent, tmp_path)
    assert memory.unseen == "" and memory.holds("Miso") and memory.holds("1,210")
    assert memory.holds("Daniel") is False  # deleted from its archival store
    assert memory.where("Miso") == ["block human"] and db.read_bytes() == before
    (tmp_path / "agent-state" / ".letta" / "sqlite.db").write_text("not a database")
    broken = MemoryState.at_end(agent, tmp_path)
    assert broken.files is None and "memory store can't be read" in broken.unseen


def test_what_could_not_be_read_never_decides_a_stage(tmp_path: Path) -> None:
    """A memory file left unread (a link, too big) may hold the value: "not found" is unsure;
    a truncated checkpoint archive, a pattern leaving the folder, a folder outside the one the
    viewer serves: said, never a traceback."""
    import tarfile

    from gateway.report.memory_state import MemoryState

    memory = tmp_path / "agent-state" / "memory"
    memory.mkdir(parents=True)
    (memory / "notes.md").write_text("- the dog is Rex\n")
    (tmp_path / "elsewhere.md").write_text("- cat: Miso\n")
    (memory / "more.md").symlink_to(tmp_path / "elsewhere.md")
    agent = {"adapter": "reference"}
    state = MemoryState.at_end(agent, tmp_path)
    assert state.holds("Rex") is True and state.holds("Miso") is None  # the link may hold it
    assert state.files is not None and state.files.not_read == ["memory/more.md (a link)"]
    outside = MemoryState.at_end(agent, tmp_path, within=tmp_path / "recordings")
    assert outside.files is None and "outside the recordings folder" in outside.unseen
    leaving = MemoryState.at_end({"adapter": "reference", "memory_files": ["../*.md", "/etc/*"]}, tmp_path)
    assert leaving.files is not None and len(leaving.files.not_read) == 2 and not leaving.files.texts
    archive = tmp_path / "exam.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(memory / "notes.md", arcname="memory/notes.md")
    archive.write_bytes(archive.read_bytes()[:40])  # cut short
    cut = MemoryState.in_checkpoint(agent, archive)
    assert cut.files is None and "can't be read" in cut.unseen


def test_a_right_answer_naming_the_deleted_person_is_right_and_a_released_run_is_not_traced(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    from gateway.log.events import FactEdited
    from gateway.report.autopsy import autopsy_of

    exam = "# Two\n\n## Exam\n❓ q1 [deleted] What is my cat called? Correct answer: you asked me to forget it\n"
    bench = make_benchmark(ch2__md=exam)
    path = tmp_path / EVENTS_FILE
    with RunLogWriter.create(path, Header(run_id="r", persona={"driver": "scripted"})) as log:
        log.append(LLMExchange(kind="ordinary", model="m"))
        log.append(TOLD)
        log.append(FactEdited(file="pets", fact_id="1.1", old="My cat is called Miso", new="—"))
        log.append(ASKED)
        log.append(Evaluation(question_id="q1", score=10.0, answer="You asked me to forget Miso, so I have."))
    run_log = read_log(path)
    benchmark = load_benchmark(bench)
    run = RecordedRun(tmp_path, run_log, benchmark, summarize(run_log, benchmark))
    (q,) = autopsy_of(run).questions
    assert q.no_stage is NoStage.RIGHT  # it names Miso, and it is right: no "deleted fact still kept"
    released = RecordedRun(tmp_path, read_log(path), benchmark, summarize(run_log, benchmark))
    released.release()
    (r,) = autopsy_of(released).questions
    assert r.no_stage is NoStage.RELEASED and r.stage is None


def test_a_passing_abstain_answer_is_right_not_among_the_wrong(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    """Issue 62: report.md's autopsy listed a passing `[abstain]` answer with the wrong ones."""
    from gateway.report.autopsy_render import render_autopsy_section

    path = tmp_path / EVENTS_FILE
    with RunLogWriter.create(path, Header(run_id="r", persona={"driver": "scripted"})) as log:
        log.append(LLMExchange(kind="ordinary", model="m"))
        log.append(Asked(question_id="q3", text="What is my dog called?"))
        log.append(Evaluation(question_id="q3", score=10.0, answer="You never told me.", reason="right"))
    run_log = read_log(path)
    benchmark = load_benchmark(make_benchmark())
    traced = autopsy(RecordedRun(tmp_path, run_log, benchmark, summarize(run_log, benchmark)))
    (q3,) = traced.questions
    assert q3.no_stage is NoStage.RIGHT, q3.verdict
    assert "abstain" not in "\n".join(render_autopsy_section(traced))
