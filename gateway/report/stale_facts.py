"""Misapplied old facts: answers that state what an update replaced.

A heuristic over the run log alone (no benchmark, no agent): an update (a `fact_edited`
event) replaces the numbers, codes and names its old text had and its new text lacks; an
answer that states one of them — when neither the expected answer nor the question itself
holds it — applied the old fact. A *name* is a capitalised word the persona used in the middle
of a sentence somewhere in the run (so "Miso" counts wherever it stands, "My" never does);
Russian names are compared by their first four letters, which absorbs their case endings.

What a caller may rely on: a question is listed at most once, in the order it was graded; a
deletion ("[deleted]") replaces nothing; an answer that states an old value only to say it
changed is still listed (the heuristic can't tell the two apart).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gateway.log.events import FactEdited, Said
from gateway.report.recordings import RecordedRun
from persona.benchmark.model import DELETED_MARKERS
from persona.outcome import is_full
from persona.terms import extract_identifiers, extract_quantities

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_SENTENCE = re.compile(r"(?<=[.!?:;])\s+|\n")


def _values(text: str) -> set[str]:
    return {str(q.value) for q in extract_quantities(text)} | extract_identifiers(text)


def _name_key(word: str) -> str:
    key = word.lower().replace("ё", "е").removesuffix("'s").removesuffix("’s")
    return key[:4] if len(key) >= 5 and not key.isascii() else key


def _capitalised(text: str) -> Iterator[tuple[str, bool]]:
    """(name key, stands mid-sentence) for each capitalised word of three letters or more."""
    for sentence in _SENTENCE.split(text):
        for n, word in enumerate(_WORD.findall(sentence)):
            if word[0].isupper() and len(word) >= 3:
                yield _name_key(word), n > 0


class _Vocabulary:
    def __init__(self, texts: list[str]) -> None:
        self.names = {key for text in texts for key, mid in _capitalised(text) if mid}

    def marks(self, text: str) -> set[str]:
        """The values and names `text` states."""
        return _values(text) | {key for key, _ in _capitalised(text) if key in self.names}


def misapplied_old_facts(run: RecordedRun) -> list[str]:
    """Ids of the graded questions whose answer states a value or name an update replaced."""
    edits = [
        e
        for e in run.log.events
        if isinstance(e, FactEdited) and e.old and e.new.strip() not in DELETED_MARKERS
    ]
    if not edits:
        return []
    said = [e.text for e in run.log.events if isinstance(e, Said)]
    vocabulary = _Vocabulary(said + [t for e in edits for t in (e.old or "", e.new)])
    replaced: set[str] = set()
    for edit in edits:
        replaced |= vocabulary.marks(edit.old or "") - vocabulary.marks(edit.new)
    questions = {q.id: q for q in run.summary.planned}
    found = []
    for qid, evaluation in run.summary.evaluations.items():
        if evaluation.certain and is_full(evaluation.score):
            continue  # graded right: an old value named beside it is history, not misapplied (issue 62)
        question = questions.get(qid)
        allowed = vocabulary.marks(f"{question.text}\n{question.expected}") if question else set()
        if (vocabulary.marks(evaluation.answer) & replaced) - allowed:
            found.append(qid)
    return found
