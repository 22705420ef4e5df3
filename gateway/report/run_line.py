"""One run as the cross-run reports read it: the typed run line and its question outcomes, built
from a recording (`run_line`) and stored as `NAME.runs.jsonl` and `.csv` (`write_lines`).

A run line says everything needed to audit a run without opening it (comparison.py builds it
from a recording). It is stored as one JSON object a line (`NAME.runs.jsonl`, a gate's
baseline); `to_json` writes that object and `from_json` reads it back — the one place a key's
default and an older file's spelling are decided, so `compare`, the decision, the gate, the
results table and the matrix read attributes, never `line.get("split", "heldout")` of their own.

What a caller may rely on:
- `status` is a `TerminationReason` or None (the run never wrote an end: running, or killed);
  the end's words are `status_detail`. Lines written before the two were apart
  (`"limit_reached (agent_turns: …)"`) are read into both.
- `pair_id` and `cluster_id` are the identities the comparison pairs and resamples by.
- `from_json` raises `RunLineError` naming the key for a line that is not one.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from adapters.base import AdapterConfigError
from adapters.lifecycle import fill
from adapters.state_folder import folder_hash
from gateway import __version__
from gateway.log.events import Asked, Evaluation, MemoryResult, Replied, RunStart, Said
from gateway.log.vocabulary import TerminationReason
from gateway.report.autopsy import autopsy_of
from gateway.report.deletion_checks import deleted_before, deletion_checks
from gateway.report.deletion_scope import state_folder
from gateway.report.operation_figures import Links
from gateway.report.recordings import RecordedRun
from gateway.report.stale_facts import misapplied_old_facts
from persona.grading.identity import identity_of
from persona.grading.leak import states_deleted
from persona.outcome import PassRule, is_correct

type Identity = tuple[str, str, str, str, int, int, str]  # task, rung, exam, question, rollout, repeat, arm
UNFINISHED = "unfinished"  # `status` on disk for a run that never wrote an end record
_OLD_UNFINISHED = ("running or killed",)  # how lines said so before


class RunLineError(ValueError):
    """A stored line is not a run line (a key of the wrong type, a status that is none)."""


@dataclass(frozen=True)
class QuestionOutcome:
    """One graded question of a run, as the cross-run reports need it."""

    score: float
    certain: bool = True  # False: unresolved (the grader was not sure): never paired
    correct: bool = False  # under the experiment's C(τ) rule (`comparison.CORRECT_RULE`)
    tags: tuple[str, ...] = ()
    memory_calls: int = 0
    # where a wrong answer's fact was lost (the memory autopsy's stage, or why it has none;
    # a line written before the autopsy holds the diagnostic chain's link here: "not written"…)
    stage: str = ""
    links: Links | None = None  # what the autopsy saw of its value (None: a line from before it)
    # [deleted]: the deleted facts' names and numbers the answer stated (None: not a [deleted] question)
    recalled: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "score": self.score,
            "certain": self.certain,
            "correct": self.correct,
            "tags": list(self.tags),
            "memory_calls": self.memory_calls,
            "stage": self.stage,
        }
        if self.links is not None:
            out["links"] = self.links.to_json()
        if self.recalled is not None:
            out["recalled"] = list(self.recalled)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> QuestionOutcome:
        recalled = data.get("recalled")
        return cls(
            score=float(data.get("score") or 0.0),
            certain=data.get("certain", True) is not False,
            correct=bool(data.get("correct", False)),
            tags=tuple(str(t) for t in data.get("tags") or ()),
            memory_calls=int(data.get("memory_calls") or 0),
            stage=str(data.get("stage") or data.get("broken_link") or ""),
            links=Links.from_json(links) if isinstance(links := data.get("links"), dict) else None,
            recalled=None if recalled is None else tuple(str(r) for r in recalled),
        )


def parse_status(value: object) -> tuple[TerminationReason | None, str]:
    """A stored status → (reason or None, detail): `"limit_reached (agent_turns: …)"`, from a
    line older than `status_detail`, is the reason and its words."""
    if value is None or value == UNFINISHED or value in _OLD_UNFINISHED:
        return None, ""
    if not isinstance(value, str):
        raise RunLineError(f"`status` is {type(value).__name__}, expected a run's ending")
    head, _, rest = value.partition(" (")
    try:
        return TerminationReason(head), rest.removesuffix(")") if rest else ""
    except ValueError:
        known = ", ".join(r.value for r in TerminationReason)
        raise RunLineError(f"`status` is {value!r}, expected one of {known} or {UNFINISHED}") from None


@dataclass(frozen=True)
class RunLine:
    """One run of a recordings folder (see the module docstring); field order is the CSV's."""

    status: TerminationReason | None
    run_id: str = ""
    experiment: str = ""
    task: str = ""
    cluster: str = ""  # the unit intervals resample (tasks; a benchmark's repeats and rungs are one)
    group: str = "all"
    split: str = "heldout"
    pair: str = ""
    repeat: int = 1
    variant: str = ""  # A | B in an experiment
    variant_name: str = ""
    position: int = 0
    # what else tells runs of one matrix apart: a ladder's rung, an exam fork's mode, question
    # and rollout (lines written before these read "" / 0: their runs had none)
    rung: str = ""
    fork_of: str = ""
    exam: str = ""
    question: str = ""
    rollout: int = 0
    status_detail: str = ""
    mean_score: float | None = None
    correct: int = 0
    graded: int = 0
    planned: int = 0
    memory_calls: int | None = None  # None: the agent's model traffic was not observed
    misapplied_old_facts: int = 0
    misapplied_examples: tuple[str, ...] = ()
    canary_hits: int = 0
    active_seconds: float = 0.0
    agent_seconds: float = 0.0
    persona_seconds: float = 0.0
    retrieved: tuple[str, ...] | None = None
    deletion_checks: tuple[dict[str, Any], ...] = ()
    cost_usd: float | None = None  # None: a price unknown
    # the agent's own model cost (no persona, no judge): what B's cost is compared by; a line
    # written before it was kept reads its total here
    agent_cost_usd: float | None = None
    tool_version: str = ""
    benchmark_hash: str = ""
    defines: dict[str, Any] = field(default_factory=dict)
    decision: dict[str, Any] = field(default_factory=dict)  # an experiment's rule as its run recorded it
    agent: str = ""
    memory_snapshot: str = ""
    initial_state_from: str = ""
    step: int = 0
    memory_after: str = ""
    recording: str = ""
    questions: dict[str, QuestionOutcome] = field(default_factory=dict)
    agent_calls: int = 0
    returned_items: int | None = None
    returned_chars: int | None = None

    @property
    def grader_identity(self) -> str:
        """The exact grader that graded the run ("" when its log predates the identity)."""
        return identity_of(self.defines.get("grader"))

    @property
    def cluster_id(self) -> str:
        """What the bootstrap resamples: the line's cluster, else its task."""
        return self.cluster or self.task

    @property
    def pair_id(self) -> str:
        """The pair this line is a side of (A and B of one task × repeat)."""
        return self.pair

    @property
    def identity(self) -> Identity:
        """What one run of a recordings folder is, across folders (the gate pairs a baseline's
        line with the candidate's of the same identity): task, rung, exam mode, question fork,
        rollout, repeat and arm."""
        return (self.task, self.rung, self.exam, self.question, self.rollout, self.repeat, self.variant)

    @property
    def identity_text(self) -> str:
        """The identity as a person reads it: `task[.rung][.exam:question][#rollout].rK[.arm]`."""
        task, rung, exam, question, rollout, repeat, variant = self.identity
        return (task + (f".{rung}" if rung else "") + (f".{exam}" if exam else "")
                + (f":{question}" if question else "") + (f"#{rollout}" if rollout else "")
                + f".r{repeat}" + (f".{variant}" if variant else ""))  # fmt: skip

    @property
    def evaluated(self) -> bool:
        """Its grades are a verdict on the agent: it completed, or used up its limits."""
        return self.status is not None and self.status.evaluated

    @property
    def limit_reached(self) -> bool:
        return self.status is TerminationReason.LIMIT_REACHED

    @property
    def status_text(self) -> str:
        """The status as a person reads it (the CSV's and a table's cell)."""
        if self.status is None:
            return UNFINISHED
        return self.status.value + (f" ({self.status_detail})" if self.status_detail else "")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "status":
                value = UNFINISHED if value is None else value.value
            elif f.name == "questions":
                value = {qid: q.to_json() for qid, q in value.items()}
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunLine:
        """A stored line; keys it lacks take their defaults (an older file), unknown keys are
        ignored (a newer one's additions)."""
        if not isinstance(data, Mapping):
            raise RunLineError(f"a run line is a JSON object, not {type(data).__name__}")
        status, detail = parse_status(data.get("status"))
        if "agent_cost_usd" not in data:
            data = {**data, "agent_cost_usd": data.get("cost_usd")}
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known or key in ("status", "questions"):
                continue
            values[key] = _coerce(key, value)
        questions = data.get("questions") or {}
        if not isinstance(questions, Mapping):
            raise RunLineError("`questions` must map question ids to their outcomes")
        return cls(
            status=status,
            status_detail=str(data.get("status_detail") or detail),
            questions={str(qid): QuestionOutcome.from_json(q) for qid, q in questions.items()},
            **{k: v for k, v in values.items() if k != "status_detail"},
        )


_INTS = ("repeat", "position", "correct", "graded", "planned", "misapplied_old_facts", "canary_hits", "step", "rollout",
         "agent_calls")  # fmt: skip
_FLOATS = ("active_seconds", "agent_seconds", "persona_seconds")
_OPTIONAL_INTS = ("memory_calls", "returned_items", "returned_chars")


def _coerce(key: str, value: Any) -> Any:
    """A stored value as its field's type; a line from a spreadsheet round-trip may hold
    strings for numbers."""
    try:
        if key in _INTS:
            return int(value or 0)
        if key in _FLOATS:
            return float(value or 0.0)
        if key in _OPTIONAL_INTS:
            return None if value is None else int(value)
        if key in ("mean_score", "cost_usd", "agent_cost_usd"):
            return None if value is None else float(value)
        if key == "retrieved" and value is None:
            return None  # not observed
        if key in ("misapplied_examples", "retrieved"):
            return tuple(str(v) for v in value or ())
        if key == "deletion_checks":
            return tuple(dict(v) for v in value or ())
        if key in ("defines", "decision"):
            return dict(value or {})
    except (TypeError, ValueError) as exc:
        raise RunLineError(f"`{key}` is {value!r}: {exc}") from None
    return "" if value is None else str(value)


# -- building a run's line from its recording, and storing lines --------------------------------

CORRECT_RULE = PassRule.FIRST_TRY  # what counts as correct in the A/B table: score 10 without a nudge
CSV_FIELDS = (
    "experiment", "task", "cluster", "group", "split", "pair", "repeat", "variant", "variant_name", "position",
    "run_id", "status", "mean_score",
    "correct", "graded", "planned", "memory_calls", "misapplied_old_facts", "canary_hits",
    "active_seconds", "agent_seconds", "persona_seconds", "cost_usd",
    "tool_version", "benchmark_hash", "agent", "memory_snapshot", "memory_after", "recording",
)  # fmt: skip


def _agent_folders(run: RecordedRun) -> tuple[Path | None, Path | None]:
    """(snapshot, state folder) of the run's agent, its placeholders filled as the lifecycle
    fills them; the header holds the settings with the profile applied. None where a
    placeholder can't be filled any more (an environment variable gone)."""
    state = state_folder(run.header.agent, run.run_dir)
    process = run.header.agent.get("process")
    snapshot = process.get("snapshot") if isinstance(process, dict) else None
    if state is None or not snapshot:
        return None, state
    try:
        return Path(fill(str(snapshot), {"RUN_DIR": str(run.run_dir), "STATE_DIR": str(state)})), state
    except AdapterConfigError:
        return None, None


def _times(run: RecordedRun) -> tuple[float, float]:
    """(agent seconds: its replies' elapsed time; persona seconds: from each reply to the next
    message the persona sent — its model's thinking and grading, ~0 for the scripted one)."""
    agent = persona = 0.0
    last_reply: float | None = None
    for event in run.log.events:
        if isinstance(event, Replied):
            agent += event.elapsed
            last_reply = event.ts
        elif isinstance(event, (Said, Asked)) and last_reply is not None:
            persona += max(0.0, event.ts - last_reply)
            last_reply = None
        elif isinstance(event, RunStart):
            last_reply = None
    return round(agent, 2), round(persona, 2)


def run_line(run: RecordedRun) -> RunLine:
    s, meta, header = run.summary, run.meta, run.header
    stages = {q.question_id: q for q in autopsy_of(run).questions}
    expected = {q.id: q for q in s.planned}
    agent_seconds, persona_seconds = _times(run)
    agent_cost = s.costs.get("agent")
    priced = all(not c.unpriced for c in s.costs.values())
    snapshot, state = _agent_folders(run)
    deleted = deleted_before(run, {q.id for q in s.planned if q.deleted})

    def outcome(qid: str, ev: Evaluation) -> QuestionOutcome:
        right = is_correct(CORRECT_RULE, ev.score, ev.attempts)
        return QuestionOutcome(
            score=ev.score,
            certain=ev.certain,
            correct=right,
            tags=tuple(expected[qid].tags) if qid in expected else (),
            memory_calls=s.memory_calls_for(qid),
            stage="" if right or qid not in stages else stages[qid].verdict,
            links=stages[qid].links if qid in stages else None,
            # [deleted]: the deleted facts' names and numbers the answer states — a failed
            # deletion; any other wrong answer ("you never told me" misread, no reply) is not
            recalled=tuple(states_deleted(deleted.get(qid, ()), ev.answer)) if qid in deleted else None,
        )

    questions = {qid: outcome(qid, ev) for qid, ev in s.evaluations.items()}
    misapplied = misapplied_old_facts(run)
    return RunLine(
        run_id=s.run_id,
        status=s.ending,
        status_detail=s.ending_detail,
        experiment=meta.experiment,
        task=meta.task,
        cluster=meta.cluster_id,
        group=meta.group,
        split=meta.split,
        pair=meta.pair,
        repeat=meta.repeat,
        variant=meta.variant,
        variant_name=meta.variant_name or meta.variant,
        position=meta.position,
        rung=meta.rung or str(header.benchmark.get("rung", "")),
        fork_of=meta.fork_of,
        exam=meta.exam,
        question=meta.question,
        rollout=meta.rollout,
        mean_score=None if s.mean is None else round(s.mean, 3),
        correct=sum(q.correct for q in questions.values()),
        graded=len(s.evaluations),
        planned=len(s.planned),
        memory_calls=len(s.memory_calls) if run.observed else None,
        misapplied_old_facts=len(misapplied),
        misapplied_examples=tuple(misapplied[:2]),  # question ids, for 001's results table
        canary_hits=len(s.canary_hits),
        active_seconds=round(s.active_seconds, 2),
        agent_seconds=agent_seconds,
        persona_seconds=persona_seconds,
        retrieved=tuple(
            sorted({_retrieved(m.target or m.tool, s.memory_results.get(m.seq)) for m in s.memory_calls
                    if m.operation == "read"})
        )
        if run.observed
        else None,
        deletion_checks=tuple(deletion_checks(run)),
        cost_usd=round(sum(c.dollars for c in s.costs.values()), 6) if priced else None,
        agent_cost_usd=round(agent_cost.dollars, 6) if agent_cost and not agent_cost.unpriced else None,
        tool_version=header.tool_version or __version__,
        benchmark_hash=str(header.benchmark.get("hash", "")),
        # limits, correctness rule, persona (driver, model, prompt hash), grader and judge
        defines=header.defines
        or {"correct_rule": CORRECT_RULE.value, "logged": "not in this log (written before it was)"},
        agent=json.dumps(header.agent, sort_keys=True),
        decision=dict(recorded) if isinstance(recorded := meta.extra.get("decision"), dict) else {},
        memory_snapshot=_initial_state(run, snapshot),
        # the checkpoint its initial state was restored from (an experiment's `prepare:`), if any
        initial_state_from=f"{header.parent['run']}:{header.parent['checkpoint']}" if header.parent else "",
        step=meta.step,  # `memory: "accumulating"`: the task's place in its sequence
        memory_after=folder_hash(state),
        recording=str(run.run_dir),
        questions=questions,
        agent_calls=agent_cost.calls if agent_cost else 0,
        # what the first turns' memory reads returned to the model, over the graded questions
        returned_items=sum(s.memory_for(q).returned_items for q in s.evaluations) if run.observed else None,
        returned_chars=sum(s.memory_for(q).returned_chars for q in s.evaluations) if run.observed else None,
    )


def _retrieved(name: str, result: MemoryResult | None) -> str:
    """A memory read as a run line names it: what it read, and what it returned to the model."""
    if result is None:
        return f"{name} (what it returned was not seen)"
    return f"{name} ({result.items} item{'s' if result.items != 1 else ''}, {result.chars:,} chars)"


def _initial_state(run: RecordedRun, snapshot: Path | None) -> str:
    """The agent's state as the run's first start found it (logged: a hash, or "unknown
    (why)"); for a log from before that was logged, the snapshot's hash as it is now."""
    first = next((e for e in run.log.events if isinstance(e, RunStart)), None)
    if first is not None and first.state:
        return first.state
    return folder_hash(snapshot) if snapshot else "none (empty state folder)"


def write_lines(lines: list[RunLine], out: Path) -> tuple[Path, Path]:
    """`<out>.runs.jsonl` (everything, questions included) and `<out>.runs.csv` (flat)."""
    jsonl, table = (
        out.with_name(out.name + ".runs.jsonl"),
        out.with_name(out.name + ".runs.csv"),
    )  # names may hold dots
    jsonl.write_text(lines_jsonl(lines), encoding="utf-8")
    with table.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({**line.to_json(), "status": line.status_text} for line in lines)
    return jsonl, table


def lines_jsonl(lines: list[RunLine]) -> str:
    """The text of `NAME.runs.jsonl`: one run line a line."""
    return "".join(json.dumps(line.to_json(), ensure_ascii=False) + "\n" for line in lines)


def read_lines(jsonl: Path) -> list[RunLine]:
    """The run lines of a `.runs.jsonl` file (or a gate's baseline); `RunLineError` names the
    line (file:line) that is not one."""
    out = []
    for number, text in enumerate(jsonl.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            out.append(RunLine.from_json(json.loads(text)))
        except (ValueError, RunLineError) as exc:
            raise RunLineError(f"{jsonl}:{number}: not a run line ({exc})") from None
    return out
