"""Part of a person's name for the whole: "Priya." or "Ms Raman." for "Priya Raman", «Лукина.»
or «Пётр.» for «Тамара Сергеевна Лукина» and «Пётр Ильич».

One rule, the same in docs/grading.md: asked *who* someone is or
their name, an answer that names them by their given name, their surname or their name and
patronymic — every capitalised word beside it being a word of that name or a title — is found
but *not certain*: the exact grader abstains on part of a name ("only 1 of the 2 words"), since
whether the part names the person unmistakably is a reading (a judge's). It was a certain 0
before, which held-out answers showed wrong. Initials alone, a patronymic alone, or another
name beside the part ("Priya Sharma", «Тамара Петровна») are not the name: a certain 0.

A Russian place named by its adjective alone is how its people name it: «в Нижнем» for «Нижний
Новгород» is written out before the answer is read, so it is found surely and every later
reading sees the place (`place_written_out`; every labelled set graded it right),
while «в Нижнем Тагиле» and «в Новгороде» are other places (a certain 0). Another name word in
the run of the name's own words («Тамара Степановна Лукина») is another person, a certain 0
(`another_name_beside`), though two of its three words are there.

What a caller may rely on: `names_by_part` is True and `another_name_beside` says why only for a
question asking for a person and an expected item of two or more name words,
`place_written_out` changes an answer only for an expected capitalised adjective and noun (by
pymorphy3).
"""

from __future__ import annotations

import re
from functools import lru_cache

from persona.grading.said_otherwise import TITLES
from persona.grading.variants import in_expected_spelling
from persona.languages import grading_words
from persona.morphology import parses
from persona.terms import terms_match

_ASKS_PERSON = re.compile(
    rf"(?<!\w)(?:{'|'.join(map(re.escape, grading_words('asks_person')))})(?!\w)", re.IGNORECASE
)
_NAME_WORD = re.compile(r"(?<![\w-])[A-ZА-ЯЁ][a-zа-яё]+(?:-[A-ZА-ЯЁ]?[a-zа-яё]+)*\.?")
# a Russian patronymic: not a name to be called by on its own
_PATRONYMIC = re.compile(r"(?:ович|евич|ьич|ична|инична|овна|евна)$")


def _fold(word: str) -> str:
    return word.lower().replace("ё", "е").rstrip(".")


@lru_cache(maxsize=4096)
def _name_words(item: str) -> tuple[str, ...]:
    """The words of a person's name in `item`, titles left out; () when it is no such name."""
    words = item.split()
    names = tuple(_fold(w) for w in words if _fold(w) not in TITLES)
    if len(names) < 2 or not all(_NAME_WORD.fullmatch(w) for w in words if _fold(w) not in TITLES):
        return ()
    return names


def names_by_part(question: str, item: str, answer: str, items: list[str] | None = None) -> bool:
    """Whether `answer` names the person of `item` by part of the name (the module's rule); the
    words of the other expected `items` (a list answer's) are no other name beside it."""
    if not (asked := _asked_name(question, item, answer, items)):
        return False
    names, listed, answer = asked
    said = [_fold(m.group(0)) for m in _NAME_WORD.finditer(answer)]
    said = [w for w in said if w not in TITLES]
    ours = [w for w in said if any(_same(w, n) for n in names)]
    if not ours or len(ours) == len(names):
        return False  # none of the name, or the whole of it (the usual rule has graded that)
    if all(_PATRONYMIC.search(w) for w in ours):
        return False
    # another name beside the part: in its run of capitalised words ("Priya Sharma"), not a
    # place or firm further on ("Priya — your manager at Northway")
    beside = {w for run in _runs(answer) if any(w in ours for w in run) for w in run}
    others = [
        w for w in said if w in beside and w not in ours and w not in listed and not _opens_sentence(w, answer)
    ]
    return not others


def _asked_name(
    question: str, item: str, answer: str, items: list[str] | None
) -> tuple[tuple[str, ...], set[str], str] | None:
    """For a question asking for a person whose expected item is a name of two words or more:
    the name's words, the other expected items' words (no other name beside it) and the answer
    in the expected spelling (the other script, a short form of the name); else None."""
    names = _name_words(item)
    if not names or not _ASKS_PERSON.search(question):
        return None
    listed = {_fold(w) for other in items or () for w in other.split()}
    return names, listed, in_expected_spelling(item, answer)


def _runs(answer: str) -> list[list[str]]:
    """The answer's runs of capitalised words with only spaces between ("Тамара Сергеевна
    Лукина", "Priya Sharma"), folded, titles left out."""
    runs: list[list[str]] = []
    end = -1
    for m in _NAME_WORD.finditer(answer):
        word = _fold(m.group(0))
        if runs and answer[end : m.start()].strip() == "" and not answer[:end].endswith("."):
            runs[-1].append(word)  # not across a full stop: «… Лукина. По образованию …»
        else:
            runs.append([word])
        end = m.end()
    return [[w for w in run if w not in TITLES] for run in runs]


def _same(word: str, name: str) -> bool:
    return terms_match(word, name) and abs(len(word) - len(name)) <= 2


def _opens_sentence(word: str, answer: str) -> bool:
    """A capitalised word that only opens a sentence ("Your manager is Priya.") is no name."""
    for m in _NAME_WORD.finditer(answer):
        if _fold(m.group(0)) == word:
            before = answer[: m.start()].rstrip(" \"'«*")
            if before and before[-1] not in ".!?:\n—-":
                return False
    return True


def place_written_out(items: list[str], answer: str) -> str:
    """`answer` with each place of `items` named by its adjective alone written out («в Нижнем»
    → «в Нижнем Новгород»), so that every later reading — a clause marked as past, a value
    ruled out — sees the place, not a word of it."""
    for item in items:
        for m in reversed(_adjectives_alone(item, answer)):
            answer = answer[: m.end()] + " " + item.split()[1] + answer[m.end() :]
    return answer


def _adjectives_alone(item: str, answer: str) -> list[re.Match[str]]:
    """Where `answer` names the place `item` («Нижний Новгород») by its adjective alone, in any
    case («в Нижнем»), with no capitalised word after it («в Нижнем Тагиле»)."""
    words = item.split()
    if len(words) != 2 or not all(w[:1].isupper() for w in words):
        return []
    adjective, noun = (parses(w) for w in words)
    if not adjective or "ADJF" not in adjective[0].grammemes or not noun or "NOUN" not in noun[0].grammemes:
        return []
    lemma = adjective[0].lemma
    # not with a capitalised word right after it: that names another place («в Нижнем Тагиле»)
    return [
        m
        for m in re.finditer(r"(?<![\w-])[A-ZА-ЯЁ][a-zа-яё]+", answer)
        if any(p.lemma == lemma and "ADJF" in p.grammemes for p in parses(m.group(0)))
        and not re.match(r"[ \u00a0]+[A-ZА-ЯЁ]", answer[m.end() :])
    ]


def another_name_beside(question: str, item: str, answer: str, items: list[str] | None = None) -> str | None:
    """ «Тамара Степановна Лукина», «Тамара Сергеевна Лукьянова» for «Тамара Сергеевна Лукина»:
    part of the name, and in the same run of capitalised words a Russian name word (a given
    name, surname or patronymic, by pymorphy3) that is none of its words — another person, a
    certain 0 by the module's rule. Two words of three are found by the usual rule, so without
    this the wrong third one was only a doubt. A name elsewhere in the answer is a bystander."""
    if not (asked := _asked_name(question, item, answer, items)):
        return None
    names, listed, answer = asked
    for words in _runs(answer):
        ours = {n for w in words for n in names if _same(w, n)}
        if not ours or len(ours) == len(names):
            continue  # none of the name, or all of it (a word beside the whole name is a doubt elsewhere)
        for w in words:
            if w in listed or any(_same(w, n) for n in names):
                continue
            first = parses(w)[:1]  # the likeliest reading: «По» is a preposition, not a surname
            if _PATRONYMIC.search(w) or any({"Name", "Surn", "Patr"} & p.grammemes for p in first):
                return f"names {w!r} beside part of {item!r}: another person"
    return None
