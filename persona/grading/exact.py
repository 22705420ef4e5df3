"""Grading an answer against the expected one: the `Grader` protocol and the exact grader.

Scores are 0–10 (MarathonMemBench): a single expected value scores 0 or 10, a list scores in
proportion to the items found. The exact grader works offline and is deliberately strict:
the specific value must be in the answer (numbers compared as numbers, units checked when
both sides name one; text by normalised key terms). It never raises on odd text and always
says why it gave a score; the LLM judge (a later grader) re-grades what it cannot.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from persona.benchmark.model import DELETED_MARKERS, Question
from persona.grading.beside import (
    CLAUSE,
    MARKUP,
    SENTENCES,
    aside_claim,
    claims_not_told,
    distance_told,
    earlier_words,
    list_numbers_out,
    listed_otherwise,
    other_facts_mixed_in,
    other_measure,
    other_month,
    other_period,
    other_subject,
    out_of_order,
    rivals,
    same_kind,
    shown,
    unsaid_period,
)
from persona.grading.codes import (
    DIGIT_GROUPS,
    acronym_inside_word,
    acronym_written_loosely,
    across_scripts,
    code_partly_there,
    code_said_otherwise,
    same_codes,
)
from persona.grading.contrasts import contradicted
from persona.grading.cues import cues as _cues
from persona.grading.grade import Grade
from persona.grading.name_parts import another_name_beside, names_by_part, place_written_out
from persona.grading.never_told_reading import NeverToldReading, read_never_told
from persona.grading.relations import relation_doubt
from persona.grading.said_otherwise import (
    TITLES,
    in_the_facts_words,
    looks_like,
    part_of_a_name,
    said_as_another,
    said_otherwise,
    short_year,
    weekday_for_date,
    words_without_figures,
)
from persona.grading.tagged import grade_abstain, grade_deleted
from persona.grading.thesaurus import synonym_doubt
from persona.grading.variants import (
    NUMERIC_DATE,
    begins_in_other_script,
    days_as_expected,
    in_expected_forms,
    in_expected_spelling,
    maybe_other_script,
)
from persona.languages import words_pattern
from persona.morphology import same_lemma
from persona.numerals import digits_for_words
from persona.outcome import is_full
from persona.terms import (
    IDENTIFIER,
    LIST_SPLIT,
    UNIT_WORDS,
    Quantity,
    extract_identifiers,
    extract_quantities,
    key_terms,
    split_items,
    term_found,
)


class Grader(Protocol):
    """Question, expected answer, agent's answer → score with a reason. Must never raise."""

    def grade(self, question: Question, expected: str, answer: str) -> Grade: ...


# -- the grader --------------------------------------------------------------------------


class ExactGrader:
    """Offline grading by numbers and key terms; strict, explainable, never raises.
    `superseded_rule`: an answer naming the expected value only as an old one scores 0 (off
    for evidence checks, which ask only whether a value is present in a text)."""

    def __init__(self, superseded_rule: bool = True) -> None:
        self.superseded_rule = superseded_rule

    def grade(self, question: Question, expected: str, answer: str) -> Grade:
        try:
            reading = read_never_told(answer, question.text)
            grade = self._grade(question, expected, answer, reading)
        except Exception as exc:  # odd text must never crash a marathon
            return Grade(0.0, f"exact grader could not read the answer ({type(exc).__name__}); scored 0")
        if question.abstain or question.deleted or grade.correct:
            return grade  # the retry rule reads no claim there
        if grade.score > 0 and reading.claim:  # part of the answer is there: no sure claim
            return replace(grade, never_told_certain=False, never_told_reason="a never-told claim beside part of the answer")
        return replace(grade, never_told_certain=reading.certain, never_told_reason=reading.reason)

    def _grade(self, question: Question, expected: str, answer: str, reading: NeverToldReading) -> Grade:
        never = bool(reading.claim)
        answer = list_numbers_out(answer)
        if question.abstain:
            return grade_abstain(question, answer, never)
        if question.deleted:
            return grade_deleted(question, answer, reading)
        if not answer.strip():
            return Grade(0.0, "empty answer", never_told=never)
        items = split_items(expected)
        answer = in_expected_spelling(expected, in_expected_forms(expected, answer))
        answer = days_as_expected(expected, answer, question.superseded)
        answer = place_written_out(items, answer)  # «в Нижнем»: the place as its people name it
        answer_qty = extract_quantities(answer)
        answer_terms = key_terms(answer)
        answer_ids = extract_identifiers(answer) | {
            re.sub(r"\D", "", m.group(0)) for m in DIGIT_GROUPS.finditer(answer)
        }
        found: list[str] = []
        missing: list[str] = []
        partial: list[str] = []  # found by part of its name only: never certain
        for item in items:
            whole = _item_found(item, answer_qty, answer_terms, answer_ids) and not acronym_inside_word(item, answer)
            short = not whole and names_by_part(question.text, item, answer, items)
            if short:
                partial.append(item)
            (found if whole or short else missing).append(item)
        if found and (
            wrong := other_period(question, answer)
            or other_measure(question, answer)
            or next((w for i in found if (w := another_name_beside(question.text, i, answer, items))), None)
        ):
            return Grade(0.0, wrong, never_told=never)
        if (
            self.superseded_rule
            and len(items) == 1
            and found
            and _given_as_old(items[0], answer, question.text)
        ):
            return Grade(
                0.0, f"gives {items[0]!r} as an old value, another as the current one", never_told=never
            )
        score = round(10.0 * len(found) / len(items), 1)
        doubt = _doubt(question, items, found, answer, never) or (
            f"only part of the name {partial[0]!r}" if partial else None
        )
        if doubt:
            return Grade(score, f"not sure: {doubt}", never_told=never and not is_full(score), certain=False)
        if not missing:
            reason = "all expected found" if len(items) > 1 else f"found {items[0]!r}"
        elif not found:
            reason = f"missing {'; '.join(repr(m) for m in missing)}"
            if never:
                reason += " (agent said it was never told)"
        else:
            reason = f"{len(found)} of {len(items)} items; missing {'; '.join(repr(m) for m in missing)}"
        return Grade(score, reason, never_told=never and not is_full(score))


_DIGIT = re.compile(r"\d")  # a number beside "you don't have one" would be an invented answer
_AND = re.compile(rf"\s+(?:{words_pattern('and')})\s+", re.IGNORECASE)
_ALTERNATIVE = re.compile(rf"(?<!\w)(?:{words_pattern('or')})(?!\w)", re.IGNORECASE)


def _doubt(question: Question, items: list[str], found: list[str], answer: str, never: bool) -> str | None:
    """Why the exact grader can't be sure of its score, or None. Being sure must mean being
    right: a value merely present is not a value given as the answer."""
    if "rule" in question.tags:
        return "a rule question: whether the reply follows the rule is an action, not a value"
    if "conflict" in question.tags and found:
        return "a conflict: whether it is told as still open takes reading, not matching"
    cues = _cues()
    if not found:
        wanted = [w for item in items for w in extract_quantities(item)]
        given = [a for a in extract_quantities(answer) if same_kind(wanted, a)]
        # only when something in it looks like a value we could not read ("Noted." has none: wrong)
        unread = _DIGIT.search(answer) or any(
            w in cues.month_words for w in re.findall(r"\w+", answer.lower())
        )
        if wanted and not given and not never and unread:
            return "no value of the expected kind recognised in the answer (another notation?)"
        dated = cues.months_ambiguous and any(m in items[0].lower() for m in cues.months_ambiguous.values())
        if dated and NUMERIC_DATE.search(answer):  # "03/11": 3 November or March 11 — not read, not failed
            return "a numeric date that reads two ways (day/month or month/day)"
        if never:
            return None
        return (
            code_partly_there(items, answer)
            or said_otherwise(items, answer)
            or maybe_other_script(" ".join(items), answer)
            or code_said_otherwise(items, answer)
            or acronym_written_loosely(items, answer)
            or begins_in_other_script(" ".join(items), answer)
            or words_without_figures(items, answer)
            or part_of_a_name(items, answer)
            or synonym_doubt(" ".join(items), answer)
            or in_the_facts_words(question, items, answer)
        )
    if hedged := cues.hedge.search(answer):
        return f"a hedged answer ({hedged.group(0)!r})"
    if relation := (
        relation_doubt(question.text, answer, question.expected)
        or other_month(items, answer)
        or distance_told(question, items, answer)
        or looks_like(items, answer)
        or _shortened(items, answer)
        or across_scripts(found, answer)
    ):
        return relation  # the right value, maybe in a relation or of an event the question doesn't ask
    plain = digits_for_words(MARKUP.sub(" ", answer)).strip()  # "two thousand and twelve" is one number
    first_line = plain.splitlines()[0] if plain else ""
    # a list answer is split at commas too; one value only at "and" ("penicillin and erythromycin")
    parts = [p for p in (LIST_SPLIT if len(items) > 1 else _AND).split(first_line) if p.strip(" .!")]
    if len(parts) > len(items) and all(len(p.split()) <= 3 for p in parts):
        return f"{len(parts)} items given for {len(items)} expected"
    for sentence in SENTENCES.split(answer):
        if _ALTERNATIVE.search(sentence) and any(
            _item_found(i, extract_quantities(sentence), key_terms(sentence), extract_identifiers(sentence))
            for i in found
        ):
            return "the expected value is given as one of alternatives"
    if period := unsaid_period(question, answer):
        return period
    if other := other_subject(question, answer):
        return other
    if aside := aside_claim(question, answer):
        return f"says more of it than the facts do ({', '.join(aside[:3])})"
    if question.superseded and (kept := cues.unchanged.search(MARKUP.sub(" ", answer))):
        return f"says it never changed ({kept.group(0)!r}); the fact was updated"
    if earlier := earlier_words(question, answer):
        return f"names what the fact said before ({', '.join(earlier[:3])}) beside the expected one"
    wanted = [w for item in items for w in extract_quantities(item)]
    if extra := claims_not_told(question, wanted, answer):
        return f"claims the facts don't hold ({', '.join(extra[:3])}) beside the expected one"
    missing = [i for i in items if i not in found]
    if clash := contradicted(question, answer) or said_as_another(missing, answer) or [
        d for d in (said_otherwise(missing, answer), weekday_for_date(missing, answer), short_year(missing, answer)) if d
    ]:
        if not missing:
            return f"says what the facts say otherwise ({'; '.join(clash[:2])})"
        # "Right wrist, 2020" for "left, 2020": the missing item given wrong — a wrong item costs
        # one (0), a missing one doesn't (5); which it is takes reading
        return f"a missing item may be given otherwise ({'; '.join(clash[:2])})"
    if mixed := other_facts_mixed_in(question, answer):
        return f"says things of other facts ({', '.join(mixed[:3])}) beside the expected one"
    if len(items) != 1:
        if "history" in question.tags and len(found) == len(items) and out_of_order(items, answer):
            return "the earlier values in another order than asked: which was when takes reading"
        if others := [a for a in extract_quantities(answer) if rivals(wanted, a)]:
            # "3, 10 and 14 November" for "3 November and 10 November": an extra item or a wrong one
            return f"other values of its kind ({', '.join(shown(o) for o in others[:3])}) beside the expected ones"
        return listed_otherwise(question, items, found, answer)
    wanted = extract_quantities(items[0])
    if wanted:
        same = [
            a for a in extract_quantities(answer) if any(w.matches(a) for w in wanted) or rivals(wanted, a)
        ]
        operands = _operands(answer)  # "£47 + £18 = £65": the figures it was worked out from
        expected_digits = re.sub(r"\D", "", items[0])
        others = [
            a
            for a in same
            if rivals(wanted, a)
            and not any(a.matches(o) for o in operands)
            and not (len(expected_digits) >= 6 and shown(a) in expected_digits)  # "75 123 45 67"
        ]
        same = [a for a in same if not any(a.matches(o) for o in operands)]
        history = _others_told_as_past(items[0], answer)  # "it was 8150 before", "…, not 950"
        if others and not history and _emphasised(items[0], answer):
            return None  # "**£1,210** now" beside the history, in plain type
        if others and not history:
            listed = ", ".join(shown(o) for o in others[:3])
            return f"other values of its kind ({listed}) beside the expected one"
        if same and rivals(wanted, same[-1]) and not history:
            return f"the last figure given ({shown(same[-1])}) is not the expected one"
    else:  # words: a name, a place — every part of it, or not sure
        terms = [t for t in key_terms(items[0]) if t not in UNIT_WORDS and t not in TITLES]
        answer_terms = key_terms(answer)
        hits = sum(1 for t in terms if any(term_found(t, a) for a in answer_terms))
        if terms and hits < len(terms):
            return f"only {hits} of the {len(terms)} words of {items[0]!r}"
    return None


_ARITHMETIC = re.compile(rf"\s(?:[+−–×*/-]|x|{words_pattern('arithmetic')})\s", re.IGNORECASE)
_EQUALS = re.compile(r"=")


def _operands(answer: str) -> list[Quantity]:
    """The figures on either side of "+", "−", "minus", «минус» and before "=": what a worked
    answer ("£4,000 − £2,400 = **£1,600**") computed its result from — no rival of it."""
    plain = MARKUP.sub(" ", answer)
    out: list[Quantity] = []
    for m in _ARITHMETIC.finditer(plain):
        left = extract_quantities(plain[max(0, m.start() - 16) : m.start()])
        right = extract_quantities(plain[m.end() : m.end() + 16].split("=")[0])
        if left and right:
            out += [left[-1], right[0]]
    return out


def _emphasised(item: str, answer: str) -> bool:
    """The expected value, and no other value of its kind, in bold: the answer marks it as the
    answer ("**£1,210** now — it was £1,195")."""
    bold = [m.group(1) for m in re.finditer(r"\*\*(.+?)\*\*|__(.+?)__", answer) if m.group(1)]
    wanted = extract_quantities(item)
    holding = [b for b in bold if any(w.matches(a) for a in extract_quantities(b) for w in wanted)]
    competing = [b for b in bold if any(rivals(wanted, a) for a in extract_quantities(b))]
    return bool(holding) and not competing


def _others_told_as_past(item: str, answer: str) -> bool:
    """Every other value of the expected kind sits in a clause marked as past ("it was 8150
    before"), and the expected one in a clause that is not: history beside the current value."""
    cues = _cues()
    wanted = extract_quantities(item)
    for clause in (c for c in CLAUSE.split(answer) if c and c.strip()):
        values = extract_quantities(clause)
        holds = any(any(w.matches(a) for w in wanted) for a in values)
        other = any(rivals(wanted, a) for a in values)
        if not holds and not other:
            continue
        if holds and other:
            return False  # "from 8150 to 8320" in one clause: can't tell which is meant
        if other and cues.rejected.search(clause) and not holds:
            continue  # "…, not 950"
        if other and not (cues.past.search(clause) and not cues.current.search(clause)):
            return False
        if holds and cues.past.search(clause) and not cues.current.search(clause):
            return False
    return True


def _item_found(item: str, answer_qty: list[Quantity], answer_terms: list[str], answer_ids: set[str]) -> bool:
    if _DIGITS_ONLY.fullmatch(item) and sum(c.isdigit() for c in item) >= 6:
        # a number written in groups ("75 1234567" as "75 123 45 67"): the same digits in order
        return re.sub(r"\D", "", item) in answer_ids
    wanted_ids = extract_identifiers(item)
    if not same_codes(wanted_ids, answer_ids):
        return False
    if wanted_ids:
        item = IDENTIFIER.sub(
            lambda m: "" if m.group(0).replace("-", "").upper() in wanted_ids else m.group(0), item
        )
    wanted_qty = extract_quantities(item)
    if not all(any(w.matches(a) for a in answer_qty) for w in wanted_qty):
        return False
    terms = [t for t in key_terms(item) if t not in UNIT_WORDS and t not in TITLES]
    if not terms:
        return bool(wanted_qty or wanted_ids)
    hits = sum(1 for t in terms if any(term_found(t, a) for a in answer_terms))
    needed = math.ceil(len(terms) / 2) if wanted_qty else math.ceil(len(terms) * 2 / 3)
    return hits >= needed


@functools.cache
def _calendar_words() -> frozenset[str]:
    """Months and weekdays: capitalised in English, yet shortened as no name is ("Tues", "Sept")."""
    return frozenset(_cues().month_words | set(_cues().short_forms.values()))


def _shortened(items: list[str], answer: str) -> str | None:
    """An expected English name found only shorter ("Mark" for "Marcus", "Alex" for "Alexandra",
    "Maths" for "Mathematics"): another name or a short form of it — not sure which. The same
    stem ("Marcus's") is the name itself."""
    said = key_terms(answer)
    for item in items:
        for name in {w.lower() for w in _LATIN_NAME.findall(item)} - _calendar_words():
            if name in said:
                continue
            short = [a for a in said if len(a) < len(name) and term_found(name, a) and not same_lemma(name, a)]
            if short:
                return f"{short[0]!r} is shorter than {name!r}: a short form, or another name"
    return None


_DIGITS_ONLY = re.compile(r"[\d\s-]+")
_LATIN_NAME = re.compile(r"(?<![\w'])[A-Z][a-z]+")


def _given_as_old(item: str, answer: str, question: str) -> bool:
    """Whether the answer names the expected value only as an old one ("8150 now — it was 8320
    before") while it states something else without such a word: the superseded value given
    as current. Not for a question about the past itself ("What was it before?")."""
    cues = _cues()
    if cues.past.search(question):
        return False
    clauses = [c for c in CLAUSE.split(answer) if c and c.strip()]
    holding = [
        c for c in clauses if _item_found(item, extract_quantities(c), key_terms(c), extract_identifiers(c))
    ]
    if not holding:
        wanted = extract_quantities(item)
        holding = [
            c
            for c in clauses
            if wanted and all(any(w.matches(a) for a in extract_quantities(c)) for w in wanted)
        ]
    if not holding or not all(cues.past.search(c) and not cues.current.search(c) for c in holding):
        return False
    others = [c for c in clauses if c not in holding and not cues.past.search(c)]
    wanted = extract_quantities(item)
    if wanted:  # another value of the same kind stated without a past word
        return any(not any(q.matches(w) for w in wanted) for c in others for q in extract_quantities(c))
    return any(cues.current.search(c) for c in others)  # words: something else said to be current


def with_evidence(
    question: Question,
    facts: Mapping[tuple[str, str], str],
    earlier: Mapping[tuple[str, str], list[str]] | None = None,
) -> Question:
    """`question` with `evidence` (those of the live facts' texts — by (file, fact id) — that
    hold its expected answer), `near` (the live facts of their sections), `known` (all) and
    `superseded` (the texts `earlier` gives for the facts holding it, oldest first). A
    [deleted] question gets as `superseded` the texts of the facts deleted before it: what its
    answer must not state."""
    if question.deleted:  # what was deleted before it: what the answer must not state
        gone = tuple(
            old
            for key, t in facts.items()
            if t.strip() in DELETED_MARKERS
            for old in (earlier or {}).get(key, [])
        )
        alive = tuple(t for t in facts.values() if t.strip() not in DELETED_MARKERS)
        return replace(question, superseded=gone, known=alive)
    live = {key: t for key, t in facts.items() if t.strip() not in DELETED_MARKERS}
    if question.abstain:  # what it does know, that an answer may name beside "you never told me"
        return replace(question, known=tuple(live.values()))
    if not question.expected:
        return question
    held = [key for key, t in live.items() if contains_expected(question.expected, t)]
    sections = {(file, fact_id.split(".")[0]) for file, fact_id in held}
    near = tuple(t for (file, fact_id), t in live.items() if (file, fact_id.split(".")[0]) in sections)
    history = tuple(old for key in held for old in (earlier or {}).get(key, []))
    return replace(
        question,
        evidence=tuple(live[k] for k in held),
        known=tuple(live.values()),
        near=near,
        superseded=history,
    )


@dataclass(frozen=True)
class ValueMatch:
    """Is a value in a text, by the grader's rules (numbers, names, notations)? Three-valued
    like the grader: `found` True, False, or None when the grader is not sure (an unsure match
    never decides a finding); `likely` is its best guess either way."""

    found: bool | None
    likely: bool
    reason: str


@functools.lru_cache(maxsize=1 << 14)
def value_in(text: str, expected: str) -> ValueMatch:
    """Whether `text` holds the whole of `expected` — the one primitive the grader's evidence
    checks, the diagnostic chain, the persona's claims and the traffic's evidence read a value
    in a text with. Remembered (it is pure): a report over many runs of one benchmark asks it
    the same persona message and value in every run."""
    probe = Question("evidence", "", expected, (), "", 0)
    grade = ExactGrader(superseded_rule=False).grade(probe, expected, text)
    return ValueMatch(grade.correct if grade.certain else None, grade.correct, grade.reason)


def contains_expected(expected: str, text: str) -> bool:
    """`value_in`'s best guess: does `text` hold the whole expected answer? Used to tell
    whether evidence was still in an agent's context when it was asked."""
    return value_in(text, expected).likely
