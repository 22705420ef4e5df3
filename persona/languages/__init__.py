"""What the persona side says and recognises, per language: one data file per language
(`en.json5`, `ru.json5`, …, named by the benchmark's `language` code), and telling a
benchmark's language from its text when it does not declare one.

A leaf: imports nothing of marathonbench. What a caller may rely on: `language_table` returns
a language's whole table or raises `UnknownLanguage` naming the files there are — never
another language's table in its place; `detect_language` always answers, and says how sure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import json5

FOLDER = Path(__file__).parent
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN = re.compile(r"[a-z]", re.IGNORECASE)
MIN_LETTERS = 40  # fewer letters than this say nothing about a language


class UnknownLanguage(ValueError):
    """A language with no data file: the persona would have to speak another language."""


@cache
def known_languages() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in FOLDER.glob("*.json5")))


@cache
def language_table(code: str) -> dict[str, Any]:
    """The data of language `code` (`ru`, `ru-RU` → `ru`)."""
    base = code.split("-")[0].lower()
    path = FOLDER / f"{base}.json5"
    if base not in known_languages():
        raise UnknownLanguage(
            f"no persona language file for {code!r} (there are: {', '.join(known_languages())}); "
            f"add persona/languages/{base}.json5 like en.json5"
        )
    data: dict[str, Any] = json5.loads(path.read_text(encoding="utf-8"))
    return data


@cache
def grading_words(kind: str) -> tuple[str, ...]:
    """The words of one kind (`and`, `or`, `arithmetic`, `one`, `titles`, `object_clause`: each file's
    `grading.words`) over every language, in the files' order — an answer may mix languages."""
    found: list[str] = []
    for code in known_languages():
        found += language_table(code).get("grading", {}).get("words", {}).get(kind, [])
    return tuple(found)


def words_pattern(kind: str) -> str:
    """`grading_words(kind)` as one regular-expression alternation (escaped)."""
    return "|".join(re.escape(w) for w in grading_words(kind))


@dataclass(frozen=True)
class Detected:
    language: str  # "" when the text has too few letters to tell
    share: float  # the share of the letters that are of that language's script
    letters: int

    def describe(self) -> str:
        if not self.language:
            return f"too little text to tell ({self.letters} letters)"
        script = "Cyrillic" if self.language == "ru" else "Latin"
        return f"{self.share:.0%} of {self.letters:,} letters are {script}"


def detect_language(text: str) -> Detected:
    """Russian when most letters are Cyrillic, else English: the two scripts we have phrase
    files for. Enough for a benchmark's chapters; a benchmark in another language declares it."""
    cyrillic, latin = len(_CYRILLIC.findall(text)), len(_LATIN.findall(text))
    letters = cyrillic + latin
    if letters < MIN_LETTERS:
        return Detected("", 0.0, letters)
    if cyrillic >= latin:
        return Detected("ru", cyrillic / letters, letters)
    return Detected("en", latin / letters, letters)
