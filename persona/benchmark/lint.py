"""What `marathon check` warns about in a benchmark that loads: a question whose answer an
earlier one gives away, a "now" question over an update dated "from March" in a story that
never says what day it is (AUTHORING.md's ambiguous pattern), and an exam question whose answer
the phase right before said with no break between. Warnings, never errors: the author decides.
"""

from __future__ import annotations

import re
from pathlib import Path

from persona.benchmark.model import FactsFile, FactUpdate, Phase, Question, Utterance
from persona.terms import UNIT_WORDS, extract_quantities, key_terms, split_items


def giveaways(questions: list[Question], root: Path) -> list[str]:
    """An earlier question whose text holds a later question's answer gives it away: one
    warning per pair, both lines. Only telling words count — names, and words of five letters
    or more that are no unit — compared by stem (Графа = Граф), not short or generic ones.

    Near-linear: each question's words go once into an index by their first four letters (two
    words of one stem share them), so a later answer's words meet only the earlier questions
    that could hold them — comparing every pair took 257 s for 4,000 questions."""
    warnings = []
    index: dict[str, list[tuple[int, str]]] = {}  # first four letters → (earlier question, its word)
    words_of: list[set[str]] = []  # each earlier question's words
    for j, later in enumerate(questions):
        given: dict[int, list[str]] = {}
        if not (later.abstain or later.deleted):
            for terms in (t for item in split_items(later.expected) if (t := _telling_words(item))):
                rarest, *others = sorted(terms, key=lambda t: len(index.get(t[:4], ())))
                holders = {i for i, word in index.get(rarest[:4], ()) if _same_stem(rarest, word)}
                for term in others:  # only the questions holding the rarest word are read further
                    holders = {i for i in holders if any(_same_stem(term, w) for w in words_of[i])}
                for i in holders:
                    given.setdefault(i, []).extend(terms)
        for i in sorted(given):
            earlier = questions[i]
            warnings.append(
                f"{root / earlier.chapter}:{earlier.line}: question {earlier.id} gives away the answer of "
                f"{later.id} ({root / later.chapter}:{later.line}): {', '.join(dict.fromkeys(given[i]))}"
            )
        words_of.append(set(key_terms(later.text)))
        for word in words_of[-1]:
            index.setdefault(word[:4], []).append((j, word))
    return warnings


_MONTH_NAMES = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|december"
    r"|января|февраля|марта|апреля|мая|июня|июля|августа|сентября|октября|ноября|декабря)"
)
# an update that says when it takes effect: "from March", "as of 1 October", «с марта»
_TAKES_EFFECT = re.compile(
    r"\b(?:from|starting(?: in| on)?|as of|effective|beginning(?: in)?|с|со)\s+(?:the\s+)?"
    rf"(?:\d{{1,2}}(?:st|nd|rd|th|-?го)?\s+(?:of\s+)?)?{_MONTH_NAMES}\b",
    re.IGNORECASE,
)
# "Today is Monday 2 September", «Сегодня понедельник, 2 сентября»: a dated story
_TODAY = re.compile(
    r"\b(?:today|сегодня)\b[^.!?\n]{0,30}?"
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_NAMES}|{_MONTH_NAMES}\s+\d{{1,2}})",
    re.IGNORECASE,
)
_NOW = re.compile(
    r"\b(?:now|currently|at the moment|these days|сейчас|теперь|в данный момент|на данный момент)\b", re.IGNORECASE
)


def now_over_dated_updates(phases: list[Phase], root: Path) -> list[str]:
    """ "What is it now?" after "it rose to 1,915 euros from March": unless the story says what
    today's date is, "now" may be before March and the old value as right as the new — the
    pattern AUTHORING.md calls ambiguous. One warning per question, with the update's line."""
    warnings: list[str] = []
    dated: list[tuple[Phase, FactUpdate, str]] = []
    for phase in phases:
        if _TODAY.search(phase.description):
            return warnings  # the story says what day it is: "now" is that day
        for item in phase.items:
            if isinstance(item, Utterance) and _TODAY.search(item.text):
                return warnings
            if isinstance(item, FactUpdate) and (effect := _TAKES_EFFECT.search(item.text)):
                dated.append((phase, item, effect.group(0)))
            elif isinstance(item, Question) and item.expected and _NOW.search(item.text):
                for where, update, when in dated:
                    if _holds(item.expected, update.text):
                        warnings.append(
                            f"{root / item.chapter}:{item.line}: question {item.id} asks about now, but the update "
                            f"at {root / where.chapter}:{update.line} takes effect {when!r} and the story "
                            "gives no date: the old value may be as right (say when it is, or drop the date)"
                        )
                        break
    return warnings


def answers_in_context(phases: list[Phase], facts: dict[str, FactsFile], root: Path) -> list[str]:
    """An exam question whose answer the phase right before said, with no new session or
    compaction between: the answer is still in the agent's context, so the question tests the
    context, not the memory. One warning per question, with the line that said it (a told
    fact: its facts file). A question after its answer in its own phase is a deliberate
    in-context check (demo-en's q11), not warned about."""
    warnings: list[str] = []
    said: list[tuple[str, int, str]] = []  # (file, line, text) the phase before said, unless a break followed
    for phase in phases:
        if {"new_session", "compact"} & set(phase.actions):  # at its start: the context is gone
            said = []
        mine: list[tuple[str, int, str]] = []  # what this phase says: the next one's "right before"
        for name in phase.require_all_facts:
            if name in facts:
                file = facts[name]
                mine += [(file.path, fact.line, fact.text) for fact in file.facts.values()]
        for item in phase.items:
            if isinstance(item, Utterance | FactUpdate):
                mine.append((phase.chapter, item.line, item.text))
            elif isinstance(item, Question) and item.expected and not (item.abstain or item.deleted):
                where = next((f"{root / f}:{n}" for f, n, text in said if _holds(item.expected, text)), None)
                if where is not None:
                    warnings.append(
                        f"{root / item.chapter}:{item.line}: question {item.id} is asked right after {where} said "
                        "its answer, with no new session or compaction between: it tests the agent's context, "
                        "not its memory (add `await bench.newSession();` before the exam, or more conversation)"
                    )
        said = mine
    return warnings


# a code mixing letters and digits (P7723914, LH1173, K-20417): said as it is, or not at all
_CODE = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[\w-]{3,}\b")


def _compact(text: str) -> str:
    return re.sub(r"[\s-]+", "", text).casefold()


def _holds(expected: str, text: str) -> bool:
    """Whether `text` states `expected`: its codes as written, else its numbers and its words
    by stem — never an answer with nothing to look for (it would be in every text)."""
    if codes := _CODE.findall(expected):
        return all(_compact(code) in _compact(text) for code in codes)
    wanted = extract_quantities(expected)
    terms = [t for t in key_terms(expected) if t not in UNIT_WORDS]
    if not (wanted or terms):
        return False
    said = extract_quantities(text)
    if not all(any(w.matches(q) for q in said) for w in wanted):
        return False
    words = key_terms(text)
    return all(any(_same_stem(t, w) for w in words) for t in terms)


def _telling_words(text: str) -> list[str]:
    words = re.findall(r"[^\W\d_]+", text)
    return [
        w.lower().replace("ё", "е")
        for w in words
        if w.lower() in key_terms(w) and w.lower() not in UNIT_WORDS and (w[0].isupper() or len(w) >= 5)
    ]


def _same_stem(a: str, b: str) -> bool:
    prefix = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        prefix += 1
    return a == b or prefix >= max(4, min(len(a), len(b)) - 2)
