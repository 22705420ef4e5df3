"""The expected answer's notations and words as an answer may write them: dates and times
in the expected notation (`in_expected_forms`: "05.10" as «5 октября», "8.30" as "8:30"), and
the words spelled otherwise (`in_expected_spelling`): an acronym for its words («ГАЗ» for
«Горьковский автомобильный завод», and back), the other script ("Bologna" for «Болонья»,
«Зен» for "Zen"), a one-letter slip in a long word ("pescetarian"), initials beside the
surname, a weekday's or month's short form, a given name's full or short form ("Михаил" for
«Миша»); a number's groups with words between («серия 75, номер 1234567»).

Both rewrite the answer so the exact grader's matching stays one rule. What a caller may rely
on: only what stands for a value or a word of the expected answer is rewritten; everything else
is left as it was, so the rules that read what the answer says beside the value still see it.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import pairwise

import iuliia

from persona.grading.cues import cues
from persona.languages import words_pattern
from persona.morphology import cyrillic
from persona.terms import UNIT_WORDS, key_terms, terms_match

_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_ACRONYM = re.compile(r"(?<!\w)[A-ZА-ЯЁ]{3,5}(?!\w)")  # three letters at least: not "OK", "GP", "AM"
_SIMILAR = 0.8  # "bologna" / "bolonya" is 0.86; "boston" / "bolonya" 0.46
_LONG = 7  # a one-letter slip is a variant only in a word this long ("pescetarian"), not "cat"/"car"
_DAY_BEFORE = re.compile(r"(?<!\d)\d{1,2}(?:st|nd|rd|th)?\s+$")  # "17 Nov (moved…)": a day before it
_NAME_AFTER = re.compile(r"\s+[A-ZА-ЯЁ]")  # "2 Jan Novak": a name, not a month
# "Пн, 8:30", "26 Sept.", "Sat 14:00", «пн в 8:30», "Sat at 2": not "sat in the row"
_SHORT_FORM_AT = re.compile(r"\.|,|\s+(?:(?:в|во|at)\s+)?\d|\s*$", re.IGNORECASE)
# a weekday's short form in lower case is read only before a time: «пн, 8:30», "tue 9:30" (docs/grading.md)
_TIME_AFTER = re.compile(r",?\s*(?:(?:в|во|at)\s+)?\d{1,2}[:.]\d{2}(?!\d)", re.IGNORECASE)


# the romanisations a Russian word is commonly written in (iuliia's schemas): Wikipedia's
# ("Yelena", "Andrey"), the passport's ("Elena", "Andrei", "Iuliia"), Telegram's (х as "h":
# "Haddad"), the Moscow metro's and the scientific one ("Julija", "Andrej")
_SCHEMAS = (iuliia.WIKIPEDIA, iuliia.ICAO_DOC_9303, iuliia.TELEGRAM, iuliia.MOSMETRO, iuliia.SCIENTIFIC)
_NOT_LETTER = re.compile(r"[^a-z]")
_VOWELS = re.compile(r"[aeiouy]+")


@lru_cache(maxsize=1 << 14)
def _latin(word: str) -> frozenset[str]:
    """`word` in Latin letters: itself, or each common romanisation of a Cyrillic word;
    lower case, letters only, "c" read as "k" ("Camino" is «Камино»)."""
    forms = {schema.translate(word) for schema in _SCHEMAS} if cyrillic(word) else {word}
    return frozenset(_NOT_LETTER.sub("", f.lower()).replace("ck", "k").replace("c", "k") for f in forms)


def _loose(latin: str) -> str:
    """A romanisation with the spellings schemas differ in made one: "kh"/"x" as "h", "j"/"y"
    as "i", doubled letters single ("Yuliya", "Iuliia", "Julija" and "Yulia" are one)."""
    latin = latin.replace("kh", "h").replace("x", "h").replace("j", "i").replace("y", "i")
    return re.sub(r"(.)\1+", r"\1", latin)


def _shape(latin: str) -> str:
    """A romanisation's consonants in order, each run of vowels as one mark: "Headingley" and
    «Хедингли», "Seville" and «Севилья» share theirs — but so do "Roman" and «Рамин»: a shared
    shape is a doubt, never a match."""
    return _VOWELS.sub("*", _loose(latin))


def one_name_in_two_scripts(a: str, b: str) -> bool:
    """`a` and `b` are one name in two scripts: one of the Cyrillic word's common romanisations
    (`_SCHEMAS`, by the iuliia library) is the Latin word once the schemas' differences are made
    one (`_loose`: "Andrei"/"Andrey", "Yulia"/«Юлия», "Haddad"/«Хаддад»), or is alike ending alike,
    of one length up to six letters ("Bologna" is «Болонья»; "Maria" is no «Марина», "Milan" no
    «Милана», "Tom" no «Тим»)."""
    if cyrillic(a) == cyrillic(b) or min(len(a), len(b)) < 2:
        return False
    return any(_romanised_alike(_loose(la), _loose(lb)) for la in _latin(a) for lb in _latin(b))


def _romanised_alike(la: str, lb: str) -> bool:
    if la == lb:
        return True
    if la[-1] != lb[-1] or la[0] != lb[0] or min(len(la), len(lb)) < 4:
        return False
    if abs(len(la) - len(lb)) > (0 if min(len(la), len(lb)) <= 6 else 1):
        return False
    return SequenceMatcher(None, la, lb).ratio() >= _SIMILAR


def maybe_other_script(expected: str, answer: str) -> str | None:
    """A name of the answer in the other script with the shape of an expected one («Хедингли»
    for "Headingley", "Roman" for «Рамин») but not surely it: a doubt, for the grader's miss."""
    wanted = [w for w in _WORD.findall(expected) if w[:1].isupper() and len(w) >= 3]
    for word in _WORD.findall(answer):
        for w in wanted:
            if cyrillic(w) != cyrillic(word) and len(word) >= 3 and _shapes(w) & _shapes(word):
                return f"{word!r} may be {w!r} in the other script"
    return None


def begins_in_other_script(expected: str, answer: str) -> str | None:
    """ "Sberbank" for «Сбер»: an answer's word in the other script that begins with an expected
    name romanised — a longer name, or the same one written out: a doubt."""
    wanted = [w for w in _WORD.findall(expected) if w[:1].isupper() and len(w) >= 4]
    for word in _WORD.findall(answer):
        for w in wanted:
            if cyrillic(w) != cyrillic(word) and any(
                _loose(b).startswith(_loose(a)) or _loose(a).startswith(_loose(b))
                for a in _latin(w)
                for b in _latin(word)
                if min(len(a), len(b)) >= 4
            ):
                return f"{word!r} begins as {w!r} does, in the other script"
    return None


@lru_cache(maxsize=1 << 14)
def _shapes(word: str) -> frozenset[tuple[str, str]]:
    """Each romanisation's first letter and shape (`_shape`), with two consonants at least."""
    keys = {(la[:1], _shape(la)) for la in _latin(word)}
    return frozenset(k for k in keys if sum(c != "*" for c in k[1]) >= 2)


def _one_slip(a: str, b: str) -> bool:
    """One letter changed, added, dropped or two swapped, in long words of one script."""
    a, b = a.lower(), b.lower()
    if a == b or min(len(a), len(b)) < _LONG or abs(len(a) - len(b)) > 1 or a[0] != b[0]:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        i, j = diff if len(diff) == 2 else (0, 0)
        return j == i + 1 and (a[i], a[j]) == (b[j], b[i])  # two letters swapped
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def in_expected_spelling(expected: str, answer: str) -> str:
    """`answer` with the expected answer's words where it spells them otherwise."""
    wanted = [m.group(0) for m in _WORD.finditer(expected)]
    if not wanted:
        return answer
    answer = _initials_written_out(wanted, _acronyms_written_out(expected, wanted, answer))
    short_forms = cues().short_forms
    months = {*cues().months.values(), *cues().months_ambiguous.values()}

    def respell(m: re.Match[str]) -> str:
        word = m.group(0)
        for w in wanted:
            if w.lower() == word.lower():
                return word
        if word[0].isupper() and (name := _same_name(word, tuple(wanted))):
            return name  # "Михаил" for «Миша», "Mike" for "Michael"
        if word[0].isupper() and (name := _same_with_k(word, tuple(wanted))):
            return name  # "Markus" for "Marcus": one name, a hard c written k
        full = short_forms.get(word.lower().replace("ё", "е"))
        at_date = _SHORT_FORM_AT.match(m.string, m.end()) or (
            full in months  # "17 Nov (moved…)", not "12 Sun Street" or "2 Jan Novak"
            and _DAY_BEFORE.search(m.string, 0, m.start())
            and not _NAME_AFTER.match(m.string, m.end())
        )
        before = m.string[: m.start()].lower()  # «по пн», «в пт» — not «а не пн» (ruled out)
        lowercase_ok = (
            cyrillic(word)
            and bool(
                re.search(r"(?:^|\s)(?:по|в|во)\s+$", before)
                and not re.search(r"(?<!\w)не\s+(?:по|в|во)\s+$", before)
            )
        ) or (full not in months and bool(_TIME_AFTER.match(m.string, m.end())))  # «пн, 8:30», "tue 9:30"
        if full and (word[0].isupper() or lowercase_ok) and at_date and any(terms_match(full, w.lower()) for w in wanted):
            return full  # "Пн, 8:30" for «понедельникам в 8:30», "26 Sept." for "26 September"
        for w in wanted:
            if cyrillic(w) != cyrillic(word) and one_name_in_two_scripts(w, word):
                return w
            # a slip of the pen in a word, never in a name: "Iceland" is no "Ireland"
            if w.islower() and len(w) >= 3 and _one_slip(w, word):
                return w
        return word

    return _WORD.sub(respell, answer)


def _same_with_k(word: str, wanted: tuple[str, ...]) -> str | None:
    """The expected Latin name `word` spells with k where it has a hard c, or the other way
    ("Markus", "Karl", "Erik" for "Marcus", "Carl", "Eric"); four letters at least."""

    def hard(name: str) -> str:
        return re.sub(r"c(?![eiy])", "k", name.lower().replace("ck", "k"))

    if not word.isascii() or len(word) < 4:
        return None
    return next((w for w in wanted if w[:1].isupper() and w.isascii() and w != word and hard(w) == hard(word)), None)


@lru_cache(maxsize=1 << 16)  # each answer's words against the same expected names, answer after answer
def _same_name(word: str, wanted: tuple[str, ...]) -> str | None:
    """The expected name that `word` is another form of (a full name and its short one, in
    the json5 `name_forms` table), inflected or not; None when it is no such form."""
    folded = word.lower().replace("ё", "е")
    groups = [g for g in cues().name_forms if any(_name_form(folded, n) for n in g)]
    for w in wanted:
        name = w.lower().replace("ё", "е")
        if not w[:1].isupper() or _name_form(folded, name):
            continue  # the expected name itself, maybe inflected
        if any(_name_form(name, n) for g in groups for n in g):
            return w
    return None


# a Russian name's case endings by how the name ends («Миша» → «Миши», «Женя» → «Жене»,
# «Андрей» → «Андрею», «Иван» → «Ивана»); English adds none ("Pat" is no "Patel"), and «Жена»
# is no form of «Женя»
_CASE_ENDINGS = {
    "а": ("ы", "и", "е", "у", "ой", "ою"),
    "я": ("и", "е", "ю", "ей", "ею"),
    "й": ("я", "ю", "ем", "е", "и"),
    "ь": ("я", "ю", "ем", "е", "и"),
}
_CONSONANT_ENDINGS = ("а", "у", "ом", "е")


@lru_cache(maxsize=1 << 16)
def _name_form(word: str, name: str) -> bool:
    """`word` is `name` or, for a Russian name, one of its case forms."""
    if word == name:
        return True
    if not cyrillic(name) or len(name) < 3:
        return False
    if name[-1] in _CASE_ENDINGS:
        stem, endings = name[:-1], _CASE_ENDINGS[name[-1]]
    elif name[-1] in "еиоуыэюё":
        return False  # an indeclinable name
    else:
        stem, endings = name, _CONSONANT_ENDINGS
    return word.startswith(stem) and word[len(stem) :] in endings


_INITIALS_AFTER = re.compile(r"\s+((?:[A-ZА-ЯЁ]\.\s*){1,2})")
_INITIALS_BEFORE = re.compile(r"((?:[A-ZА-ЯЁ]\.\s*){1,2})$")


def _initials_written_out(wanted: list[str], answer: str) -> str:
    """ "Шубина Е. В." for «Елена Викторовна Шубина», "E. V. Shubina": initials right beside
    the expected surname stand for its other names with those first letters (initials beside
    another surname are that person's)."""
    names = [w for w in wanted if w[:1].isupper() and len(w) > 1]
    for surname in (n for n in names if len(n) > 3):  # a surname, not "Dr"
        # the name inflected too («Н. Новгороде», «Шубиной Е. В.»)
        for m in re.finditer(rf"(?<!\w){re.escape(surname)}\w{{0,2}}(?!\w)", answer, re.IGNORECASE):
            after = _INITIALS_AFTER.match(answer, m.end())
            before = _INITIALS_BEFORE.search(answer[: m.start()])
            span = (
                (m.end() + after.start(1) - after.start(), m.end() + after.end(1) - after.start())
                if after
                else None
            )
            if span is None and before:
                span = (before.start(1), before.end(1))
            if span is None:
                continue
            letters = re.findall(r"[A-ZА-ЯЁ]", answer[span[0] : span[1]])
            left = [n for n in names if n != surname]
            full = [next((n for n in left if n[0] == c), "") for c in letters]
            if all(full):
                return answer[: span[0]] + " ".join(full) + " " + answer[span[1] :]
    return answer


def _acronyms_written_out(expected: str, wanted: list[str], answer: str) -> str:
    """ "Горьковском автомобильном заводе" → «ГАЗ» when the expected answer says «ГАЗ»; «ГАЗ»
    → «Горьковский автомобильный завод» when it says the words. Three letters at least, the
    run of words capitalised first and holding no small word ("booked by Alice" is no "BA")."""
    for acronym in dict.fromkeys(_ACRONYM.findall(expected)):
        words = list(_WORD.finditer(answer))
        n = len(acronym)
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            joined = all(not answer[x.end() : y.start()].strip() for x, y in pairwise(run))
            initials = "".join(w.group(0)[0] for w in run).lower()
            if (
                joined
                and initials == acronym.lower()
                and run[0].group(0)[0].isupper()
                and all(key_terms(w.group(0)) and not w.group(0).isupper() for w in run)
            ):
                answer = answer[: run[0].start()] + acronym + answer[run[-1].end() :]
                break
    expansions = {
        "".join(w[0] for w in wanted[i : i + n]).lower(): " ".join(wanted[i : i + n])
        for n in range(3, 6)
        for i in range(len(wanted) - n + 1)
        if not any(w.isupper() for w in wanted[i : i + n])
    }
    if not expansions:
        return answer
    return _ACRONYM.sub(lambda m: expansions.get(m.group(0).lower(), m.group(0)), answer)


NUMERIC_DATE = re.compile(
    r"(?<![\w.,])(\d{1,2})[./](\d{1,2})(?:[./](?:\d{4}|\d{2}))?(?!\d|[.,]\d)"
)  # "19.11, …"
_DOTTED_TIME = re.compile(r"(?<![\w.,:])(\d{1,2})\.(\d{2})(?![\d,]|\.\d)")
_UNIT_AFTER = re.compile(r"\s*([^\W\d_]{1,12}|[€$₽£%])")
_HOURS = re.compile(r"(?<![\w.,:])(\d{1,2})\s*(?:час(?:а|ов)?|h|o'clock)(?!\w)", re.IGNORECASE)
_EXPECTED_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")
_DIGIT_GROUPS_ONLY = re.compile(r"\d+(?: \d+)+")  # a passport's series and number
_GROUPED_DIGITS = 6  # "75 1234567" is one number in groups; "2 15" is two numbers
_OR = re.compile(rf"\b(?:{words_pattern('or')}|nor)\b", re.IGNORECASE)


def _parts_kept_apart(span: str) -> bool:
    """The words between a number's groups keep them two values: «серия 75, а не 1234567»
    (ruled out), "75 or 1234567", "75 — earlier 1234567", a new line between them."""
    c = cues()
    return "\n" in span or any(p.search(span) for p in (c.rejected, c.past, c.guess, c.hedge, _OR))


def _not_a_date(m: re.Match[str]) -> bool:
    """A numeric "date" that is a number: "10.5 kg" (a unit after it), "5.5, это точно" (before
    a comma a date writes its month in two digits: "19.11, во вторник")."""
    unit = _UNIT_AFTER.match(m.string, m.end())
    if unit and unit.group(1).lower() in UNIT_WORDS:
        return True
    decimal = m.group(0).count(".") + m.group(0).count("/") == 1 and len(m.group(2)) < 2
    return decimal and m.string[m.end() : m.end() + 1] == ","


def in_expected_forms(expected: str, answer: str) -> str:
    """The answer with dates and times in the expected answer's notation: "05.10" as
    "5 октября" when a date with a month name is expected, "8.30" as "8:30" when a time is."""
    cues_ = cues()
    lowered = expected.lower()
    if cues_.months and any(m in lowered for m in cues_.months.values()):

        def as_words(m: re.Match[str]) -> str:
            day, month = int(m.group(1)), int(m.group(2))
            if _not_a_date(m):
                return m.group(0)
            return f"{day} {cues_.months[month]}" if 1 <= day <= 31 and month in cues_.months else m.group(0)

        answer = NUMERIC_DATE.sub(as_words, answer)
    elif cues_.months_ambiguous and any(m in lowered for m in cues_.months_ambiguous.values()):

        def unambiguous(m: re.Match[str]) -> str:
            """ "26/09" can only be 26 September, "09/26" only September 26; "05/10" stays as it is."""
            a, b = int(m.group(1)), int(m.group(2))
            if _not_a_date(m):
                return m.group(0)
            if 12 < a <= 31 and 1 <= b <= 12:
                return f"{a} {cues_.months_ambiguous[b]}"
            if 12 < b <= 31 and 1 <= a <= 12:
                return f"{b} {cues_.months_ambiguous[a]}"
            return m.group(0)

        answer = NUMERIC_DATE.sub(unambiguous, answer)
    if _DIGIT_GROUPS_ONLY.fullmatch(expected) and sum(c.isdigit() for c in expected) >= _GROUPED_DIGITS:
        groups = expected.split()
        apart = r"(?:\W+[^\W\d]+){0,3}?\W+".join(rf"(?<!\d){g}(?!\d)" for g in groups)
        answer = re.sub(
            apart, lambda m: m.group(0) if _parts_kept_apart(m.group(0)) else " ".join(groups), answer
        )
    if _EXPECTED_TIME.search(expected):
        answer = _HOURS.sub(lambda m: f"{m.group(1)}:00", answer)
        answer = _DOTTED_TIME.sub(
            lambda m: f"{m.group(1)}:{m.group(2)}" if int(m.group(1)) < 24 else m.group(0), answer
        )
    return answer


# "the 26th", "Thursday 26th", «22-го», «22-е»: a day of the month named without its month (an
# ordinal after "the" or a weekday; Russian's «-го»/«-е»), not "your 1st session"
_BARE_DAY = re.compile(
    r"(?:(?<=\bthe )|(?<=day )|(?<=day, )|(?<=day, the ))(\d{1,2})(?:st|nd|rd|th)(?!\w)"
    r"|(?<![\w.,/:])(\d{1,2})-?(?:го|е)(?!\w)",
    re.IGNORECASE,
)
_EXPECTED_DATE = re.compile(r"(?<!\d)(\d{1,2})\s+([^\W\d_]+)")
_DAYS_COUNT = re.compile(r"(?:(?:через|in)\s+)?(?<!\d)(\d+)(\s+(?:days?|дн(?:я|ей)|день))(?!\w)", re.IGNORECASE)


def days_as_expected(expected: str, answer: str, earlier: tuple[str, ...] = ()) -> str:
    """For a question asking when (and how many days from today): a date's day without its month
    ("Next Thursday, the 26th", «в воскресенье 22-го») as the expected date when the answer names
    no month and no earlier value (`earlier`) had that day; a day named by its distance ("the
    day after tomorrow", «послезавтра») as that many days, in the expected answer's words."""
    cues_ = cues()
    dates = [m for m in _EXPECTED_DATE.finditer(expected) if m.group(2).lower() in cues_.month_words]
    if len(dates) != 1:
        return answer
    words = set(re.findall(r"[^\W\d_]+", answer.lower()))
    day, month = dates[0].group(1), dates[0].group(2)
    taken = any(int(d.group(1)) == int(day) for e in earlier for d in _EXPECTED_DATE.finditer(e))
    if not words & cues_.month_words and not taken:

        def as_date(m: re.Match[str]) -> str:
            return f"{day} {month}" if int(m.group(1) or m.group(2)) == int(day) else m.group(0)

        answer = _BARE_DAY.sub(as_date, answer)
    if not (count := _DAYS_COUNT.search(expected)):
        return answer
    said_as = count.group(0)[: count.start(1) - count.start()] + "{}" + count.group(2)  # «через 2 дня»
    for phrase, days in sorted(cues_.relative_days.items(), key=lambda kv: -len(kv[0])):
        answer = re.sub(rf"(?<!\w){re.escape(phrase)}(?!\w)", said_as.format(days), answer, flags=re.IGNORECASE)
    return answer
