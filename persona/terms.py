"""What the words and numbers in a free text are: the one normalisation every comparison
of persona-side text shares — the exact grader, the distractor pool's screening against the
evidence, the LLM persona's matching of facts it told, the stale-fact finder.

What a caller may rely on: pure functions of their text (no state, never raise on odd
text); numbers are compared as numbers with their unit when both sides name one; words are
compared by `terms_match` (the same stem up to a short inflected ending, English or Russian).
A leaf module: it imports only `persona.numerals`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from persona.languages import words_pattern
from persona.numerals import digits_for_words

# -- numbers ---------------------------------------------------------------------------------

NUMBER_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "twice": 2,
    "thrice": 3,
    "once": 1,
    "ноль": 0,
    "один": 1,
    "одна": 1,
    "одно": 1,
    "два": 2,
    "две": 2,
    "двое": 2,
    "двух": 2,
    "три": 3,
    "трое": 3,
    "трёх": 3,
    "трех": 3,
    "четыре": 4,
    "четверо": 4,
    "пять": 5,
    "шесть": 6,
    "семь": 7,
    "восемь": 8,
    "девять": 9,
    "десять": 10,
    "одиннадцать": 11,
    "двенадцать": 12,
}
# counted only where a claim is checked against what was said (`missing_details`): as number
# words in the grader they cost its Russian coverage 0.1–0.2 points, tuning and held-out alike
_COUNT_ADVERBS = {"дважды": 2, "трижды": 3}
UNIT_WORDS = {
    "km": "km",
    "км": "km",
    "kilometers": "km",
    "kilometres": "km",
    "километров": "km",
    "kg": "kg",
    "кг": "kg",
    "kilograms": "kg",
    "килограммов": "kg",
    "m2": "m2",
    "м2": "m2",
    "m²": "m2",
    "м²": "m2",
    "sqm": "m2",
    "m": "m",
    "м": "m",
    "meters": "m",
    "metres": "m",
    "метров": "m",
    "€": "eur",
    "eur": "eur",
    "euro": "eur",
    "euros": "eur",
    "евро": "eur",
    "$": "usd",
    "usd": "usd",
    "dollars": "usd",
    "долларов": "usd",
    "₽": "rub",
    "rub": "rub",
    "руб": "rub",
    "рублей": "rub",
    "£": "gbp",
    "gbp": "gbp",
    "pounds": "gbp",
    "₾": "gel",
    "gel": "gel",
    "лари": "gel",
    "%": "pct",
    "percent": "pct",
    "процентов": "pct",
    "mi": "mi",
    "miles": "mi",
    "миль": "mi",
    "мили": "mi",
    "min": "min",
    "minutes": "min",
    "мин": "min",
    "минут": "min",
    "h": "h",
    "hours": "h",
    "ч": "h",
    "часов": "h",
    "часа": "h",
    "days": "day",
    "дней": "day",
    "дня": "day",
    "weeks": "week",
    "недель": "week",
    "недели": "week",
    "years": "year",
    "лет": "year",
    "года": "year",
    "год": "year",
}
_SEP = r"[ \u00a0\u202f',]"
_NUMBER = re.compile(
    r"(?<![\w.,])(?P<time>\d{1,2}:\d{2}(?::\d{2})?)"
    r"|(?<![\w])(?P<num>-?(?:\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?(?!\d)|\d{1,3}(?:"
    + _SEP
    + r"\d{3})+(?:[.,]\d+)?(?!\d)"
    r"|\d+(?:[.,]\d+)?))"
)
_UNIT_AFTER = re.compile(r"\s*([€$₽£₾%]|[^\W\d_]{1,12}[²2]?)", re.UNICODE)
_UNIT_BEFORE = re.compile(r"([€$₽£₾])\s*$")


IDENTIFIER = re.compile(r"(?<![\w-])[A-Za-zА-Яа-яЁё0-9]+(?:-[A-Za-zА-Яа-яЁё0-9]+)*(?![\w-])")


def extract_identifiers(text: str) -> set[str]:
    """Codes mixing letters and digits (LH1173, 32K, K-20417, КЗН-7781, 054Г), upper-cased,
    hyphens dropped.

    They must match exactly: a flight or booking code one character off is a wrong answer.
    A number glued to a unit (`10km`) is a quantity, not a code.
    """
    out = set()
    for m in IDENTIFIER.finditer(digits_for_words(text)):
        token = m.group(0)
        if not (re.search(r"\d", token) and re.search(r"[A-Za-zА-Яа-яЁё]", token)):
            continue
        glued = re.fullmatch(r"\d+(?:[.,]\d+)?([A-Za-zА-Яа-яЁё]+)", token)
        if glued and glued.group(1).lower() in UNIT_WORDS:
            continue
        out.add(token.replace("-", "").upper())
    out |= _spaced_codes(text)
    return out


# a code written in groups: "BA 362", "P 772 3914", «КЗН 7781», «054 Г» (upper-case letters and
# digits only, so words around it don't join in)
_CODE_GROUP = re.compile(r"(?<![\w-])(?:[A-ZА-ЯЁ\d]{1,4}|\d{1,7})(?:[ \u00a0](?:[A-ZА-ЯЁ\d]{1,4}|\d{1,7})(?![\w-])){1,5}")


def _spaced_codes(text: str) -> set[str]:
    out = set()
    for m in _CODE_GROUP.finditer(text):
        groups = m.group(0).split()
        for i in range(len(groups)):
            for j in range(i + 2, len(groups) + 1):
                joined = "".join(groups[i:j])
                if re.search(r"\d", joined) and re.search(r"[A-ZА-ЯЁ]", joined):
                    out.add(joined.upper())
    return out


@dataclass(frozen=True)
class Quantity:
    value: float | str
    unit: str | None

    def matches(self, other: Quantity) -> bool:
        if isinstance(self.value, str) or isinstance(other.value, str):
            if self.value != other.value:
                return False
        elif not math.isclose(self.value, other.value, rel_tol=1e-9, abs_tol=1e-9):
            return False
        return self.unit is None or other.unit is None or self.unit == other.unit


def _to_number(text: str) -> float:
    """`1,840` / `1 840` / `1.234.567,5` / `3,5` / `-2,5` → a float (comma + 3 digits = thousands)."""
    if text.startswith("-"):
        return -_to_number(text[1:])
    compact = re.sub(r"[ \u00a0\u202f']", "", text)
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", compact):
        return float(compact.replace(",", ""))
    if re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?", compact):
        return float(compact.replace(".", "").replace(",", "."))
    return float(compact.replace(",", "."))


def extract_quantities(text: str) -> list[Quantity]:
    """Every number in `text` (digits or number words, `persona.numerals`) with the unit
    written beside it."""
    text = digits_for_words(text)
    out: list[Quantity] = []
    for m in _NUMBER.finditer(text):
        if m.group("time"):
            parts = m.group("time").split(":")
            out.append(
                Quantity(":".join(f"{int(p):02d}" if i else str(int(p)) for i, p in enumerate(parts)), None)
            )
            continue
        try:
            value = _to_number(m.group("num"))
        except ValueError:
            continue
        unit = None
        if before := _UNIT_BEFORE.search(text[: m.start()]):
            unit = UNIT_WORDS.get(before.group(1).lower())
        if unit is None and (after := _UNIT_AFTER.match(text, m.end())):
            unit = UNIT_WORDS.get(after.group(1).lower())
        out.append(Quantity(value, unit))
    for word in re.findall(r"[^\W\d_]+", text.lower()):
        if word in NUMBER_WORDS:
            out.append(Quantity(float(NUMBER_WORDS[word]), None))
    return out


# -- text --------------------------------------------------------------------------------

_STOPWORDS = frozenset(
    """a an the and or of to in on at for with by from is are was were be been it its this that
    these those my your his her our their me you i we he she they them as about into than then so
    do does did has have had not no yes what which who whom when where how why
    и или в во на с со к ко по о об от до из за для у же ли не ни а но что это как так то
    под над при про через без после перед около между
    мой моя моё мое мои твой твоя ваш ваша вы ты я он она они мы его её ее их мне меня""".split()
)


def key_terms(text: str) -> list[str]:
    """Normalised content words: lower case, `ё`→`е`, no punctuation, numbers and stopwords."""
    # the same facts' texts are read for every answer graded: short ones are remembered
    return list(_key_terms_cached(text) if len(text) <= 1 << 16 else _key_terms(text))


@lru_cache(maxsize=1024)
def _key_terms_cached(text: str) -> tuple[str, ...]:
    return _key_terms(text)


def _key_terms(text: str) -> tuple[str, ...]:
    words = re.findall(r"[^\W\d_]+", digits_for_words(text).lower().replace("ё", "е"))
    return tuple(w for w in words if w not in _STOPWORDS and len(w) > 1 and w not in NUMBER_WORDS)


def terms_match(a: str, b: str) -> bool:
    """Same word up to a short inflected ending (Лена/Лены, dentist/dentists)."""
    if a == b:
        return True
    prefix = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        prefix += 1
    return prefix >= 3 and prefix >= min(len(a), len(b)) - 2


# what follows a short English word in its own inflected forms: quiz-zes, ski-ing, swim-ming
_INFLECTED = re.compile(r"(?:[a-z]?(?:es|ing|ed|ers?)|s)$")


def term_found(term: str, said: str) -> bool:
    """An expected word in an answer's word: the same word up to its ending — but a short
    word is no ending-less form of a long one ("sat" for "Saturday", "wed" for "Wednesday")."""
    # nor a short name the start of a longer one ("Ada" in "Adaeze", "Obi" in "Obinna")
    return (
        terms_match(term, said)
        and not (len(said) <= 3 < len(term) - 2)
        and not (len(term) <= 4 and len(said) - len(term) >= 3 and term.isascii() and not _INFLECTED.match(said[len(term) :]))
    )


# what an English word may end in, inflected: "studies" / "studied", "runner" / "running"
_ENGLISH_ENDING = re.compile(r"(?:e?s|e?d|ing|e?rs?|ie[sd]?|y|'s|e)")


def look_alike(term: str, said: str) -> bool:
    """ "Haddow" or "Haddick" for "Haddad", "Ramanathan" for "Raman": an English word `term_found`
    matches that parts from the expected one two letters or more before either ends, or goes
    on three letters or more past it — not by an inflection, nor by a dropped letter. Another
    name, or a slip ("Kestral", "Penicilan"): which, takes reading, so a caller doubts it."""
    longer = len(said) - len(term) >= 3 and said.startswith(term) and not _INFLECTED.match(said[len(term) :])
    return term.isascii() and term_found(term, said) and (longer or _other_ending(term, said))


def _other_ending(term: str, said: str) -> bool:
    """ "Haddow", "Haddick" for "Haddad": English words that part two letters or more before
    either ends, neither by an inflection nor by a dropped letter — a look-alike name, not the
    word inflected or misspelt."""
    if not (term.isascii() and said.isascii()):
        return False
    common = next((i for i, (a, b) in enumerate(zip(term, said, strict=False)) if a != b), min(len(term), len(said)))
    tails = (term[common:], said[common:])
    if not all(len(t) >= 2 for t in tails) or all(_ENGLISH_ENDING.fullmatch(t) for t in tails):
        return False
    short, long_ = sorted(tails, key=len)  # "Hadad": a letter dropped is a slip, left to the other rules
    one_letter = len(short) == len(long_) and sum(a != b for a, b in zip(short, long_, strict=True)) == 1
    return not one_letter and not any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


# items of a list: "; ", ", " (not a thousands group: "1, 200"), " and " in any language
LIST_SPLIT = re.compile(rf"\s*;\s*|,\s+(?!\d{{3}}\b)|\s+(?:{words_pattern('and')})\s+", re.IGNORECASE)


def split_items(expected: str) -> list[str]:
    """A list answer ("Лена, Аня и Босс") → its items; a single value stays one item."""
    items = [i.strip(" .") for i in LIST_SPLIT.split(expected)]
    return [i for i in items if i] or [expected.strip()]


def _count_adverbs(text: str) -> list[Quantity]:
    return [Quantity(float(_COUNT_ADVERBS[w]), None) for w in re.findall(r"[^\W\d_]+", text.lower()) if w in _COUNT_ADVERBS]


def missing_details(fact: str, said: str) -> list[str]:
    """Numbers, codes and names of `fact` not found in `said` (a paraphrase may change the rest)."""
    missing = []
    said_qty = [*extract_quantities(said), *_count_adverbs(said)]
    for q in [*extract_quantities(fact), *_count_adverbs(fact)]:
        if not any(q.matches(s) for s in said_qty):
            missing.append(str(q.value if isinstance(q.value, str) else f"{q.value:g}"))
    said_ids = extract_identifiers(said)
    missing += sorted(extract_identifiers(fact) - said_ids)
    words = re.findall(r"(?<![\w-])[^\W\d_]{2,}(?![\w-])", fact)  # whole words, not parts of codes like 32K
    said_terms = key_terms(said)
    for word in words[1:]:
        if word[0].isupper() and not any(terms_match(word.lower().replace("ё", "е"), s) for s in said_terms):
            missing.append(word)
    return missing
