"""Numbers as people write them, made digits: "сорок один", "двадцать пятого", "19,2 тыс.",
"пятнадцать тысяч", "минус 2,5", "52 минуты 30 секунд", "5-го", "forty-one".

`digits_for_words(text)` is applied before numbers are read from any persona-side text
(`persona.terms.extract_quantities`), so an answer "двадцать три года" meets an expected
"23 года" as the same number. What a caller may rely on: pure functions; text without such
forms comes back unchanged; never raises. A leaf module: it imports nothing of marathonbench.
"""

from __future__ import annotations

import itertools
import re

_UNITS = {
    "ноль": 0, "один": 1, "одна": 1, "одно": 1, "одного": 1, "два": 2, "две": 2, "двух": 2, "три": 3,
    "трёх": 3, "трех": 3, "четыре": 4, "четырёх": 4, "четырех": 4, "пять": 5, "пяти": 5, "шесть": 6,
    "шести": 6, "семь": 7, "семи": 7, "восемь": 8, "восьми": 8, "девять": 9, "девяти": 9,
    "десять": 10, "десяти": 10, "одиннадцать": 11, "двенадцать": 12, "тринадцать": 13,
    "четырнадцать": 14, "пятнадцать": 15, "шестнадцать": 16, "семнадцать": 17, "восемнадцать": 18,
    "девятнадцать": 19,
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {
    "двадцать": 20, "двадцати": 20, "тридцать": 30, "тридцати": 30, "сорок": 40, "сорока": 40,
    "пятьдесят": 50, "шестьдесят": 60, "семьдесят": 70, "восемьдесят": 80, "девяносто": 90,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}  # fmt: skip
_HUNDREDS = {
    "сто": 100, "двести": 200, "триста": 300, "четыреста": 400, "пятьсот": 500, "шестьсот": 600,
    "семьсот": 700, "восемьсот": 800, "девятьсот": 900, "hundred": 100,
}  # fmt: skip
# ordinals as dates are said ("восьмого марта", "двадцать пятого"): the day's number
_ORDINALS = {
    "первого": 1,
    "второго": 2,
    "третьего": 3,
    "четвёртого": 4,
    "четвертого": 4,
    "пятого": 5,
    "шестого": 6,
    "седьмого": 7,
    "восьмого": 8,
    "девятого": 9,
    "десятого": 10,
    "одиннадцатого": 11,
    "двенадцатого": 12,
    "тринадцатого": 13,
    "четырнадцатого": 14,
    "пятнадцатого": 15,
    "шестнадцатого": 16,
    "семнадцатого": 17,
    "восемнадцатого": 18,
    "девятнадцатого": 19,
    "двадцатого": 20,
    "тридцатого": 30,
}  # fmt: skip (English ordinals are left alone: "first name", "a second attempt")
_MONTHS_GENITIVE = frozenset(
    "января февраля марта апреля мая июня июля августа сентября октября ноября декабря числа".split()
)  # an ordinal is a number only as a date's day ("восьмого марта"), not in "с десятого раза"
_THOUSANDS = {"тысяча": 1000, "тысячи": 1000, "тысяч": 1000, "thousand": 1000}
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)?")
_MULTIPLIER = re.compile(
    r"(?<![\w.,])(\d+(?:[.,]\d+)?)\s*(тыс\.?|тысяч[аи]?|k\b|K\b|млн\.?|миллион(?:а|ов)?\b|million\b)",
)
_MINUS = re.compile(r"(?:\bминус\s*|\bminus\s*|−\s*)(?=\d)", re.IGNORECASE)
_ORDINAL_SUFFIX = re.compile(r"(\d)\s*-?\s*(?:го|ого|ое|е|й|ой|th|st|nd|rd)\b", re.IGNORECASE)
_MIN_SEC = re.compile(
    r"(\d+)\s*(?:мин(?:ут[аы]?|\.)?|minutes?|mins?)\s*(?:и\s+|and\s+)?(\d+)\s*(?:сек(?:унд[аы]?|\.)?|seconds?|secs?)",
    re.IGNORECASE,
)


def _place(value: int) -> int:
    """Where a number word stands in a spelled number: hundreds 3, tens 2, units and teens 1."""
    return 3 if value >= 100 else 2 if value >= 20 else 1


def _number_words(words: list[str]) -> tuple[int, int] | None:
    """The number the words at the start of `words` spell, and how many words it took. Words
    join only in a number's order — hundreds, then tens, then units ("сто двадцать три",
    "forty-one"); "два-три" or "five thirty" are not one number."""
    total, current, used, last_place = 0, 0, 0, 4
    for word in words:
        w = word.lower().replace("ё", "е") if word.lower() not in _UNITS else word.lower()
        parts = w.split("-") if "-" in w else [w]
        values = [_UNITS.get(p, _TENS.get(p, _HUNDREDS.get(p, _ORDINALS.get(p)))) for p in parts]
        if values and all(v is not None for v in values):
            numbers = [v for v in values if v is not None]
            if w == "hundred":
                if not current or last_place != 1:
                    break
                current, last_place = current * 100, 3
                used += 1
                continue
            places = [_place(v) for v in numbers]
            if places[0] >= last_place or any(b >= a for a, b in itertools.pairwise(places)):
                break  # out of order: a second number, not part of this one
            current += sum(numbers)
            last_place = places[-1]
            used += 1
            if any(p in _ORDINALS for p in parts):
                break  # an ordinal ends the number ("двадцать пятого")
            continue
        if w in _THOUSANDS and (current or used == 0):
            total += max(current, 1) * 1000
            current, last_place = 0, 4
            used += 1
            continue
        if w == "and" and used and current >= 100:  # "two hundred and five"
            used += 1
            continue
        break
    if used and words[used - 1].lower() == "and":
        used -= 1
    return (total + current, used) if used else None


def _spell_out(text: str) -> str:
    out: list[str] = []
    pos = 0
    matches = list(_WORD.finditer(text))
    i = 0
    while i < len(matches):
        run = [matches[i]]  # words joined by spaces only: a comma or a full stop ends a number
        while len(run) < 6 and i + len(run) < len(matches):
            gap = text[run[-1].end() : matches[i + len(run)].start()]
            if gap.strip():
                break
            run.append(matches[i + len(run)])
        words = [m.group(0) for m in run]
        following = matches[i + len(run)].group(0) if i + len(run) < len(matches) else ""
        found = _number_words(words)
        if found is None or (found[1] == 1 and words[0].lower() in _THOUSANDS):
            i += 1
            continue
        value, used = found
        after = words[used] if used < len(words) else following
        if (
            any(w.lower().replace("ё", "е") in _ORDINALS for w in words[:used])
            and after.lower() not in _MONTHS_GENITIVE
        ):
            i += 1
            continue
        first, last = matches[i], matches[i + used - 1]
        out.append(text[pos : first.start()])
        out.append(str(value))
        pos = last.end()
        i += used
    out.append(text[pos:])
    return "".join(out)


def _multiply(m: re.Match[str]) -> str:
    value = float(m.group(1).replace(",", "."))
    factor = 1_000_000 if m.group(2).lower().startswith(("млн", "миллион", "million")) else 1000
    return f"{value * factor:.0f}"


def digits_for_words(text: str) -> str:
    """`text` with spelled-out numbers, thousands abbreviations, "minus", ordinal endings on
    digits and "N minutes M seconds" written as digits ("41", "19200", "-2,5", "5", "52:30")."""
    text = _spell_out(text)
    text = _MINUS.sub("-", text)
    text = _MULTIPLIER.sub(_multiply, text)
    text = _MIN_SEC.sub(lambda m: f"{m.group(1)}:{int(m.group(2)):02d}", text)
    return _ORDINAL_SUFFIX.sub(r"\1", text)
