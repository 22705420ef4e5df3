"""The benchmark format's data (design §3): what a loaded benchmark is.

Frozen dataclasses only — facts files, phases with their utterances, updates and questions,
the benchmark itself. What a caller may rely on: a `Benchmark` is immutable and fully
validated (it comes from `persona.benchmark.loader.load_benchmark`, or from
`persona.benchmark.ladder.apply_rung`, which inserts distractor phases into a copy); fact ids
are `file:N.M` strings; a fact whose text is one of `DELETED_MARKERS` is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from persona.benchmark.directives import BenchAction, Directive, SetVar
from persona.benchmark.scale import ScaleSpec

DELETED_MARKERS = ("—", "-", "–")


@dataclass(frozen=True)
class Fact:
    file: str
    id: str
    text: str
    line: int


@dataclass(frozen=True)
class FactsFile:
    """One facts file; `name` is its stem (`family` for `family.md`), as directives name it."""

    name: str
    path: str
    title: str
    sections: dict[str, str]
    facts: dict[str, Fact]


@dataclass(frozen=True)
class Utterance:
    """A `> ` line: said verbatim by the scripted driver, in its own words by an LLM persona."""

    text: str
    line: int


@dataclass(frozen=True)
class FactUpdate:
    """A `✎ file id text` line: the ground truth changes here; `text` of `—` deletes the fact."""

    file: str
    fact_id: str
    text: str
    line: int

    @property
    def deletes(self) -> bool:
        return self.text.strip() in DELETED_MARKERS


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    expected: str
    tags: tuple[str, ...]
    chapter: str
    line: int
    # the facts' texts holding the expected answer when it is asked ("rent is £1,210 a month"):
    # filled in by whoever grades (the persona knows the live facts), so a grader can tell
    # "£1,210 a week" from the value as told; empty when unknown
    evidence: tuple[str, ...] = ()
    # every live fact's text when it is asked (filled in with `evidence`): what an answer may
    # mention beside the expected value without making a claim nobody made
    known: tuple[str, ...] = ()
    # the live facts of the evidence's sections ("3.1"–"3.4" beside "3.3"): what an answer may
    # say in the same breath as the value (the landlord's name beside the rent)
    near: tuple[str, ...] = ()
    # the earlier texts of the facts holding the answer (filled in with `evidence`): the history
    # an answer may tell beside the current value ("it was £1,195 before")
    superseded: tuple[str, ...] = ()

    @property
    def abstain(self) -> bool:
        """The right answer is that the agent was never told."""
        return "abstain" in self.tags

    @property
    def deleted(self) -> bool:
        """About a fact the user told and then asked to forget: the right answer says so."""
        return "deleted" in self.tags


type PhaseItem = Utterance | FactUpdate | Question


@dataclass(frozen=True)
class Phase:
    index: int
    chapter: str
    title: str
    line: int
    directives: tuple[Directive, ...]
    items: tuple[PhaseItem, ...]
    description: str
    distractor: str = ""  # the pool session this phase plays, on a scale-ladder rung
    # lines of free text (MarathonMemBench's instructions to an LLM persona: «Расскажи, как идёт
    # ремонт…»): the scripted persona can't play them; (line number, text)
    prose: tuple[tuple[int, str], ...] = ()

    @property
    def prose_only(self) -> bool:
        """Free text and nothing the scripted persona can say: no `>` lines, `✎` updates,
        questions or `require_all_facts` (MarathonMemBench's «Расскажи, как идёт ремонт…
        Обнови бюджет»). A scripted run skips what it says."""
        return bool(self.prose) and not self.items and not self.require_all_facts

    @property
    def require_all_facts(self) -> tuple[str, ...]:
        names: list[str] = []
        for d in self.directives:
            if isinstance(d, SetVar) and d.name == "require_all_facts":
                value = d.value
                names.extend(str(v) for v in (value if isinstance(value, list) else [value]))
        return tuple(names)

    @property
    def actions(self) -> tuple[str, ...]:
        return tuple(d.action for d in self.directives if isinstance(d, BenchAction))

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(i for i in self.items if isinstance(i, Question))


@dataclass(frozen=True)
class Benchmark:
    root: Path
    name: str
    language: str
    chapters: tuple[str, ...]
    phases: tuple[Phase, ...]
    facts: dict[str, FactsFile]
    instructions: str
    answer_markers: tuple[str, ...]
    settings: dict[str, Any]
    content_hash: str
    warnings: tuple[str, ...] = field(default=())
    language_source: str = "declared in benchmark.json"  # or how it was detected from the text
    scale: ScaleSpec | None = None
    rung: str = ""  # set by `persona.benchmark.ladder.apply_rung`
    distractors: tuple[str, ...] = ()  # the pool sessions inserted on that rung, in order

    @property
    def profile(self) -> FactsFile | None:
        return self.facts.get("profile")

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(q for p in self.phases for q in p.questions)


def insert_index(phases: tuple[Phase, ...], insert_before: str) -> int | None:
    """The index of the first phase of chapter `insert_before`, or of the phase titled so."""
    for phase in phases:
        if phase.chapter == insert_before or phase.title == insert_before:
            return phase.index
    return None
