"""Loading a distractor pool and screening it against the evidence it will sit beside.

A distractor must share no entity (a capitalised name), number or date with any evidence
benchmark the pool names in `screen_against`. What a caller may rely on: `load_pool` returns
only a pool that passed, and otherwise raises `BenchmarkErrors` naming each overlap with
file and line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from persona.benchmark.errors import BenchmarkError, BenchmarkErrors, SourceLocation
from persona.benchmark.loader import load_benchmark
from persona.benchmark.model import Benchmark, FactUpdate, Question, Utterance
from persona.benchmark.pool import Pool, pool_settings
from persona.terms import extract_identifiers, extract_quantities

_COMMON = set(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday the this that what when where who
    how and but she his her they their our its one two some every after before during last next
    январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь января февраля
    марта апреля мая июня июля августа сентября октября ноября декабря понедельник вторник среда
    четверг пятница суббота воскресенье это что когда где кто как мой моя мои наш наша они она он""".split()
)
_MONTHS = (
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
    r"|январ|феврал|март|апрел|ма[яй]|июн|июл|август|сентябр|октябр|ноябр|декабр)\w*"
)
_DATE = re.compile(rf"\b(\d{{1,2}})\s+({_MONTHS})|({_MONTHS})\s+(\d{{1,2}})\b", re.IGNORECASE)


@dataclass(frozen=True)
class Marks:
    """What a text could be confused by: names, numbers, dates."""

    entities: frozenset[str]
    numbers: frozenset[str]
    dates: frozenset[str]


# titles before a name, as people write them ("Dr. Costa", «проф. Лукина»): the name after one
# is no sentence's first word, and the title itself is no name
_TITLES = frozenset("dr mr mrs ms mx prof rev capt sgt sir dame проф доц акад".split())
_TITLE_DOT = re.compile(r"(?i)\b(" + "|".join(sorted(_TITLES)) + r")\.\s+")


def marks(text: str) -> Marks:
    """The names (capitalised words past a sentence's first, titles aside), numbers and dates
    of `text` — what the deletion check and the autopsy look for in an answer."""
    entities = set()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n", _TITLE_DOT.sub(r"\1 ", text)):
        words = re.findall(r"[^\W\d_][\w'-]*", sentence)
        for word in words[1:]:
            lowered = word.lower()
            if (
                word[0].isupper()
                and len(word) >= 3
                and lowered not in _COMMON
                and lowered.removesuffix("s") not in _COMMON
                and lowered not in _TITLES
            ):
                entities.add(word.lower().replace("ё", "е")[:6])
    numbers = set()
    for q in extract_quantities(text):
        if isinstance(q.value, str) or q.value >= 10 or q.value != int(q.value):
            numbers.add(str(q.value))
    numbers |= extract_identifiers(text)
    dates = set()
    for m in _DATE.finditer(text):
        day = m.group(1) or m.group(4)
        month = (m.group(2) or m.group(3)).lower()[:3]
        dates.add(f"{int(day)} {month}")
    return Marks(frozenset(entities), frozenset(numbers), frozenset(dates))


def evidence_texts(bench: Benchmark) -> Iterable[str]:
    for ff in bench.facts.values():
        yield from (f.text for f in ff.facts.values())
    for phase in bench.phases:
        for item in phase.items:
            if isinstance(item, (Utterance, FactUpdate)):
                yield item.text
            elif isinstance(item, Question):
                yield f"{item.text} {item.expected}"


def load_pool(folder: Path) -> Pool:
    """Load and screen a pool; raises `BenchmarkErrors` for any overlap or bad file."""
    errors: list[BenchmarkError] = []
    config = pool_settings(folder)
    against = [str(p) for p in config.get("screen_against", [])]
    evidence: dict[str, Marks] = {}
    for rel in against:
        bench = load_benchmark(folder / rel)
        evidence[bench.name] = marks("\n".join(evidence_texts(bench)))
    sessions: dict[str, list[tuple[int, str]]] = {}
    titles: dict[str, str] = {}
    for path in sorted(folder.glob("*.md")):
        if path.name.lower() == "readme.md":
            continue
        facts = []
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("# ") and path.name not in titles:
                titles[path.name] = line[2:].strip()
            m = re.match(r"^\d+\.\d+\s+(.+)$", line.strip())
            if m:
                facts.append((lineno, m.group(1)))
        if not facts:
            errors.append(
                BenchmarkError(
                    SourceLocation(path, 0), "no facts (`N.M text` lines) in this distractor session"
                )
            )
        for lineno, text in facts:
            mine = marks(text)
            for name, theirs in evidence.items():
                clash = sorted(
                    (mine.entities & theirs.entities)
                    | (mine.numbers & theirs.numbers)
                    | (mine.dates & theirs.dates)
                )
                if clash:
                    errors.append(
                        BenchmarkError(
                            SourceLocation(path, lineno),
                            f"overlaps the evidence of {name}: {', '.join(clash)}",
                        )
                    )
        sessions[path.name] = facts
    if len(sessions) < 1:
        errors.append(BenchmarkError(SourceLocation(folder, 0), "the pool has no sessions"))
    if errors:
        raise BenchmarkErrors(errors)
    return Pool(folder, sessions, tuple(evidence), titles, str(config.get("language", "en")))
