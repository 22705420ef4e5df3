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
from functools import lru_cache

_UNITS = {
    "ноль": 0, "один": 1, "одна": 1, "одно": 1, "одного": 1, "два": 2, "две": 2, "двух": 2, "три": 3,
    "трёх": 3, "трех": 3, "четыре": 4, "четырёх": 4, "четырех": 4, "пять": 5, "пяти": 5, "шесть": 6,
    "шести": 6, "семь": 7, "семи": 7, "восемь": 8, "восьми": 8, "девять": 9, "девяти": 9,
    "десять": 10, "десяти": 10, "одиннадцать": 11, "двенадцать": 12, "тринадцать": 13,
    "четырнадцать": 14, "пятнадцать": 15, "шестнадцать": 16, "семнадцать": 17, "восемнадцать": 18,
    "девятнадцать": 19, "одиннадцати": 11, "двенадцати": 12, "тринадцати": 13, "четырнадцати": 14,
    "пятнадцати": 15, "шестнадцати": 16, "семнадцати": 17, "восемнадцати": 18, "девятнадцати": 19,
    # dative and instrumental ("по четырём тысячам", "с двумя"): how sums are said after prepositions
    "одному": 1, "одной": 1, "двум": 2, "двумя": 2, "трём": 3, "трем": 3, "тремя": 3, "четырём": 4,
    "четырем": 4, "четырьмя": 4, "пятью": 5, "шестью": 6, "семью": 7, "восьмью": 8, "восемью": 8,
    "девятью": 9, "десятью": 10,
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {
    "двадцать": 20, "двадцати": 20, "тридцать": 30, "тридцати": 30, "сорок": 40, "сорока": 40,
    "пятьдесят": 50, "шестьдесят": 60, "семьдесят": 70, "восемьдесят": 80, "девяносто": 90,
    "пятидесяти": 50, "шестидесяти": 60, "семидесяти": 70, "восьмидесяти": 80, "девяноста": 90,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90,
}  # fmt: skip
_HUNDREDS = {
    "сто": 100, "двести": 200, "триста": 300, "четыреста": 400, "пятьсот": 500, "шестьсот": 600,
    "семьсот": 700, "восемьсот": 800, "девятьсот": 900, "hundred": 100,
    # the oblique cases answers use ("около семисот девяноста тысяч", "двухсот пятидесяти")
    "ста": 100, "двухсот": 200, "трёхсот": 300, "трехсот": 300, "четырёхсот": 400,
    "четырехсот": 400, "пятисот": 500, "шестисот": 600, "семисот": 700, "восьмисот": 800,
    "девятисот": 900,
    "стам": 100, "двумстам": 200, "трёмстам": 300, "тремстам": 300, "четырёмстам": 400,
    "четыремстам": 400, "пятистам": 500, "шестистам": 600, "семистам": 700, "восьмистам": 800,
    "девятистам": 900,
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
    # the same days said "на второе октября", «семнадцатое ноября»
    "первое": 1, "второе": 2, "третье": 3, "четвёртое": 4, "четвертое": 4, "пятое": 5, "шестое": 6,
    "седьмое": 7, "восьмое": 8, "девятое": 9, "десятое": 10, "одиннадцатое": 11, "двенадцатое": 12,
    "тринадцатое": 13, "четырнадцатое": 14, "пятнадцатое": 15, "шестнадцатое": 16, "семнадцатое": 17,
    "восемнадцатое": 18, "девятнадцатое": 19, "двадцатое": 20, "тридцатое": 30,
    # English days, only before "of MONTH" or after "MONTH (the)": "first name" stays a word
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}  # fmt: skip
# a year said as an ordinal: «в две тысячи двенадцатом (году)»
_YEAR_ORDINALS = {
    "первом": 1, "втором": 2, "третьем": 3, "четвёртом": 4, "четвертом": 4, "пятом": 5, "шестом": 6,
    "седьмом": 7, "восьмом": 8, "девятом": 9, "десятом": 10, "одиннадцатом": 11, "двенадцатом": 12,
    "тринадцатом": 13, "четырнадцатом": 14, "пятнадцатом": 15, "шестнадцатом": 16, "семнадцатом": 17,
    "восемнадцатом": 18, "девятнадцатом": 19, "двадцатом": 20,
}  # fmt: skip
_MONTHS_GENITIVE = frozenset(
    "января февраля марта апреля мая июня июля августа сентября октября ноября декабря числа".split()
)  # an ordinal is a number only as a date's day ("восьмого марта"), not in "с десятого раза"
_MONTHS_EN = frozenset(
    "january february march april may june july august september october november december".split()
)
_THOUSANDS = {
    "тысяча": 1000,
    "тысячи": 1000,
    "тысяч": 1000,
    "тысячам": 1000,
    "тысячами": 1000,
    "тыща": 1000,  # said, not written: «сто пятьдесят тыщ»
    "тыщи": 1000,
    "тыщ": 1000,
    "тыщу": 1000,
    "thousand": 1000,
}
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)?")
_MULTIPLIER = re.compile(
    r"(?<![\w.,])(\d+(?:[.,]\d+)?)\s*(тысяч(?:а|и|ам|ами)?\b|тыщ[аиу]?\b|т\.\s?р\.|тыс\.?(?!\w)|thousand\b|grand\b|k\b|K\b|млн\.?|миллион(?:а|ов)?\b|million\b)",
)
_MINUS = re.compile(r"(?:\bминус\s*|\bminus\s*|−\s*)(?=\d)", re.IGNORECASE)
_ORDINAL_SUFFIX = re.compile(r"(\d)\s*-?\s*(?:го|ого|ое|е|й|ой|th|st|nd|rd)\b", re.IGNORECASE)
_MIN_SEC = re.compile(
    r"(\d+)\s*(?:мин(?:ут[аы]?|\.)?|minutes?|mins?)\s*(?:и\s+|and\s+)?(\d+)\s*(?:сек(?:унд[аы]?|\.)?|seconds?|secs?)",
    re.IGNORECASE,
)


_OF_MONTH = re.compile(r"of\s+(\w+)", re.IGNORECASE)
_MONTH_BEFORE = re.compile(r"(\w+)(?:\s+the)?$")


def _month_around(later: str, before: str) -> bool:
    """An English ordinal is a day only as a date says it: "seventeenth of November",
    "November (the) seventeenth"."""
    of = _OF_MONTH.match(later)
    month = _MONTH_BEFORE.search(before)
    return bool(of and of.group(1).lower() in _MONTHS_EN) or bool(month and month.group(1) in _MONTHS_EN)


_CONJUNCTIONS = frozenset("и или либо а and or".split())
_BEFORE_A_DAY = frozenset("на в к the of on".split())


def _days_before_month(later: str) -> bool:
    """ "пятое и двенадцатое ноября", "либо двенадцатого, либо девятнадцатого октября", "the
    fifth or the twelfth of November": an ordinal joined by "and"/"or" to the next days, whose
    month comes after them (not "came third on 12 November")."""
    joined = False
    for word in re.findall(r"[^\W\d_]+|\d+", later[:120].lower().replace("ё", "е"))[:8]:
        if word in _MONTHS_GENITIVE or word in _MONTHS_EN:
            return joined
        if word in _CONJUNCTIONS:
            joined = True
        elif word not in _BEFORE_A_DAY and word not in _ORDINALS and not word.isdigit():
            return False
    return False


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
        if w == "and" and used and (current >= 100 or (total >= 1000 and not current)):
            used += 1  # "two hundred and five", "two thousand and twelve"
            continue
        if w in _YEAR_ORDINALS and total >= 1000:  # «две тысячи двенадцатом»: a year
            current += _YEAR_ORDINALS[w]
            used += 1
            break
        break
    if used and words[used - 1].lower() == "and":
        used -= 1
    return (total + current, used) if used else None


_A_HUNDRED = re.compile(r"\ba (hundred|thousand)\b", re.IGNORECASE)
_STARTS = frozenset([*_UNITS, *_TENS, *_HUNDREDS, *_ORDINALS, *_THOUSANDS])  # a number's first word


def _spell_out(text: str) -> str:
    text = _A_HUNDRED.sub(r"one \1", text)  # "a hundred and fifty pounds"
    out: list[str] = []
    pos = 0
    matches = list(_WORD.finditer(text))
    i = 0
    while i < len(matches):
        head = matches[i].group(0).lower().split("-", 1)[0]
        if head not in _STARTS and head.replace("ё", "е") not in _STARTS:
            i += 1  # no number starts here (most words: checked first, it is most of the time)
            continue
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
        later = text[matches[i + used - 1].end() :].lstrip()
        before = text[: matches[i].start()].rstrip().lower()
        if any(w.lower().replace("ё", "е") in _ORDINALS for w in words[:used]) and not (
            after.lower() in _MONTHS_GENITIVE or _month_around(later, before) or _days_before_month(later)
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


_HALF_PAST = re.compile(r"\bhalf past (\d{1,2})\b", re.IGNORECASE)
# British "at half nine" (9:30): after "at", "by", "until" or a sentence's start, never "half 5 kg"
_HALF_BRITISH = re.compile(
    r"(?:\b(?:at|by|from|until|till|around|about)\s+|^|(?<=[.,;:—–-])\s*)half (\d{1,2})"
    r"(?!\d|[.,:]\d|\s*%|\s+(?:kg|g|km|m|l|lbs?|kilos?|kilograms?|litres?|liters?|miles?|metres?|meters?|of)\b)",
    re.IGNORECASE,
)
_QUARTER = re.compile(r"\b(?:a )?quarter (past|to) (\d{1,2})\b", re.IGNORECASE)
_RU_HALF = re.compile(
    r"(?<!\w)(?:(?:в\s+)?половин[еуаы]\s+|пол-?)([^\W\d_]+[ое]го)(?!\w)", re.IGNORECASE
)  # «полдевятого», «в половине третьего»
_RU_QUARTER_TO = re.compile(r"(?<!\w)без\s+четверти\s+(\d{1,2})(?!\d)", re.IGNORECASE)
_EVENING = re.compile(r"(?<![\d:.,])(\d{1,2})(?::(\d{2}))?\s*(?:pm|p\.m\.|вечера|дня)(?!\w)", re.IGNORECASE)
_MORNING = re.compile(r"(?<![\d:.,])(\d{1,2})(?::(\d{2}))?\s*(?:am|a\.m\.|утра)(?!\w)", re.IGNORECASE)
_AND_A_HALF = re.compile(r"(?<![\d.,])(\d+)\s+(?:с половиной|and a half)(?!\w)", re.IGNORECASE)


def _clock_words(text: str) -> str:
    """Times as people say them, as a clock shows them: "half past nine" 9:30, «в половине
    девятого» 8:30, "quarter to ten" 9:45, «8 вечера» / "8 pm" 20:00; «два с половиной» 2,5."""
    text = _HALF_PAST.sub(lambda m: f"{int(m.group(1))}:30", text)
    text = _HALF_BRITISH.sub(
        lambda m: m.group(0)[: m.start(1) - m.start() - 5] + f"{int(m.group(1))}:30", text
    )

    def quarter(m: re.Match[str]) -> str:
        hour = int(m.group(2))
        return f"{hour}:15" if m.group(1).lower() == "past" else f"{(hour - 1) or 12}:45"

    text = _QUARTER.sub(quarter, text)

    def ru_half(m: re.Match[str]) -> str:
        hour = _ORDINALS.get(m.group(1).lower().replace("ё", "е"))
        return f"{hour - 1 or 12}:30" if hour and hour <= 12 else m.group(0)

    text = _RU_HALF.sub(ru_half, text)
    text = _RU_QUARTER_TO.sub(lambda m: f"{(int(m.group(1)) - 1) or 12}:45", text)

    def evening(m: re.Match[str]) -> str:
        hour = int(m.group(1))
        return f"{hour + 12 if hour < 12 else hour}:{m.group(2) or '00'}" if hour <= 12 else m.group(0)

    text = _EVENING.sub(evening, text)
    text = _MORNING.sub(
        lambda m: f"{int(m.group(1))}:{m.group(2) or '00'}" if int(m.group(1)) <= 12 else m.group(0), text
    )
    return _AND_A_HALF.sub(lambda m: f"{m.group(1)},5", text)


def digits_for_words(text: str) -> str:
    """`_digits_for_words`, remembered for short texts: graders read the same facts' texts for
    every answer, and a long reply (up to a megabyte) is not worth keeping."""
    return _digits_cached(text) if len(text) <= _CACHED_CHARS else _digits_for_words(text)


_CACHED_CHARS = 1 << 16  # with 1,024 entries: at most 64 MiB kept


@lru_cache(maxsize=1024)
def _digits_cached(text: str) -> str:
    return _digits_for_words(text)


def _digits_for_words(text: str) -> str:
    """`text` with spelled-out numbers, thousands abbreviations, "minus", ordinal endings on
    digits and "N minutes M seconds" written as digits ("41", "19200", "-2,5", "5", "52:30"),
    and times and halves as a clock and a decimal write them ("9:30", "20:00", "2,5")."""
    text = _clock_words(_spell_out(text))
    text = _MINUS.sub("-", text)
    text = _MULTIPLIER.sub(_multiply, text)
    text = _MIN_SEC.sub(lambda m: f"{m.group(1)}:{int(m.group(2)):02d}", text)
    return _ORDINAL_SUFFIX.sub(r"\1", text)
