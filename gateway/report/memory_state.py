"""What an agent's memory held, read from its state folder: the files its profile names as
memory (`memory_files`, globs under the state folder), each read whole when it is text.

Why: a memory call says what the agent *asked* to store; only the state says what its memory
kept. The memory autopsy reads it at the end of a run (and the deletion-scope check, with the
benchmark's globs). What a caller may rely on: files over `MAX_FILE_BYTES`, binary files and
links are listed as not read (gateway/report/scoped_files.py), never skipped in silence; an agent whose memory is not in files
(no `memory_files`, no state folder) gives no state at all, with the reason.
"""

from __future__ import annotations

import contextlib
import functools
import re
import tarfile
import tempfile
import zlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.state_folder import shown_name
from gateway.report.deletion_scope import state_folder
from gateway.report.memory_stores import StoreUnreadable, read_store, store_of
from gateway.report.scoped_files import ScopedFiles, read_scoped
from persona.grading.exact import value_in
from persona.numerals import digits_for_words
from persona.terms import split_items

# where each adapter keeps its memory inside the state folder, when its settings don't say
DEFAULT_MEMORY_FILES = {"reference": ["memory/**/*"]}


def memory_globs(agent: dict[str, Any]) -> list[str]:
    """The agent's memory files, as its settings (the run header's) name them."""
    named = agent.get("memory_files")
    if isinstance(named, list):
        return [str(g) for g in named]
    return list(DEFAULT_MEMORY_FILES.get(str(agent.get("adapter", "")), []))


@dataclass
class MemoryState:
    """The agent's memory files at one moment; `unseen` says why there are none to read."""

    files: ScopedFiles | None
    unseen: str = ""

    @classmethod
    def at_end(cls, agent: dict[str, Any], run_dir: Path, within: Path | None = None) -> MemoryState:
        """`within`: read only under this folder (the viewer: its recordings folder)."""
        globs, store = memory_globs(agent), store_of(agent)
        if not globs and store is None:
            return cls(None, "the agent's memory is not in files we know of (no `memory_files` in its settings)")
        folder = state_folder(agent, run_dir)
        if folder is None or not folder.is_dir():
            return cls(None, f"the agent's state folder {folder} is not there")
        if not _inside(folder, within) or (store is not None and not _inside(folder / store[1], folder)):
            return cls(None, "the agent's state folder is outside the recordings folder (not read here)")
        found = read_scoped(folder, globs)
        if store is not None:  # a database (Letta's): its memory as texts
            try:
                found.texts.update(read_store(store[0], folder / store[1]))
            except StoreUnreadable as exc:
                return cls(None, f"the agent's memory store can't be read: {exc}")
        return cls(found)

    @classmethod
    def in_checkpoint(cls, agent: dict[str, Any], archive: Path, within: Path | None = None) -> MemoryState:
        """The memory files as a checkpoint archived them (`checkpoints/NAME.tar.gz`: the state
        folder's files, by their paths under it)."""
        globs, store = memory_globs(agent), store_of(agent)
        if not globs and store is None:
            return cls(None, "the agent's memory is not in files we know of (no `memory_files` in its settings)")
        if not _inside(archive, within):
            return cls(None, "the checkpoint archive is outside the recordings folder (not read here)")
        patterns = [re.compile(_glob_regex(g)) for g in globs]
        found = ScopedFiles(archive)
        try:
            with tarfile.open(archive, "r:gz") as tar:
                if store is not None:  # the archived database, read from a copy
                    found.texts.update(_archived_store(tar, *store))
                for member in tar:
                    if not member.isfile() or not any(p.fullmatch(member.name) for p in patterns):
                        continue
                    data = tar.extractfile(member)
                    if data is not None:  # any name the OS allows, as text
                        found.take(shown_name(member.name), member.size, data)
        except (OSError, EOFError, zlib.error, tarfile.TarError, StoreUnreadable) as exc:
            return cls(None, f"the checkpoint archive {archive.name} can't be read ({exc})")
        return cls(found)

    def holds(self, value: str, topic: Topic = frozenset()) -> bool | None:
        """Does memory hold every item of `value` (in some file)? None: unsure, or no state —
        or not found in what was read while some file could not be read (it may be there)."""
        if self.files is None:
            return None
        found = all_items(value, list(self.files.texts.values()), topic)
        return None if found is False and self.files.not_read else found

    def where(self, value: str, topic: Topic = frozenset()) -> list[str]:
        """The files holding `value` for sure."""
        if self.files is None:
            return []
        return [path for path, text in self.files.texts.items() if any_text(value, [text], topic)]


def _inside(path: Path, folder: Path | None) -> bool:
    return folder is None or path.resolve().is_relative_to(folder.resolve())


def _archived_store(tar: tarfile.TarFile, kind: str, path: str) -> dict[str, str]:
    try:
        member = tar.getmember(path)
    except KeyError:
        raise StoreUnreadable(f"{path} is not in the checkpoint") from None
    data = tar.extractfile(member)
    if data is None:
        raise StoreUnreadable(f"{path} is not a file in the checkpoint")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "store"
        copy.write_bytes(data.read())
        return read_store(kind, copy)


def _glob_regex(glob: str) -> str:
    """A state-folder glob as a regular expression over archive member names ("memory/**/*")."""
    out = ""
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif glob[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return out


def topic_of(question: str, told: str, leaving: str = "") -> frozenset[str]:
    """What a fact is about, as stems (a word's first five letters, of three letters and up; not
    `leaving`'s words): "Who is my partner?" and "My partner is called Marcus" → {partn, calle}.
    The telling line's short words count too: "Where did we meet?" is tied to the note "We met
    in Lisbon" by the line that told it (issue 60: that note was called never stored)."""
    left = set(stems(leaving, 3))
    return frozenset(w for w in [*stems(question, 3), *stems(told, 3)] if w not in left and w not in _COMMON)


def stems(text: str, shortest: int = 3) -> list[str]:
    return [w[:5] for w in re.findall(rf"[^\W\d_]{{{shortest},}}", text.casefold().replace("ё", "е"))]


# words of the persona's frame and of questions, not of a fact's subject
_COMMON = frozenset(
    stem[:5]
    for stem in """what which when where does have that this with from your please remember
    some things update about tell again something correction actually earlier told know
    the and for you how who why are was were did has had can our its his her him she they
    now not any all much many one two
    что какой какая какие когда где сколько меня мной это есть было была были пожалуйста
    запомни помни теперь вообще ещё как кто мне мой моя мои моё наш наша наши его её они она
    был уже там тут для при все всё""".split()
)


@dataclass(frozen=True)
class Tie:
    """What ties a line to one fact when its value is shared (issue 60: "Marcus" is the partner
    and the sister's husband; "Anna" a sister and a colleague): `about` — stems of the question
    and its fact that the other facts holding the value don't have; `others` — stems only those
    other facts have. A line with an `about` stem is this fact's; one with only `others` stems
    is another fact's; one with neither can't be told apart (unsure — never a decided stage)."""

    about: frozenset[str]
    others: frozenset[str]

    def reads(self, line: str) -> bool | None:
        words = set(stems(line))
        if self.about & words:
            return True
        return False if self.others & words else None


Topic = frozenset[str] | Tie  # a line must carry one of these stems; or a Tie, for a shared value


def _about(topic: Topic, line: str) -> bool | None:
    """Is `line` about the fact: True, False (skip it), None (can't tell: a match is unsure)."""
    if isinstance(topic, Tie):
        return topic.reads(line)
    return not topic or bool(topic.intersection(stems(line)))


def all_items(value: str, texts: list[str], topic: Topic = frozenset()) -> bool | None:
    """Is each item of `value` (a list answer's items apart) in one of `texts`? Three-valued,
    as the grader: False as soon as an item is surely in none, None when some match is unsure."""
    verdicts = [any_text(item, texts, topic) for item in split_items(value)]
    if False in verdicts:
        return False
    return None if None in verdicts else True


def any_text(value: str, texts: list[str], topic: Topic = frozenset()) -> bool | None:
    """Is `value` in one of `texts`: True if surely in one, False if surely in none, else None.
    Each text is read line by line (a JSON string's escaped newlines too): a memory file or a
    search result is a list of notes, and the grader reads one note as it reads one answer —
    a whole file of numbers beside the value would leave it unsure which one is meant. With a
    `topic`, only a line about it counts: "Marcus" in a note about his birthday is not the
    note that he is the partner; with a `Tie`, a line tied to neither fact leaves it unsure."""
    unsure = False
    for text in texts:
        for line in _LINES.split(text):
            if not line.strip() or (about := _about(topic, line)) is False:
                continue
            found = held(line, value)
            if found and about:
                return True
            unsure = unsure or found is None or (found and about is None)
    return None if unsure else False


def held(text: str, value: str) -> bool | None:
    """Is `value` in `text` — present, not given as an answer? The grader's match, without the
    doubts that are about reading an answer (other values beside it, a hedge, alternatives):
    where it located the value, the value is there. Unsure only where it could not locate it
    and saw something it could not read (another notation, a date that reads two ways)."""
    if not _might_hold(text, value):
        return False  # read before the grader: most notes of a memory hold nothing like the value
    match = value_in(text, value)
    if match.likely:
        return True
    if match.found is None and _DIGIT.search(value) and not _digits_in(text):
        return False  # none of its figures, in digits or words: not that value in another notation
    return False if match.found is False else None


def _digits_in(text: str) -> bool:
    return bool(_figures(text))


_FIGURES_READ: ContextVar[dict[str, str] | None] = ContextVar("_FIGURES_READ", default=None)


@contextlib.contextmanager
def figures_remembered() -> Iterator[None]:
    """While in it, each text's figures are worked out once, however many values are looked for
    in it (the autopsy looks for every question's value in every line the persona said: 15
    questions × 500,000 lines). The memory ends with the block — a few bytes a text."""
    token = _FIGURES_READ.set({})
    try:
        yield
    finally:
        _FIGURES_READ.reset(token)


def _figures(text: str) -> str:
    """The text's figures, in digits or in words ("eleven" → 11), space-separated. Remembered:
    a memory note is read once per value searched for, and spelling numbers out is the slow part."""
    memo = _FIGURES_READ.get()
    if memo is None:
        return _figures_cached(text)
    found = memo.get(text)
    if found is None:
        found = memo[text] = _figures_of(text)
    return found


@functools.lru_cache(maxsize=1 << 14)
def _figures_cached(text: str) -> str:
    return _figures_of(text)


def _figures_of(text: str) -> str:
    return " ".join(re.findall(r"\d+", text + " " + digits_for_words(text)))


@functools.lru_cache(maxsize=1 << 12)
def _word_starts(value: str) -> re.Pattern[str] | None:
    """A word of the text beginning as one of the value's words does (first 3–5 letters): one
    regular expression a value, run over each text in C, not a loop over the text's words."""
    starts = [w[: 5 if len(w) >= 6 else max(3, len(w) - 1)] for w in re.findall(r"[^\W\d_]{3,}", value.casefold())]
    if not starts:
        return None
    return re.compile(r"(?<![^\W\d_])(?:" + "|".join(map(re.escape, sorted(set(starts)))) + ")")


def _might_hold(text: str, value: str) -> bool:
    """A cheap necessary condition: a value with figures needs its figures (in digits or words:
    "1,210" needs a 210 somewhere, "£95" a 95) in the text; a value of words, one of its words'
    first four letters (any ending, any case)."""
    if _DIGIT.search(value):
        runs = re.findall(r"\d+", value)
        needed = [r for r in runs if len(r) > 1] or runs
        figures = _figures(text)
        return any(run in figures for run in needed)
    starts = _word_starts(value)
    return starts is None or starts.search(text.casefold()) is not None


_DIGIT = re.compile(r"\d")


_LINES = re.compile(r"\n|\\n")
