"""Codes and abbreviations written otherwise: the same code in the other script, an
abbreviation found inside a longer word, the letters of a code written out.

A code must match exactly — one character off is another booking (`persona.terms.
extract_identifiers`). But "Р7723914" typed with a Cyrillic Р *is* P7723914, and «054G» is
«054Г» romanised: `code_forms` gives the forms a code is read in, so those match. What can't be
read surely is left to a judge, never failed: "British Airways 362" for BA362, «Горьковский
автозавод» for ГАЗ (`code_said_otherwise`, `acronym_written_loosely`). And «Газпром» is no «ГАЗ»:
an abbreviation is found only as a word of its own (`acronym_inside_word`).
"""

from __future__ import annotations

import re
from functools import lru_cache

import iuliia

from persona.terms import extract_identifiers

# Cyrillic capitals drawn as Latin ones (Unicode's confusables): a code typed in the wrong layout
_LOOKALIKE = str.maketrans("АВЕКМНОРСТУХ", "ABEKMHOPCTYX")
_WORD = re.compile(r"[^\W\d_]+")
DIGIT_GROUPS = re.compile(r"(?<![\w.,])\d+(?:[ -]\d+)*(?![\w.,]\d)")  # "75 123 45 67"
ACRONYM = re.compile(r"(?<!\w)[A-ZА-ЯЁ]{2,5}(?!\w)")


@lru_cache(maxsize=1 << 12)
def code_forms(code: str) -> frozenset[str]:
    """The forms one code may be written in: as given, with Cyrillic look-alikes read as Latin
    letters (Р7723914), and romanised (054Г → 054G, КЗН7781 → KZN7781)."""
    return frozenset({code, code.translate(_LOOKALIKE), iuliia.WIKIPEDIA.translate(code).upper()})


def same_codes(wanted: set[str], said: set[str]) -> bool:
    """Every wanted code is among those said, in any of its forms."""
    if wanted <= said:
        return True
    said_forms = {f for s in said for f in code_forms(s)}
    return all(code_forms(w) & said_forms for w in wanted)


def code_said_otherwise(items: list[str], answer: str) -> str | None:
    """A missing code whose number the answer gives with other letters or none ("British
    Airways 362", "Lufthansa 1173" for BA362, LH1173): the carrier written out, or another
    code — which takes reading."""
    for item in items:
        for code in extract_identifiers(item):
            if not (parts := re.fullmatch(r"([^\W\d_]{1,3})(\d{2,})", code)):
                continue
            letters, number = parts.groups()
            # one of the three words before the number begins with the code's first letter ("British
            # Airways 362", "British Airways flight 362")
            for m in re.finditer(rf"((?:[^\W\d_]+\s+){{1,3}}){number}(?![\w]|[.,]\d)", answer):
                initials = "".join(w[0] for w in m.group(1).split()).upper()
                if any(form[0] in initials for form in code_forms(letters)):
                    return f"the number of {code!r} after {m.group(1).strip()!r}: its letters written out?"
    return None


def acronym_inside_word(item: str, answer: str) -> bool:
    """An expected abbreviation ("ГАЗ") the answer holds only inside a longer word («Газпроме»):
    another name. A short case ending is the abbreviation («на ГАЗе», «ГАЗа»)."""
    acronyms = ACRONYM.findall(item)
    if not acronyms or len(_WORD.findall(item)) != 1:
        return False
    acronym = acronyms[0]
    if re.search(rf"(?<!\w){re.escape(acronym)}", answer):
        return False  # in capitals, also inside a word built on it («ГАЗовский», «ГАЗе»)
    own = re.compile(rf"(?<!\w){re.escape(acronym)}(?:[а-яёa-z]{{1,2}})?(?!\w)", re.IGNORECASE)
    return not own.search(answer) and re.search(rf"(?<!\w){re.escape(acronym)}", answer, re.IGNORECASE) is not None


def acronym_written_loosely(items: list[str], answer: str) -> str | None:
    """«Горьковском автозаводе» for «ГАЗ»: words whose first letters begin the abbreviation,
    the rest of its letters inside the last word (a compound: авто-завод). Not surely it."""
    words = _WORD.findall(answer)
    for item in items:
        for acronym in ACRONYM.findall(item):
            letters = acronym.lower()
            for n in range(2, len(letters)):
                for i in range(len(words) - n + 1):
                    run = [w.lower() for w in words[i : i + n]]
                    if "".join(w[0] for w in run) != letters[:n]:
                        continue
                    rest = iter(run[-1][1:])
                    if all(c in rest for c in letters[n:]) and words[i][0].isupper():
                        return f"{' '.join(words[i : i + n])!r} may be {acronym!r} written out"
    return None


def across_scripts(items: list[str], answer: str) -> str | None:
    """A code found only in another script's form: Cyrillic В, Р, Н, С, Х, У read two ways
    (look-alike or romanised), so the match is likely, not sure."""
    said = extract_identifiers(answer)
    for item in items:
        wanted = extract_identifiers(item)
        if wanted and not wanted <= said and same_codes(wanted, said):
            return f"{sorted(wanted)[0]!r} found only written in the other script"
    return None


_MIXED_CODE = re.compile(r"(?<!\w)(?=[^\W_]*\d)(?=[^\W_]*[^\W\d_])[^\W_]+(?!\w)")  # "32K", "6A", "054Г"


def code_partly_there(items: list[str], answer: str) -> str | None:
    """Why a miss may be the code said another way: its digits and its letters apart ("Row 32,
    seat K" for 32K). (Some words of a longer answer are no such sign: on the tuning sets
    they were a wrong answer 28 times to one paraphrase.)"""
    answer_ids = {re.sub(r"\D", "", m.group(0)) for m in DIGIT_GROUPS.finditer(answer)}
    answer_words = set(re.findall(r"\w+", answer.lower()))
    for item in items:
        for code in extract_identifiers(item) | set(_MIXED_CODE.findall(item)):
            digits, letters = re.sub(r"\D", "", code), re.sub(r"[\d\W]", "", code).lower()
            if digits and digits in answer_ids and letters in answer_words:
                return f"holds the digits of {code!r}, not the code as written"
    return None
