"""A run's state as MarathonMemBench users know it (`results/<id>/state.json`): where the
persona is, what it said, the grades, and live copies of every facts file — rebuilt from the
log, which stays the one source of truth (`marathon state RUN`).

What a caller may rely on: `run_state` reads only the log and the benchmark (never writes);
`write_facts` writes one markdown file per facts file, as edited during the run, into a folder
of its own (the benchmark's files never change).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gateway.log.events import Asked, Evaluation, FactEdited, FactTold, PhaseEntered, Replied, Said
from gateway.log.lineage import LineageError, inherited_events
from gateway.log.runlog import RunLog, run_status
from persona.benchmark.model import Benchmark
from persona.drivers.live_facts import LiveFacts


@dataclass
class RunState:
    run_id: str
    status: str  # the run's ending, or "running or stopped (resumable)"
    phase: dict[str, Any]  # index (1-based), of, title, chapter — the phase last entered
    # what the persona sent, in order, each with the agent's settled reply (`reply`) when one came
    messages: list[dict[str, Any]] = field(default_factory=list)
    # each question asked: its text, expected answer, tags, the answers (the first; after a
    # nudge or a "go ahead", the next) and its grade
    questions: dict[str, dict[str, Any]] = field(default_factory=dict)
    grades: dict[str, dict[str, Any]] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)  # facts file → its live text, as written
    told: list[str] = field(default_factory=list)  # "file:id" of every fact told
    # a fork: the checkpoint it started from; its parent's messages and grades up to there are
    # in `messages`/`grades` marked `inherited` (the parent's, never graded again)
    forked_from: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_state(log: RunLog, benchmark: Benchmark) -> RunState:
    live = LiveFacts(benchmark)
    status = run_status(log)
    state = RunState(
        log.header.run_id,
        status.value if status else "running or stopped (resumable)",
        {"index": 0, "of": len(benchmark.phases), "title": "", "chapter": ""},
    )
    try:
        inherited = inherited_events(log.path, log.header)
    except LineageError as exc:
        inherited, state.forked_from = [], {**log.header.parent, "problem": str(exc)}
    else:
        state.forked_from = dict(log.header.parent)
    own = {id(e) for e in log.events}
    answering: str | None = None  # the question a reply answers (its own, a nudge's, a "go ahead"'s)
    for event in [*inherited, *log.events]:
        mark = {} if id(event) in own else {"inherited": True}
        match event:
            case Asked():
                answering = event.question_id
                state.questions.setdefault(
                    event.question_id,
                    {
                        "text": event.text,
                        "expected": event.expected,
                        "tags": list(event.tags),
                        "answers": [],
                        **mark,
                    },
                )
            case Said() if event.question_id and event.question_id in state.questions:
                answering = event.question_id
            case Said():
                answering = None
            case Replied() if state.messages:
                state.messages[-1]["reply"] = event.text
                if answering is not None:
                    state.questions[answering]["answers"].append(event.text)
        match event:
            case PhaseEntered():
                state.phase = {
                    "index": event.index + 1,
                    "of": len(benchmark.phases),
                    "title": event.title,
                    "chapter": event.chapter,
                }
            case Said() | Asked():
                purpose = event.purpose if isinstance(event, Said) else "question"
                state.messages.append({"seq": event.seq, "purpose": purpose, "text": event.text, **mark})
            case FactEdited() if event.file in live.files:
                live.edit(event.file, event.fact_id, event.new)
            case FactTold():
                live.mark_told([f"{event.file}:{event.fact_id}"])
            case Evaluation():
                if event.question_id in state.questions:
                    state.questions[event.question_id]["grade"] = {
                        "score": event.score,
                        "reason": event.reason,
                    }
                state.grades[event.question_id] = {
                    "score": event.score,
                    "attempts": event.attempts,
                    "reason": event.reason,
                    "answer": event.answer,
                    **mark,
                }
    state.facts = {name: live.render(name, marks=False) + "\n" for name in live.files}
    state.told = sorted(live.told)
    return state


def write_facts(state: RunState, folder: Path) -> list[Path]:
    """Write each live facts file to `folder/<name>.md`; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in state.facts.items():
        path = folder / f"{name}.md"
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
