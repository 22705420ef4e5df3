"""What an answer says beside the expected value, read against the facts: a period or a measure
other than the fact's, a claim no fact makes, names of other facts, an aside after a dash, the
fact's earlier value, a figure about something else. The exact grader (`exact.py`) turns each
into a sure 0 or an "I can't be sure" — these functions only find them, and say what they found.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from itertools import pairwise

from persona.benchmark.model import Question
from persona.grading.cues import cues as _cues
from persona.grading.said_otherwise import TITLES
from persona.grading.variants import one_name_in_two_scripts
from persona.languages import grading_words, words_pattern
from persona.morphology import lemmas, parses
from persona.terms import LIST_SPLIT, Quantity, extract_quantities, key_terms, term_found, terms_match

MARKUP = re.compile(r"[*_`#>|]+|\s+[-•]\s+")
SENTENCES = re.compile(r"(?<=[.!?…])\s+|\n+")
# a capitalised word inside a sentence (after a letter, digit, comma or dash — not after a full
# stop, an emoji or "…") or in quotes («Восход»): a name or a place
NAME = re.compile(r"(?:(?<=[\w,;—–\-(«\"'])\s+|(?<=[«“\"]))(?!I\b)([A-ZА-ЯЁ][a-zа-яё]+)")
CLAUSE = re.compile(r"[.;!?()\n«»]|,\s|\s[—–-]\s|\s(?:а|но|but|however|whereas)\s", re.IGNORECASE)


# "1. 3 November\n2. 10 November": a numbered list's markers, no values of the answer
_LIST_NUMBER = re.compile(r"(?m)^([ \t]*)\d{1,2}[.)][ \t]+(?=\S)")


def list_numbers_out(answer: str) -> str:
    """`answer` with a numbered list's markers as bullets: two numbered lines at least, so a
    lone "2. " answering a count stays a figure."""
    return _LIST_NUMBER.sub(r"\1- ", answer) if len(_LIST_NUMBER.findall(answer)) >= 2 else answer


def _folded(word: str) -> str:
    """A word as key terms hold it: lower case, ё as е."""
    return word.lower().replace("ё", "е")


def _named(table: dict[str, re.Pattern[str]], text: str) -> set[str]:
    """Which of a cue table's entries (periods, measures) `text` names."""
    return {name for name, pattern in table.items() if pattern.search(text)}


def _periods(text: str, *, answer: bool = False) -> set[str]:
    """The periods `text` names; "every month" in an answer only straight after a figure
    ("£32 every month", not "£32, and it renews every year")."""
    found = _named(_cues().periods, text)
    for name, pattern in _cues().recurring.items():
        for hit in pattern.finditer(text):
            if not answer or _AFTER_FIGURE.search(text[: hit.start()]):
                found.add(name)
    return found


# a figure, then at most two words ("£32 paid "), right before the period phrase
_AFTER_FIGURE = re.compile(r"\d(?:[.,]\d+)?[^\W\d]*\s*[€£$₽%]?\.?\s*(?:[^\W\d]+\.?\s+){0,2}$")


def _plain_lines(answer: str) -> str:
    """The answer without markdown marks, each line stripped: where a name is read as one."""
    return "\n".join(line.strip() for line in MARKUP.sub(" ", answer).splitlines())


def other_period(question: Question, answer: str) -> str | None:
    """ "£1,210 a week" when the fact (`question.evidence`) or the question says "a month": the
    figure with another period is wrong."""
    told = _periods(question.text) or set().union(*(_periods(t) for t in question.evidence))
    given = _periods(answer, answer=True)
    if told and given and not given & told:
        return f"gives the figure per {', '.join(sorted(given))}; it is per {', '.join(sorted(told))}"
    return None


def other_measure(question: Question, answer: str) -> str | None:
    """ "72 square feet" when the question or the fact counts square metres, «8 гектаров» for
    «8 соток»: the figure in another measure is wrong (periods have their own rule)."""
    measures = _cues().measures
    told = _named(measures, question.text) or set().union(*(_named(measures, t) for t in question.evidence))
    given = _named(measures, answer)
    if told and given and not given & told:
        return f"gives the figure in {', '.join(sorted(given))}; it is in {', '.join(sorted(told))}"
    return None


_ASIDE = re.compile(r"\s[—–]\s|\s-\s")


def aside_claim(question: Question, answer: str) -> list[str]:
    """ "Biscuit — a ginger tom, 9 years old": what a short answer adds after a dash, in words
    that no fact about the subject holds, is a claim the exact grader can't check."""
    if not question.evidence:
        return []
    plain = MARKUP.sub(" ", answer).strip()
    first = SENTENCES.split(plain)[0]
    dash = _ASIDE.search(first)
    if dash is None or len(first[: dash.start()].split()) > 6:
        return []
    tail = first[dash.end() :]
    if _cues().rejected.search(tail) or _cues().past.search(tail):
        return []  # "**£95** — not the £90 he first quoted": history, which has its own rules
    if _remark(tail):
        return []  # "QX7F2L — keep it somewhere safe": advice on the value, no claim about it
    own = key_terms(" ".join((*question.evidence, *question.near, *question.superseded, question.text)))
    return [
        w
        for w in dict.fromkeys(key_terms(tail))
        if len(w) > 2 and w not in TITLES and not any(terms_match(w, t) for t in own)
    ]


def _remark(tail: str) -> bool:
    """An aside that only advises on keeping the value or names its source (the languages'
    `remarks`), with no figure, name or month in it — nothing it could claim of the value."""
    plain = tail.replace("’", "'")
    clauses = [c.strip() for c in re.split(r"[,;]", plain) if c.strip(" .!?")]
    clauses = [c for c in clauses if len(c.split()) > 1] or clauses  # ", please" is no clause
    # each clause a remark, opening with one: "— keep it handy, just don't post it" — not "— in
    # a state clinic, great!" (a claim, then a cheer)
    opens = all(
        (m := _cues().remarks.search(c)) is not None and m.start() <= len(" ".join(c.split()[:3])) for c in clauses
    )
    return bool(clauses) and opens and not (
        re.search(r"\d", plain)
        or re.search(r"(?<!^)(?<![.!?]\s)\b[A-ZА-ЯЁ][a-zа-яё]+", plain.strip())
        or set(re.findall(r"\w+", plain.lower())) & _cues().month_words
        or _cues().current.search(plain)
        or re.search(r"(?i)\b(?:but|though|actually|wait|но|хотя|впрочем)\b", plain)
    )


def earlier_words(question: Question, answer: str) -> list[str]:
    """Words only an earlier text of the fact held ("coffee" when it is green tea now), said in
    a clause no past word marks: the old value beside the new, and the answer may mean either."""
    if not question.superseded:
        return []
    now = key_terms(" ".join((*question.evidence, question.text)))
    before = [
        t
        for t in dict.fromkeys(key_terms(" ".join(question.superseded)))
        if not any(terms_match(t, n) for n in now)
    ]
    cues = _cues()
    out: list[str] = []
    for clause in (c for c in CLAUSE.split(answer) if c and c.strip()):
        if cues.past.search(clause) or cues.rejected.search(clause):
            continue
        out += [w for w in key_terms(clause) if any(terms_match(w, b) for b in before) and w not in out]
    return out


def other_subject(question: Question, answer: str) -> str | None:
    """ "52:30 — that's your 8 km time" asked for the 10 km: a measured figure of the question
    (a distance, a weight) said with another value is an answer about something else."""
    asked = [q for q in extract_quantities(question.text) if q.unit]
    said = [a for a in extract_quantities(answer) if a.unit and any(a.unit == q.unit for q in asked)]
    if asked and said and not any(a.matches(q) for a in said for q in asked):
        return f"speaks of {shown(said[0])} {said[0].unit}, the question of {shown(asked[0])} {asked[0].unit}"
    return None


def unsaid_period(question: Question, answer: str) -> str | None:
    """ "£95 an hour" for what the facts give as one charge: a period nobody named may make
    the figure wrong — not sure (only when the facts are known)."""
    if not question.evidence or _periods(question.text) or any(_periods(t) for t in question.evidence):
        return None
    given = _periods(answer, answer=True)
    return f"gives the figure per {', '.join(sorted(given))}, which the facts don't say" if given else None


def claims_not_told(question: Question, wanted: list[Quantity], answer: str) -> list[str]:
    """Values, months and names in the answer that neither the facts holding the answer nor
    the question hold, and no rival of the expected value (rivals have their own rules): an
    extra claim ("LH1173, on 2 July", "£150 for your train tickets to Birmingham"), right or
    wrong — the exact grader can't tell which."""
    if not question.evidence:
        return []
    told_text = " ".join((*question.known, *question.evidence, question.text))
    told = extract_quantities(told_text)
    told_terms = key_terms(told_text)
    expected_chars = re.sub(r"\W", "", question.expected)
    extra = [
        shown(a)
        for a in extract_quantities(answer)
        if not any(a.matches(t) for t in (*told, *wanted))
        and not (wanted and rivals(wanted, a))
        and a.value != 1.0  # "one of them"
        and not (isinstance(a.value, float) and f"{a.value:g}" in expected_chars)  # "BA 362"
    ]
    plain = _plain_lines(answer)
    words = {_folded(w) for w in NAME.findall(plain) if key_terms(w)} | (
        set(re.findall(r"\w+", answer.lower())) & _cues().month_words
    )
    told_names = set(re.findall(r"[A-ZА-ЯЁ][a-zа-яё]+", told_text))
    extra += sorted(
        w
        for w in words - TITLES
        if not any(terms_match(t, w) for t in told_terms)
        and not any(one_name_in_two_scripts(w.capitalize(), n) for n in told_names)  # «Чиди» for Chidi
    )
    # a name the facts hold elsewhere, said in the very sentence of the value ("Dr Haddad, at
    # the practice on Wellington Street" when the office is there): a claim the facts don't make
    near_terms = key_terms(" ".join((*question.near, *question.evidence, question.text)))
    near_names = set(re.findall(r"[A-ZА-ЯЁ][a-zа-яё]+", " ".join((*question.near, *question.evidence, question.text))))
    for sentence in SENTENCES.split(plain):
        if not any(q.matches(w) for q in extract_quantities(sentence) for w in wanted) and not (
            not wanted and set(key_terms(question.expected)) & set(key_terms(sentence))
        ):
            continue
        names = {_folded(w) for w in NAME.findall(sentence) if key_terms(w)} - TITLES
        extra += sorted(
            w
            for w in names
            if w not in extra
            and not any(terms_match(t, w) for t in near_terms)
            and not any(one_name_in_two_scripts(w.capitalize(), n) for n in near_names)
        )
    return extra


# a word of the question held by at most this many facts names what it is about ("grandmother",
# "broadband"); a commoner one ("name", "live") says nothing about which facts it means
_SUBJECT_FACTS = 5
_DISTINCT_FACTS = 2  # a word held by more facts is the language of many ("lives", "every")


def other_facts_mixed_in(question: Question, answer: str) -> list[str]:
    """Words and values of the answer that only facts about something else hold: "88 — she
    lives with your uncle Obinna in Lagos" when the uncle's fact holds Lagos and the
    grandmother's does not. A right extra detail comes from the facts the question is about —
    those holding the answer, their section, and any fact sharing a word of the question that
    few facts share; one taken from elsewhere is a claim the facts may not make."""
    if not question.evidence:
        return []
    facts = list(question.known)
    terms_of = [set(key_terms(f)) for f in facts]
    asked = key_terms(question.text)
    held_by = Counter(t for terms in terms_of for t in terms)
    about = set(question.evidence) | set(question.near)
    about |= {
        f
        for f, terms in zip(facts, terms_of, strict=True)
        if any(held_by[t] <= _SUBJECT_FACTS and any(terms_match(t, a) for a in asked) for t in terms)
    }
    own = " ".join((*about, *question.superseded, question.text, question.expected))
    own_terms, own_values = key_terms(own), extract_quantities(own)
    elsewhere = " ".join(f for f in facts if f not in about)
    other_terms, other_values = set(key_terms(elsewhere)), extract_quantities(elsewhere)
    plain = _plain_lines(answer)
    names = [_folded(w) for w in NAME.findall(plain) if key_terms(w)]
    mixed = [
        w
        for w in dict.fromkeys(names)
        if not any(terms_match(w, t) for t in own_terms)
        and 0 < sum(n for t, n in held_by.items() if terms_match(w, t)) <= _DISTINCT_FACTS
        and any(terms_match(w, t) for t in other_terms)
    ]
    expected_chars = re.sub(r"\W", "", question.expected)
    mixed += [
        shown(a)
        for a in extract_quantities(answer)
        if not any(a.matches(t) for t in own_values)
        and any(a.matches(t) for t in other_values)
        and not (isinstance(a.value, float) and f"{a.value:g}" in expected_chars)  # "Q X 7 F 2 L"
    ]
    return mixed


def names_not_listed(question: Question, items: list[str], answer: str) -> list[str]:
    """Names joined to an expected item as items of one list that are no item of the expected
    list and not of the question ("Вера и Наташа" for «Вера и Миша»); a name said elsewhere in
    the answer ("Chidi and Sophie's twins are Ada and Obi") is left to the other rules."""
    own = key_terms(" ".join((*items, question.text)))
    plain = MARKUP.sub(" ", answer)
    words = [w for w in _LIST_WORD.finditer(plain) if not _LIST_JOINER.fullmatch(f" {w.group(0)} ")]
    out: list[str] = []
    for a, b in pairwise(words):
        if not _LIST_JOINER.fullmatch(plain[a.end() : b.start()]):
            continue
        for this, other in ((a, b), (b, a)):
            name, item, term = this.group(0), _folded(other.group(0)), _folded(this.group(0))
            if (
                name[0].isupper()
                and key_terms(name)
                and not any(term_found(t, term) for t in own)  # "Obinna" is no "Obi"
                and any(terms_match(item, t) for t in own)
                and term not in out
            ):
                out.append(term)
    return out


_LIST_WORD = re.compile(r"[^\W\d_]+")
_LIST_JOINER = re.compile(
    rf"\s*[,&;]?\s*(?:{words_pattern('and')}|{words_pattern('or')})\s+|\s*[,&;]\s*", re.IGNORECASE
)


def out_of_order(items: list[str], answer: str) -> bool:
    """Whether the answer gives the expected figures in another order than the expected answer
    lists them ("Originally £1,195, after the first change £1,150" for "£1,150, £1,195"): on a
    history question, which value was when takes reading. Only figures of three digits or more
    are placed; with any other item this says False."""
    places = []
    for item in items:
        digits = re.sub(r"\D", "", item)
        if len(digits) < 3:
            return False
        m = re.search(r"(?<!\d)" + r"[\s,.\u00a0\u202f]?".join(digits) + r"(?!\d)", answer)
        if m is None:
            return False
        places.append(m.start())
    return places != sorted(places)


def after_first_sentence(answer: str) -> str:
    """What follows the first sentence of an answer (where a "you never told me" is usually
    followed by anything it goes on to say)."""
    _, _, tail = answer.partition(".")
    return tail if tail.strip() else ""


def shown(q: Quantity) -> str:
    return f"{q.value:g}" if isinstance(q.value, float) else q.value


def same_kind(wanted: list[Quantity], q: Quantity) -> bool:
    """A value that could stand for the expected one: a time for a time, a number for a number
    with no other unit."""
    return any(
        isinstance(w.value, str) == isinstance(q.value, str)
        and (w.unit is None or q.unit is None or w.unit == q.unit)
        for w in wanted
    )


def rivals(wanted: list[Quantity], q: Quantity) -> bool:
    """Another value that competes with the expected one: of its kind and of its size (within
    ×10: "8150" for "8320", "6400" for "4000" — not "two bedrooms" beside "72 square metres")."""
    if not same_kind(wanted, q) or any(w.matches(q) for w in wanted):
        return False
    if isinstance(q.value, str):
        return True
    return any(
        isinstance(w.value, float) and w.value and q.value and 0.1 <= abs(q.value / w.value) <= 10
        for w in wanted
    )


@functools.cache
def _month_lemmas() -> frozenset[str]:
    return frozenset(lemma for w in _cues().month_words for lemma in lemmas(w))


def other_month(items: list[str], answer: str) -> str | None:
    """A month the answer names beside the expected one («В сентябре, а в ноябре — налог на
    дачу.» for the conference in November): the expected month may belong to another event.
    Months are compared by their dictionary forms (pymorphy3: «ноябре» is «ноябрь»); "may"
    counts only capitalised ("you may" is no month)."""
    months = _month_lemmas()

    def named(text: str) -> set[str]:
        words = [w for w in re.findall(r"[^\W\d_]+", text) if w != "may"]
        return {lemma for w in words for lemma in lemmas(w) if lemma in months}

    asked = named(" ".join(items))
    other = named(answer) - asked if asked else set()
    return f"another month beside the expected one ({', '.join(sorted(other))})" if other else None


def distance_told(question: Question, items: list[str], answer: str) -> str | None:
    """ "In two weeks, on the 30th" for "30 September": how far off the date is, said beside it
    where the question asks no count — right only by a calendar (the exam day), which the exact
    grader hasn't got. A doubt, never a verdict."""
    months = _cues().month_words
    if len(items) != 1 or not set(re.findall(r"\w+", items[0].lower())) & months:
        return None
    if (span := _cues().relative_span.search(answer)) and not _cues().relative_span.search(question.text):
        return f"says how far off the date is ({span.group(0)!r}): that takes a calendar"
    return None


def listed_otherwise(question: Question, items: list[str], found: list[str], answer: str) -> str | None:
    """A list answer with an item that is none of the expected ones: a name joined to one
    (`names_not_listed`), or, with as many items as expected and one missing, a short item in
    its place («Граф, ротвейлер.» for «Граф, немецкая овчарка»: a wrong item costs the half).
    Which it is — an extra item or a wrong one — takes reading: a doubt."""
    if names := names_not_listed(question, items, answer):
        return f"names {', '.join(names[:3])} beside the expected ones: an extra item or a wrong one"
    first = MARKUP.sub(" ", answer).strip().splitlines()[0] if answer.strip() else ""
    parts = [p.strip(" .!") for p in LIST_SPLIT.split(first) if p.strip(" .!")]
    if len(found) < len(items) == len(parts) and all(len(p.split()) <= 3 for p in parts):
        wanted = [key_terms(i) for i in items]
        alien = [
            p
            for p in parts
            if not any(any(term_found(t, a) for t in w for a in key_terms(p)) for w in wanted) and not _context(p)
        ]
        if alien:
            return f"gives {alien[0]!r} where an expected item is missing: a wrong item or another word for it"
    return None


# "in 2020", "next Thursday", «на лыжах», «он хоккеист»: a part that tells when, how or about whom
_CONTEXT_OPENERS = frozenset(grading_words("context_openers"))


def _context(part: str) -> bool:
    """A list part that is context, not an item: a figure in it, or opened by a preposition, a
    pronoun or a time word (English by list, Russian by pymorphy3's part of speech)."""
    words = part.split()
    if re.search(r"\d", part) or not words:
        return True
    first = words[0].lower()
    if first.isascii():
        return first in _CONTEXT_OPENERS
    return any({"PREP", "NPRO", "CONJ", "PRCL", "ADVB"} & p.grammemes for p in parses(first)[:1])
