"""The benchmark format (design §3): load a benchmark folder into typed, validated data.

A benchmark is data: `benchmark.json` (JSON5), `instructions.md`, `profile.md`, facts files
and chapters. Loading never executes anything and never reads outside the folder. Every
problem found is reported with file and line, all of them at once (`BenchmarkErrors`), so a
bad benchmark fails before a run starts rather than hours into it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5

from persona.directives import BenchAction, Directive, SetVar, parse_directives
from persona.errors import BenchmarkError, BenchmarkErrors, SourceLocation
from persona.scale import ScaleSpec, insert_index, parse_scale

DEFAULT_ANSWER_MARKERS = ("Правильный ответ", "Correct answer", "Expected answer")
DELETED_MARKERS = ("—", "-", "–")
_NOT_FACTS = {"instructions.md", "readme.md"}

_FACT_SECTION = re.compile(r"^##\s+(\d+)\.?\s*(.*)$")
_FACT_LINE = re.compile(r"^(\d+)\.(\d+)\.?(?:\s+(.*))?$")
_TAG = re.compile(r"\[([A-Za-z_][\w-]*)\]")
_QUESTION = re.compile(r"^❓\s*(\S+)\s+(.*)$")
_UPDATE = re.compile(r"^✎\s*(\S+)\s+(\d+\.\d+)\s+(.+)$")
_FENCE = re.compile(r"^```\s*([A-Za-z]*)\s*$")


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

    @property
    def abstain(self) -> bool:
        """The right answer is that the agent was never told."""
        return "abstain" in self.tags


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
    scale: ScaleSpec | None = None
    rung: str = ""  # set by `persona.scale.apply_rung`
    distractors: tuple[str, ...] = ()  # the pool sessions inserted on that rung, in order

    @property
    def profile(self) -> FactsFile | None:
        return self.facts.get("profile")

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(q for p in self.phases for q in p.questions)


def load_benchmark(root: Path | str) -> Benchmark:
    """Load and validate the benchmark folder `root`.

    Raises `BenchmarkErrors` listing every problem found (file:line and what was expected).
    """
    root = Path(root)
    loader = _Loader(root)
    return loader.load()


class _Loader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = root.resolve()
        self.errors: list[BenchmarkError] = []
        self.warnings: list[str] = []
        self.hash_parts: list[tuple[str, bytes]] = []

    def error(self, path: Path | str, line: int, message: str) -> None:
        self.errors.append(BenchmarkError(SourceLocation(Path(path), line), message))

    def load(self) -> Benchmark:
        config_path = self.root / "benchmark.json"
        if not self.root.is_dir():
            raise BenchmarkErrors([BenchmarkError(SourceLocation(self.root), "not a folder")])
        raw = self._read(config_path, "benchmark.json")
        if raw is None:
            raise BenchmarkErrors(self.errors)
        try:
            settings = json5.loads(raw)
        except ValueError as exc:
            line, message = _json5_error(str(exc))
            self.error(config_path, line, f"invalid JSON5: {message}")
            raise BenchmarkErrors(self.errors) from None
        if not isinstance(settings, dict):
            self.error(config_path, 1, "expected a JSON object at the top level")
            raise BenchmarkErrors(self.errors)

        chapters = settings.get("chapters")
        if not isinstance(chapters, list) or not chapters or not all(isinstance(c, str) for c in chapters):
            self.error(
                config_path, _key_line(raw, "chapters"), 'expected "chapters": a non-empty list of file names'
            )
            chapters = []
        markers = settings.get("answer_markers", [])
        if not isinstance(markers, list) or not all(isinstance(m, str) and m for m in markers):
            self.error(
                config_path, _key_line(raw, "answer_markers"), '"answer_markers" must be a list of strings'
            )
            markers = []
        answer_markers = tuple(dict.fromkeys([*markers, *DEFAULT_ANSWER_MARKERS]))

        canaries = settings.get("canaries", [])
        if not isinstance(canaries, list) or not all(isinstance(c, str) and c.strip() for c in canaries):
            self.error(config_path, _key_line(raw, "canaries"), '"canaries" must be a list of marker strings')
        facts = self._load_facts(settings, raw, config_path, set(chapters))
        instructions = self._read(self.root / "instructions.md", "instructions.md", required=False) or ""

        phases: list[Phase] = []
        for chapter in chapters:
            text = self._read_inside(chapter, config_path, _key_line(raw, "chapters"), "chapter")
            if text is not None:
                phases.extend(self._parse_chapter(chapter, text, len(phases), answer_markers, facts))

        seen: dict[str, Question] = {}
        for q in (q for p in phases for q in p.questions):
            if q.id in seen:
                first = seen[q.id]
                self.error(
                    self.root / q.chapter,
                    q.line,
                    f"question id {q.id} is already used at {first.chapter}:{first.line}",
                )
            else:
                seen[q.id] = q
        if chapters and not phases and not self.errors:
            self.error(config_path, _key_line(raw, "chapters"), "the chapters hold no `## ` phase")
        scale = self._check_scale(settings, raw, config_path, tuple(phases))
        if self.errors:
            raise BenchmarkErrors(self.errors)

        digest = hashlib.sha256()
        for rel, data in sorted(self.hash_parts):
            digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        return Benchmark(
            root=self.root,
            name=str(settings.get("name") or self.root.name),
            language=str(settings.get("language", "en")),
            chapters=tuple(chapters),
            phases=tuple(phases),
            facts=facts,
            instructions=instructions,
            answer_markers=answer_markers,
            settings=settings,
            content_hash=digest.hexdigest(),
            warnings=tuple(self.warnings),
            scale=scale,
        )

    def _check_scale(
        self, settings: dict[str, Any], raw: str, config_path: Path, phases: tuple[Phase, ...]
    ) -> ScaleSpec | None:
        if "scale" not in settings:
            return None
        line = _key_line(raw, "scale")
        spec, problems = parse_scale(settings["scale"])
        for problem in problems:
            self.error(config_path, line, problem)
        if spec is None:
            return None
        at = insert_index(phases, spec.insert_before)
        if at is None and phases:
            self.error(
                config_path,
                _key_line(raw, "insert_before"),
                f"`scale.insert_before`: no chapter file or phase title {spec.insert_before!r}",
            )
        elif at is not None and "new_session" not in phases[at].actions:
            # otherwise rung s0 continues the evidence in the same session and s1 doesn't:
            # the rungs would differ by more than the distractors
            self.error(
                config_path,
                _key_line(raw, "insert_before"),
                f"`scale.insert_before`: phase {phases[at].title!r} must start with `await bench.newSession()`",
            )
        pool = (self.root / spec.distractors).resolve()
        if not (pool / "pool.json5").is_file():
            self.error(
                config_path,
                _key_line(raw, "distractors"),
                f"`scale.distractors`: {pool} is not a distractor pool (no pool.json5)",
            )
            return spec
        from persona.distractors import pool_language  # imported here: distractors loads benchmarks

        try:
            theirs = pool_language(pool)
        except BenchmarkErrors as exc:
            self.errors.extend(exc.errors)
            return spec
        ours = str(settings.get("language", "en"))
        if theirs != ours:
            # the persona would switch language for every distractor session: an agent could
            # tell them from the evidence by language alone, and the ladder would measure less
            self.error(
                config_path,
                _key_line(raw, "distractors"),
                f"`scale.distractors`: the pool {pool} is in {theirs!r}, this benchmark in {ours!r}; "
                "point at a pool in the benchmark's language",
            )
        return spec

    # -- files -----------------------------------------------------------------------------

    def _read(self, path: Path, rel: str, required: bool = True) -> str | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            if required:
                self.error(path, 0, "file not found")
            return None
        except OSError as exc:
            self.error(path, 0, f"can't read: {exc.strerror}")
            return None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            self.error(path, line, "not valid UTF-8")
            return None
        self.hash_parts.append((rel, data))
        return text

    def _inside(self, rel: str, referrer: Path, line: int, what: str) -> Path | None:
        candidate = self.root / rel
        if Path(rel).is_absolute() or not candidate.resolve().is_relative_to(self.real_root):
            self.error(referrer, line, f"{what} path {rel!r} leads outside the benchmark folder")
            return None
        return candidate

    def _read_inside(self, rel: str, referrer: Path, line: int, what: str) -> str | None:
        path = self._inside(rel, referrer, line, what)
        if path is None:
            return None
        if not path.is_file():
            self.error(referrer, line, f"{what} file {rel!r} not found in {self.root}")
            return None
        return self._read(path, rel)

    def _load_facts(
        self, settings: dict[str, Any], raw: str, config_path: Path, chapters: set[str]
    ) -> dict[str, FactsFile]:
        listed = settings.get("facts")
        if listed is not None:
            if not isinstance(listed, list) or not all(isinstance(x, str) for x in listed):
                self.error(config_path, _key_line(raw, "facts"), '"facts" must be a list of file names')
                listed = []
            names = list(listed)
            if "profile.md" not in names and (self.root / "profile.md").is_file():
                names.insert(0, "profile.md")
        else:
            names = sorted(
                p.relative_to(self.root).as_posix()
                for p in [*self.root.glob("*.md"), *self.root.glob("facts/*.md")]
                if p.name.lower() not in _NOT_FACTS and p.relative_to(self.root).as_posix() not in chapters
            )
        out: dict[str, FactsFile] = {}
        for rel in names:
            if listed is None and not _looks_like_facts(self.root / rel):
                continue  # found by looking, not named: a chapter left out of `chapters`, notes, ...
            text = self._read_inside(rel, config_path, _key_line(raw, "facts"), "facts")
            if text is None:
                continue
            ff = self._parse_facts(rel, text)
            if ff.name in out:
                self.error(config_path, _key_line(raw, "facts"), f"two facts files are named {ff.name!r}")
            out[ff.name] = ff
        return out

    # -- facts files -----------------------------------------------------------------------

    def _parse_facts(self, rel: str, text: str) -> FactsFile:
        path = self.root / rel
        title = ""
        sections: dict[str, str] = {}
        facts: dict[str, Fact] = {}
        lines_of: dict[str, int] = {}
        section: str | None = None
        fence = False
        for lineno, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if stripped.startswith("```"):
                fence = not fence
                continue
            if fence or not stripped:
                continue
            if stripped.startswith("# ") and not title:
                title = stripped[2:].strip()
            elif stripped.startswith("##"):
                m = _FACT_SECTION.match(stripped)
                if not m:
                    self.error(path, lineno, f"expected a section heading `## N. Subtopic`, got {stripped!r}")
                    section = None
                    continue
                section = m.group(1)
                if section in sections:
                    self.error(path, lineno, f"section {section} appears twice")
                sections[section] = m.group(2).strip()
            elif m := _FACT_LINE.match(stripped):
                fact_id = f"{m.group(1)}.{m.group(2)}"
                body = (m.group(3) or "").strip()
                if section is None:
                    self.error(
                        path,
                        lineno,
                        f"fact {fact_id} is outside a section; expected a `## {m.group(1)}. Subtopic` heading above it",
                    )
                    continue
                if m.group(1) != section:
                    self.error(
                        path, lineno, f"fact {fact_id} is under section {section}; expected an id {section}.N"
                    )
                    continue
                if fact_id in lines_of:
                    self.error(
                        path, lineno, f"duplicate fact id {fact_id} (first at line {lines_of[fact_id]})"
                    )
                    continue
                lines_of[fact_id] = lineno
                if not body:
                    self.error(path, lineno, f"fact {fact_id} has no text; write `—` to mark it deleted")
                elif body not in DELETED_MARKERS:
                    facts[fact_id] = Fact(Path(rel).stem, fact_id, body, lineno)
        return FactsFile(Path(rel).stem, rel, title or Path(rel).stem, sections, facts)

    # -- chapters --------------------------------------------------------------------------

    def _parse_chapter(
        self,
        chapter: str,
        text: str,
        first_index: int,
        markers: tuple[str, ...],
        facts: dict[str, FactsFile],
    ) -> list[Phase]:
        path = self.root / chapter
        marker_re = re.compile(
            r"\s*(?:" + "|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True)) + r")\s*:\s*",
            re.IGNORECASE,
        )
        phases: list[Phase] = []
        current: dict[str, Any] | None = None
        lines = text.splitlines()
        i = 0

        def close() -> None:
            if current is not None:
                phases.append(
                    Phase(
                        index=first_index + len(phases),
                        chapter=chapter,
                        title=current["title"],
                        line=current["line"],
                        directives=tuple(current["directives"]),
                        items=tuple(current["items"]),
                        description="\n".join(current["description"]).strip(),
                    )
                )

        while i < len(lines):
            lineno = i + 1
            stripped = lines[i].strip()
            fence = _FENCE.match(stripped)
            if fence:
                end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
                if end is None:
                    self.error(path, lineno, "code block is never closed; expected a closing ```")
                    break
                lang = fence.group(1).lower()
                if lang in ("js", "javascript"):
                    if current is None:
                        self.error(
                            path,
                            lineno,
                            "directive block before the first `## ` phase; directives belong to a phase",
                        )
                    elif current["items"] or current["description"]:
                        self.error(
                            path, lineno, "directive block must open the phase (before any other content)"
                        )
                    else:
                        try:
                            current["directives"].extend(
                                parse_directives(lines[i + 1 : end], path, lineno + 1)
                            )
                        except BenchmarkError as exc:
                            self.errors.append(exc)
                elif current is not None:
                    current["description"].extend(lines[i : end + 1])
                i = end + 1
                continue
            if stripped.startswith("## "):
                close()
                current = {
                    "title": stripped[3:].strip(),
                    "line": lineno,
                    "directives": [],
                    "items": [],
                    "description": [],
                }
            elif stripped.startswith("❓"):
                if current is None:
                    self.error(path, lineno, "question before the first `## ` phase")
                else:
                    q = self._parse_question(stripped, chapter, lineno, marker_re, markers)
                    if q is not None:
                        current["items"].append(q)
                        current["description"].append(stripped)
            elif stripped.startswith("✎"):
                if current is None:
                    self.error(path, lineno, "fact update before the first `## ` phase")
                else:
                    u = self._parse_update(stripped, path, lineno, facts)
                    if u is not None:
                        current["items"].append(u)
                        current["description"].append(stripped)
            elif stripped.startswith(">"):
                said = stripped[1:].strip()
                if current is None:
                    self.error(path, lineno, "utterance `> ` before the first `## ` phase")
                elif said:
                    current["items"].append(Utterance(said, lineno))
                    current["description"].append(stripped)
            elif current is not None and not stripped.startswith("# "):
                current["description"].append(lines[i])
            i += 1
        close()

        for phase in phases:
            for d in phase.directives:
                if isinstance(d, SetVar) and d.name == "require_all_facts":
                    values = d.value if isinstance(d.value, list) else [d.value]
                    for v in values:
                        if not isinstance(v, str) or _facts_name(v) not in facts:
                            known = ", ".join(sorted(facts)) or "none"
                            self.error(
                                path,
                                d.line,
                                f"require_all_facts names unknown facts file {v!r}; known: {known}",
                            )
                elif isinstance(d, SetVar) and d.name != "revoke_canary":
                    self.warnings.append(f"{path}:{d.line}: vars.{d.name} is not used by marathonbench")
        return phases

    def _parse_question(
        self, line: str, chapter: str, lineno: int, marker_re: re.Pattern[str], markers: tuple[str, ...]
    ) -> Question | None:
        path = self.root / chapter
        m = _QUESTION.match(line)
        if not m:
            self.error(path, lineno, "expected `❓ <id> <question> Correct answer: <answer>`")
            return None
        qid, rest = m.group(1), m.group(2)
        split = marker_re.search(rest)
        if not split:
            shown = " / ".join(f"{mk}:" for mk in markers)
            self.error(
                path,
                lineno,
                f"question {qid} has no answer marker; expected one of {shown} followed by the answer",
            )
            return None
        question, expected = rest[: split.start()], rest[split.end() :]
        tags = tuple(dict.fromkeys(t.lower() for t in _TAG.findall(question + " " + expected)))
        question = _TAG.sub("", question).strip()
        expected = _TAG.sub("", expected).strip()
        if not question:
            self.error(path, lineno, f"question {qid} has no question text")
            return None
        if not expected and "abstain" not in tags:
            self.error(path, lineno, f"question {qid} has no expected answer after the marker")
            return None
        return Question(qid, question, expected, tags, chapter, lineno)

    def _parse_update(
        self, line: str, path: Path, lineno: int, facts: dict[str, FactsFile]
    ) -> FactUpdate | None:
        m = _UPDATE.match(line)
        if not m:
            self.error(path, lineno, "expected `✎ <facts file> <N.M> <new text or —>`")
            return None
        name = _facts_name(m.group(1))
        if name not in facts:
            self.error(
                path,
                lineno,
                f"✎ names unknown facts file {m.group(1)!r}; known: {', '.join(sorted(facts)) or 'none'}",
            )
            return None
        return FactUpdate(name, m.group(2), m.group(3).strip(), lineno)


def _looks_like_facts(path: Path) -> bool:
    """A facts file has `## N.` sections or `N.M` lines, and no questions or directives."""
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError):
        return True  # let the reader report it
    if any(ln.startswith(("❓", "```js", "✎")) for ln in lines):
        return False
    return any(_FACT_SECTION.match(ln) or _FACT_LINE.match(ln) for ln in lines)


def _facts_name(ref: str) -> str:
    """`family`, `family.md` and `facts/family.md` all name the facts file `family`."""
    return Path(ref).stem if ref.endswith(".md") else ref


def _json5_error(message: str) -> tuple[int, str]:
    m = re.match(r"<string>:(\d+)\s*(.*)", message)
    return (int(m.group(1)), m.group(2)) if m else (0, message)


def _key_line(raw: str, key: str) -> int:
    """Line of `key` in the JSON5 source, so errors about a value point at it (1 if absent)."""
    m = re.search(r'["\']?\b' + re.escape(key) + r'\b["\']?\s*:', raw)
    return raw[: m.start()].count("\n") + 1 if m else 1
