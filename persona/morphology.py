"""Word forms by the field's libraries: Russian by pymorphy3 (its OpenCorpora dictionaries ship
in the `pymorphy3-dicts-ru` wheel), English by the Snowball stemmer (`snowballstemmer`).

Why: the grader compared words by a shared beginning and hand-written tables, which can't tell
«Нижнем» is a form of «Нижний» and «ведёрком» a diminutive of «ведро», nor which of «Наташа» and
«Наташе» is the subject. What a caller may rely on: every function is pure, cached, never
raises on odd text, and loads the dictionaries once, on first use (~0.1 s).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

import pymorphy3
import snowballstemmer

_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


def cyrillic(text: str) -> bool:
    """Whether `text` has a Cyrillic letter: Russian, for the rules that read it apart."""
    return _CYRILLIC.search(text) is not None


@dataclass(frozen=True)
class Parse:
    """One reading of a Russian word: its dictionary form and grammemes ("NOUN", "Name",
    "nomn", "2per", …)."""

    lemma: str
    grammemes: frozenset[str]


@cache
def _analyzer() -> pymorphy3.MorphAnalyzer:
    return pymorphy3.MorphAnalyzer(lang="ru")


@cache
def _english() -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=1 << 16)
def parses(word: str) -> tuple[Parse, ...]:
    """The readings of a Russian word, likeliest first; () for a word in another script."""
    if not cyrillic(word):
        return ()
    return tuple(
        Parse(p.normal_form.replace("ё", "е"), frozenset(p.tag.grammemes))
        for p in _analyzer().parse(word.lower())
    )


@lru_cache(maxsize=1 << 16)
def lemmas(word: str) -> frozenset[str]:
    """A word's dictionary forms: each reading's for Russian («нижнем» → нижний), the Snowball
    stem for English ("dentists" → dentist); lower case, `ё` as `е`."""
    word = word.lower().replace("ё", "е")
    if cyrillic(word):
        return frozenset(p.lemma for p in parses(word)) or frozenset({word})
    return frozenset({_english().stemWord(word)})


def same_lemma(a: str, b: str) -> bool:
    """Whether two words are forms of one word by the libraries (never by a shared beginning)."""
    return bool(lemmas(a) & lemmas(b))
