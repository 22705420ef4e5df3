"""Words of one closed set that exclude each other — left or right, older or younger, sister or
daughter, bedroom or living room, a hedgehog or a hamster — said of what the question is about other than the facts say
it. "Ife, your older sister" when the facts call Ife the younger sister, «сосед справа» for the
neighbour on the left, "the living room" for the bedroom: the expected value is there, but
beside a claim that contradicts a fact, and the exact grader can't tell which the answer means.

Each language's sets are data (`grading.contrasts` in persona/languages/*.json5). A caller may
rely on this: only a word of a set is read, only against a fact that names another word of the
same set and none of the answer's, so an answer that says nothing of the kind is never doubted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from persona.benchmark.model import Question
from persona.grading.beside import MARKUP, SENTENCES
from persona.languages import known_languages, language_table
from persona.terms import terms_match

_WORD = re.compile(r"[^\W\d_]+")
_NEAR = 4  # words either side of a name that speak of it ("Ife, your older sister")


@dataclass(frozen=True)
class _Set:
    """One closed set: its words, each a compiled alternative."""

    patterns: tuple[re.Pattern[str], ...]

    def said(self, text: str) -> dict[int, str]:
        """Which of the set's words `text` says, and how it says the first of each."""
        return {i: m.group(0).lower() for i, p in enumerate(self.patterns) if (m := p.search(text))}


@cache
def _sets() -> tuple[_Set, ...]:
    out: list[_Set] = []
    for code in known_languages():
        for group in language_table(code).get("grading", {}).get("contrasts", []):
            out.append(_Set(tuple(re.compile(rf"(?<!\w)(?:{alt})(?!\w)", re.IGNORECASE) for alt in group)))
    return tuple(out)


def contradicted(question: Question, answer: str) -> list[str]:
    """For each word of a closed set the answer says where the facts say another, the two
    ("'older', the facts 'younger'"):
    of the whole answer against the facts holding the expected value and the question (the
    bedroom, the left wrist), and of the words beside each name against the words the facts
    put beside it (Ife's "younger sister"). Empty when the facts are unknown or agree."""
    if not question.known:
        return []
    plain = MARKUP.sub(" ", answer)
    pairs = [(plain, " ".join((*question.evidence, question.text)))]
    pairs += [(said, told) for said, told in _beside_names(plain, question.known) if told]
    found: list[str] = []
    for said, told in pairs:
        for s in _sets():
            given, facts = s.said(said), s.said(told)
            if given and facts and not given.keys() & facts.keys():
                clash = f"{given[min(given)]!r}, the facts {facts[min(facts)]!r}"
                if clash not in found:
                    found.append(clash)
    return found


def _beside_names(answer: str, facts: tuple[str, ...]) -> list[tuple[str, str]]:
    """For each name of the answer that a fact names too (capitalised, not as its first word):
    the answer's words beside it, and all the facts' words beside it."""
    out: list[tuple[str, str]] = []
    for sentence in SENTENCES.split(answer):
        words = _WORD.findall(sentence)
        for i, word in enumerate(words):
            if not word[0].isupper() or len(word) < 3:
                continue
            told = [
                " ".join(fw[max(0, j - _NEAR) : j + _NEAR + 1])
                for fact in facts
                for fw in [_WORD.findall(fact)]
                for j, f in enumerate(fw)
                if j > 0 and f[0].isupper() and terms_match(_folded(f), _folded(word))
            ]
            if told:
                out.append((" ".join(words[max(0, i - _NEAR) : i + _NEAR + 1]), " ".join(told)))
    return out


def _folded(word: str) -> str:
    return word.lower().replace("ё", "е")
