"""The expected answer's words as an answer may spell them: an acronym for its words («ГАЗ» for
«Горьковский автомобильный завод», and back), the other script ("Bologna" for «Болонья»,
«Зен» for "Zen"), a one-letter variant of a long word ("pescetarian" for "pescatarian").

`in_expected_spelling` writes such words of the answer as the expected answer does, so the
exact grader's matching stays one rule. What a caller may rely on: only words that stand for a
word (or the words) of the expected answer are rewritten; everything else of the answer is left
as it was, so the rules that read what the answer says beside the value still see it.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from itertools import pairwise

from persona.grading.cues import cues
from persona.terms import terms_match

_LATIN_FOR = dict(
    zip(
        "абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
        "a b v g d e e zh z i y k l m n o p r s t u f kh ts ch sh shch - y - e yu ya".split(),
        strict=True,
    )
)
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_ACRONYM = re.compile(r"(?<!\w)[A-ZА-ЯЁ]{2,5}(?!\w)")
_SIMILAR = 0.8  # "bologna" / "bolonya" is 0.86; "boston" / "bolonya" 0.46
_LONG = 7  # a one-letter slip is a variant only in a word this long ("pescetarian"), not "cat"/"car"


def _latin(word: str) -> str:
    return "".join(_LATIN_FOR.get(c, c) for c in word.lower()).replace("-", "")


def _cyrillic(word: str) -> bool:
    return any("а" <= c <= "я" or c == "ё" for c in word.lower())


def _other_script(a: str, b: str) -> bool:
    """`a` and `b` are one name in two scripts: alike once both are written in Latin letters
    ("c" read as "k": "Camino" is «Камино»)."""
    if _cyrillic(a) == _cyrillic(b) or min(len(a), len(b)) < 2:
        return False
    la, lb = _latin(a).replace("c", "k"), _latin(b).replace("c", "k")
    return la[0] == lb[0] and (
        la == lb or (min(len(la), len(lb)) >= 4 and SequenceMatcher(None, la, lb).ratio() >= _SIMILAR)
    )


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

    def respell(m: re.Match[str]) -> str:
        word = m.group(0)
        for w in wanted:
            if w.lower() == word.lower():
                return word
        full = short_forms.get(word.lower().replace("ё", "е"))
        if full and any(terms_match(full, w.lower()) for w in wanted):
            return full  # "Пн" for «понедельникам», "Sept" for "September"
        for w in wanted:
            if (len(w) >= 3 or _cyrillic(w) != _cyrillic(word)) and (
                _other_script(w, word) or _one_slip(w, word)
            ):
                return w
        return word

    return _WORD.sub(respell, answer)


_INITIAL = re.compile(r"(?<!\w)([A-ZА-ЯЁ])\.")


def _initials_written_out(wanted: list[str], answer: str) -> str:
    """ "Шубина Е. В." for «Елена Викторовна Шубина», "E. V. Shubina": initials beside a name
    of the expected answer stand for its other names with those first letters."""
    names = [w for w in wanted if w[:1].isupper() and len(w) > 1]
    said = {w.lower() for w in _WORD.findall(answer)}
    if not any(n.lower() in said for n in names if len(n) > 3):  # a surname, not "Dr"
        return answer
    left = [n for n in names if n.lower() not in said]

    def expand(m: re.Match[str]) -> str:
        for n in left:
            if n[0] == m.group(1):
                left.remove(n)
                return n
        return m.group(0)

    return _INITIAL.sub(expand, answer)


def _acronyms_written_out(expected: str, wanted: list[str], answer: str) -> str:
    """ "Горьковском автомобильном заводе" → «ГАЗ» when the expected answer says «ГАЗ»; «ГАЗ»
    → «Горьковский автомобильный завод» when it says the words."""
    for acronym in dict.fromkeys(_ACRONYM.findall(expected)):
        words = list(_WORD.finditer(answer))
        n = len(acronym)
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            joined = all(not answer[x.end() : y.start()].strip() for x, y in pairwise(run))
            initials = "".join(w.group(0)[0] for w in run).lower()
            if joined and initials == acronym.lower() and not any(w.group(0).isupper() for w in run):
                answer = answer[: run[0].start()] + acronym + answer[run[-1].end() :]
                break
    for m in list(_ACRONYM.finditer(answer))[::-1]:
        acronym = m.group(0)
        n = len(acronym)
        for i in range(len(wanted) - n + 1):
            spelled = wanted[i : i + n]
            if "".join(w[0] for w in spelled).lower() == acronym.lower() and not any(
                w.isupper() for w in spelled
            ):
                answer = answer[: m.start()] + " ".join(spelled) + answer[m.end() :]
                break
    return answer
