"""Loading a benchmark folder into typed, validated data (design §3).

A benchmark is data: `benchmark.json` (JSON5), `instructions.md`, `profile.md`, facts files
and chapters. Loading never executes anything and never reads outside the folder. Every
problem found is reported with file and line, all of them at once (`BenchmarkErrors`), so a
bad benchmark fails before a run starts rather than hours into it.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import re
import stat
from pathlib import Path
from typing import Any

import json5

from persona.benchmark.cache import LOADED, MAX_BENCHMARK_BYTES, MAX_FILE_BYTES
from persona.benchmark.chapters import ChapterParser
from persona.benchmark.errors import BenchmarkError, BenchmarkErrors, SourceLocation
from persona.benchmark.lint import answers_in_context, giveaways, now_over_dated_updates
from persona.benchmark.model import (
    DELETED_MARKERS,
    Benchmark,
    Fact,
    FactsFile,
    Phase,
    Question,
    insert_index,
)
from persona.benchmark.pool import is_pool, pool_language
from persona.benchmark.scale import ScaleSpec, parse_scale
from persona.json5_bounds import MAX_JSON_DEPTH, json5_nesting
from persona.languages import detect_language, known_languages

DEFAULT_ANSWER_MARKERS = ("Правильный ответ", "Correct answer", "Expected answer")
_NOT_FACTS = {"instructions.md", "readme.md"}

_FACT_SECTION = re.compile(r"^##\s+(\d+)\.?\s*(.*)$")
_FACT_LINE = re.compile(r"^(\d+)\.(\d+)\.?(?:\s+(.*))?$")


def load_benchmark(root: Path | str) -> Benchmark:
    """Load and validate the benchmark folder `root`.

    Raises `BenchmarkErrors` listing every problem found (file:line and what was expected).
    Loaded once per process while its files stay as they were (`persona.benchmark.cache`):
    an edit is always seen, never a stale benchmark.
    """
    root = Path(root)
    if (kept := LOADED.get(root)) is not None:
        return kept
    loader = _Loader(root)
    bench = loader.load()
    LOADED.keep(root, [rel for rel, _ in loader.hash_parts], bench)
    return bench




class _Loader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.real_root = root.resolve()
        self.errors: list[BenchmarkError] = []
        self.warnings: list[str] = []
        self.hash_parts: list[tuple[str, bytes]] = []
        self.total_bytes = 0  # of the files read so far: at most MAX_BENCHMARK_BYTES

    def error(self, path: Path | str, line: int, message: str) -> None:
        self.errors.append(BenchmarkError(SourceLocation(Path(path), line), message))

    def load(self) -> Benchmark:
        config_path = self.root / "benchmark.json"
        if not self.root.is_dir():
            raise BenchmarkErrors([BenchmarkError(SourceLocation(self.root), "not a folder")])
        raw = self._read(config_path, "benchmark.json")
        if raw is None:
            raise BenchmarkErrors(self.errors)
        nested = json5_nesting(raw)
        if nested > MAX_JSON_DEPTH:
            self.error(config_path, 1, f"objects and lists nested {nested} deep; at most {MAX_JSON_DEPTH}")
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
        self._unknown_keys(settings, raw, config_path)

        chapters = settings.get("chapters")
        if not isinstance(chapters, list) or not chapters or not all(isinstance(c, str) for c in chapters):
            self.error(
                config_path, _key_line(raw, "chapters"), 'expected "chapters": a non-empty list of file names'
            )
            chapters = []
        self._refuse_if_too_big(config_path, chapters)
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
        scope = settings.get("deletion_scope", [])
        if not isinstance(scope, list) or not all(
            isinstance(g, str) and g.strip() and not g.startswith("/") and ".." not in g.split("/") for g in scope
        ):
            self.error(
                config_path,
                _key_line(raw, "deletion_scope"),
                '"deletion_scope" must be a list of glob patterns inside the agent\'s state folder '
                '(e.g. ["memory/**", "sessions/**"], or ["**"] for all of it)',
            )
        facts = self._load_facts(settings, raw, config_path, set(chapters))
        instructions = self._read(self.root / "instructions.md", "instructions.md", required=False) or ""

        phases: list[Phase] = []
        parser = ChapterParser(self.root, self.errors, self.warnings)
        chapter_texts: list[str] = []
        for chapter in chapters:
            text = self._read_inside(chapter, config_path, _key_line(raw, "chapters"), "chapter")
            if text is not None:
                chapter_texts.append(text)
                phases.extend(parser.parse(chapter, text, len(phases), answer_markers, facts))
        facts_text = "\n".join(f.text for file in facts.values() for f in file.facts.values())
        language, language_source = self._language(
            settings, raw, config_path, "\n".join(chapter_texts), facts_text
        )

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
        self.warnings.extend(giveaways([q for p in phases for q in p.questions], self.root))
        self.warnings.extend(now_over_dated_updates(phases, self.root))
        self.warnings.extend(answers_in_context(phases, facts, self.root))
        if chapters and not phases and not self.errors:
            self.error(config_path, _key_line(raw, "chapters"), "the chapters hold no `## ` phase")
        scale = self._check_scale(settings, raw, config_path, tuple(phases), language)
        if self.errors:
            raise BenchmarkErrors(self.errors)

        digest = hashlib.sha256()
        for rel, data in sorted(self.hash_parts):
            digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        return Benchmark(
            root=self.root,
            name=str(settings.get("name") or self.root.name),
            language=language,
            language_source=language_source,
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

    def _unknown_keys(self, settings: dict[str, Any], raw: str, config_path: Path) -> None:
        """A key near one we read is a typo that silently changes the benchmark (`langauge`): refused.
        Any other may be another tool's (the format leaves room): a warning that it is not read."""
        for key in map(str, settings):
            if key in BENCHMARK_KEYS:
                continue
            near = difflib.get_close_matches(key, BENCHMARK_KEYS, n=1, cutoff=0.75)
            if near:
                self.error(config_path, _key_line(raw, key), f"unknown key {key!r} (did you mean {near[0]!r}?)")
            else:
                self.warnings.append(f"{config_path}:{_key_line(raw, key)}: key {key!r} is not read by marathonbench")

    def _language(
        self, settings: dict[str, Any], raw: str, config_path: Path, chapters: str, facts: str
    ) -> tuple[str, str]:
        """The benchmark's language and how it was decided: declared, or detected from the
        text (a benchmark without `language` is not taken as English: MarathonMemBench's are
        Russian and don't declare it). Warns when the parts disagree."""
        declared = settings.get("language")
        whole = detect_language(chapters + "\n" + facts)
        if declared is not None and (not isinstance(declared, str) or not declared.strip()):
            self.error(
                config_path,
                _key_line(raw, "language"),
                '"language" must be a language code like "en" or "ru"',
            )
            declared = None
        if isinstance(declared, str):
            language, source = declared.strip(), "declared in benchmark.json"
            if whole.language and whole.language != language.split("-")[0].lower():
                self.warnings.append(
                    f"{config_path}: declared language {language!r}, but the text reads as "
                    f"{whole.language!r} ({whole.describe()})"
                )
        elif whole.language:
            language, source = whole.language, f"detected from the text: {whole.describe()}"
        else:
            language, source = "en", f"taken as English: {whole.describe()}; declare `language`"
        by_part = {part: detect_language(text) for part, text in (("chapters", chapters), ("facts", facts))}
        if len({d.language for d in by_part.values() if d.language}) > 1:
            self.warnings.append(
                "the chapters and the facts files read as different languages: "
                + "; ".join(f"{part} {d.language!r} ({d.describe()})" for part, d in by_part.items())
            )
        if language.split("-")[0].lower() not in known_languages():
            self.warnings.append(
                f"no persona language file for {language!r} (there are: {', '.join(known_languages())}): "
                "the scripted persona can't play this benchmark; add persona/languages/"
                f"{language.split('-')[0].lower()}.json5"
            )
        return language, source

    def _check_scale(
        self, settings: dict[str, Any], raw: str, config_path: Path, phases: tuple[Phase, ...], language: str
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
        beside = self.root.resolve().parent
        if Path(spec.distractors).is_absolute() or not pool.is_relative_to(beside):
            # a benchmark is data from anywhere: it must not make us read (and send to the
            # agent) files outside the folder it came in
            self.error(
                config_path,
                _key_line(raw, "distractors"),
                f"`scale.distractors`: {spec.distractors!r} leads outside the benchmark's folder and "
                f"the folder holding it ({beside}); name a pool there, or give the run's config "
                "`pool: PATH` to use one elsewhere",
            )
            return spec
        if not is_pool(pool):
            self.error(
                config_path,
                _key_line(raw, "distractors"),
                f"`scale.distractors`: {pool} is not a distractor pool (no pool.json5)",
            )
            return spec
        try:
            theirs = pool_language(pool)
        except BenchmarkErrors as exc:
            self.errors.extend(exc.errors)
            return spec
        ours = language
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

    def _refuse_if_too_big(self, config_path: Path, chapters: list[str]) -> None:
        """Before anything is parsed: the files the benchmark may read — its chapters and the
        `.md` files beside them — hold at most MAX_BENCHMARK_BYTES in all, else one error."""
        paths = {config_path, *self.root.glob("*.md"), *self.root.glob("facts/*.md")}
        paths |= {self.root / c for c in chapters if "\x00" not in c}
        total = 0
        for path in paths:
            with contextlib.suppress(OSError, ValueError):
                info = path.stat()
                total += info.st_size if stat.S_ISREG(info.st_mode) else 0
        if total > MAX_BENCHMARK_BYTES:
            self.error(
                config_path, 1, f"the benchmark's files hold {total:,} bytes; a benchmark may hold at most "
                f"{MAX_BENCHMARK_BYTES:,} in all (its chapters and the .md files beside them)",
            )  # fmt: skip
            raise BenchmarkErrors(self.errors)

    def _read(self, path: Path, rel: str, required: bool = True) -> str | None:
        """A file of the benchmark: inside its folder (symlinks resolved), a regular file (not
        a FIFO that would hang or a device that never ends), at most MAX_FILE_BYTES."""
        try:
            real = path.resolve()
            info = real.stat()
        except FileNotFoundError:
            if required:
                self.error(path, 0, "file not found")
            return None
        except (OSError, ValueError) as exc:
            self.error(path, 0, f"can't read: {getattr(exc, 'strerror', None) or exc}")
            return None
        if not real.is_relative_to(self.real_root):
            self.error(
                path,
                0,
                f"leads outside the benchmark folder (to {real}); a benchmark reads only its own files",
            )
            return None
        if not stat.S_ISREG(info.st_mode):
            self.error(path, 0, "not a regular file (a FIFO, a device or a folder?)")
            return None
        if info.st_size > MAX_FILE_BYTES:
            self.error(
                path, 0, f"{info.st_size:,} bytes; a benchmark file may hold at most {MAX_FILE_BYTES:,}"
            )
            return None
        if self.total_bytes + info.st_size > MAX_BENCHMARK_BYTES:
            if self.total_bytes <= MAX_BENCHMARK_BYTES:  # said once, at the file that crossed it
                self.error(
                    path, 0, f"with this file the benchmark's files hold {self.total_bytes + info.st_size:,} bytes; "
                    f"a benchmark may hold at most {MAX_BENCHMARK_BYTES:,} in all (the rest was not read)",
                )  # fmt: skip
            self.total_bytes += info.st_size
            return None
        try:
            with open(real, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            self.error(path, 0, f"can't read: {exc.strerror}")
            return None
        if len(data) > MAX_FILE_BYTES:
            self.error(path, 0, f"more than {MAX_FILE_BYTES:,} bytes")
            return None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            self.error(path, line, "not valid UTF-8")
            return None
        self.hash_parts.append((rel, data))
        self.total_bytes += len(data)
        return text

    def _inside(self, rel: str, referrer: Path, line: int, what: str) -> Path | None:
        if "\x00" in rel:
            self.error(referrer, line, f"{what} path {rel!r} holds a NUL character")
            return None
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


def _looks_like_facts(path: Path) -> bool:
    """A facts file has `## N.` sections or `N.M` lines, and no questions or directives."""
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, UnicodeDecodeError):
        return True  # let the reader report it
    if any(ln.startswith(("❓", "```js", "✎")) for ln in lines):
        return False
    return any(_FACT_SECTION.match(ln) or _FACT_LINE.match(ln) for ln in lines)


def _json5_error(message: str) -> tuple[int, str]:
    m = re.match(r"<string>:(\d+)\s*(.*)", message)
    return (int(m.group(1)), m.group(2)) if m else (0, message)


# the keys of benchmark.json marathonbench reads (docs/benchmarks.md)
BENCHMARK_KEYS = ("name", "language", "chapters", "facts", "canaries", "scale", "answer_markers", "deletion_scope",
                  "compaction")  # fmt: skip


def _key_line(raw: str, key: str) -> int:
    """Line of `key` in the JSON5 source, so errors about a value point at it (1 if absent)."""
    m = re.search(r'["\']?\b' + re.escape(key) + r'\b["\']?\s*:', raw)
    return raw[: m.start()].count("\n") + 1 if m else 1
