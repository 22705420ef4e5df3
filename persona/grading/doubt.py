"""The doubt stage of the exact grader: why a value found (or missing) can't be a sure verdict.
Its rules are named (persona/grading/rules.py) and tried in order; the first that speaks makes
the grade unsure and is recorded as what decided it (`Grade.decided_by`).

What a caller may rely on: `doubt` returns (rule id, reason) or None, never raises on odd text;
being sure must mean being right — a value merely present is not a value given as the answer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from persona.benchmark.model import Question
from persona.grading.beside import (
    CLAUSE,
    MARKUP,
    SENTENCES,
    aside_claim,
    claims_not_told,
    distance_told,
    earlier_words,
    listed_otherwise,
    other_facts_mixed_in,
    other_month,
    other_subject,
    out_of_order,
    rivals,
    same_kind,
    shown,
    unsaid_period,
)
from persona.grading.codes import (
    acronym_written_loosely,
    across_scripts,
    code_partly_there,
    code_said_otherwise,
)
from persona.grading.contrasts import contradicted
from persona.grading.cues import cues as _cues
from persona.grading.find import item_found
from persona.grading.relations import relation_doubt
from persona.grading.rules import rule
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
from persona.grading.thesaurus import synonym_doubt
from persona.grading.variants import NUMERIC_DATE, begins_in_other_script, maybe_other_script
from persona.languages import words_pattern
from persona.morphology import same_lemma
from persona.numerals import digits_for_words
from persona.terms import (
    LIST_SPLIT,
    UNIT_WORDS,
    Quantity,
    extract_identifiers,
    extract_quantities,
    key_terms,
    term_found,
)

PART_OF_NAME = rule("doubt.part_of_name", "doubt", "found by part of its name only")
_RULE_TAG = rule("doubt.rule_question", "doubt", "a [rule] question: following a rule is an action")
_CONFLICT_TAG = rule("doubt.conflict", "doubt", "a [conflict] question: told as open takes reading")
_UNREAD_VALUE = rule("doubt.unread_value", "doubt", "figures or months of another notation than read")
_NUMERIC_DATE = rule("doubt.numeric_date", "doubt", "a numeric date that reads two ways")
_HEDGED = rule("doubt.hedged", "doubt", "the value given with a hedge")
_MORE_ITEMS = rule("doubt.more_items", "doubt", "more items given than expected")
_ALTERNATIVES = rule("doubt.alternatives", "doubt", "the value given as one of alternatives")
_UNSAID_PERIOD = rule("doubt.unsaid_period", "doubt", "a period the facts don't say")
_OTHER_SUBJECT = rule("doubt.other_subject", "doubt", "said of another subject than asked")
_ASIDE = rule("doubt.aside_claim", "doubt", "says more of it than the facts do")
_UNCHANGED = rule("doubt.says_unchanged", "doubt", "says an updated fact never changed")
_EARLIER_WORDS = rule("doubt.earlier_words", "doubt", "names what the fact said before beside it")
_NOT_TOLD_CLAIMS = rule("doubt.claims_not_told", "doubt", "figures the facts don't hold beside it")
_CONTRADICTED = rule("doubt.contradicted", "doubt", "says what the facts say otherwise")
_MISSING_OTHERWISE = rule("doubt.missing_item_otherwise", "doubt", "a missing item may be given otherwise")
_OTHER_FACTS = rule("doubt.other_facts_mixed_in", "doubt", "says things of other facts beside it")
_OUT_OF_ORDER = rule("doubt.out_of_order", "doubt", "a history's values in another order than asked")
_RIVALS = rule("doubt.rival_values", "doubt", "other values of its kind beside the expected one")
_LISTED_OTHERWISE = rule("doubt.listed_otherwise", "doubt", "a list given otherwise than expected")
_LAST_FIGURE = rule("doubt.last_figure", "doubt", "the last figure given is not the expected one")
_SOME_WORDS = rule("doubt.some_words", "doubt", "only some words of a name or place")

# tried in order when no expected item was found: the first that speaks makes it unsure
_MISSING_DOUBTS: tuple[tuple[str, Callable[[Question, list[str], str], Any]], ...] = (
    (rule("doubt.code_partly_there", "doubt", "part of a code is there"), lambda q, i, a: code_partly_there(i, a)),
    (rule("doubt.said_otherwise", "doubt", "the value said in other words"), lambda q, i, a: said_otherwise(i, a)),
    (rule("doubt.other_script", "doubt", "maybe the value in another script"),
     lambda q, i, a: maybe_other_script(" ".join(i), a)),
    (rule("doubt.code_said_otherwise", "doubt", "a code said otherwise"), lambda q, i, a: code_said_otherwise(i, a)),
    (rule("doubt.acronym_loosely", "doubt", "an acronym written loosely"), lambda q, i, a: acronym_written_loosely(i, a)),
    (rule("doubt.begins_in_other_script", "doubt", "a word beginning as the value in another script"),
     lambda q, i, a: begins_in_other_script(" ".join(i), a)),
    (rule("doubt.words_without_figures", "doubt", "a figure said in words"), lambda q, i, a: words_without_figures(i, a)),
    (rule("doubt.part_of_a_name", "doubt", "part of a name"), lambda q, i, a: part_of_a_name(i, a)),
    (rule("doubt.synonym", "doubt", "a synonym of the value (WordNet)", ("en",)),
     lambda q, i, a: synonym_doubt(" ".join(i), a)),
    (rule("doubt.in_the_facts_words", "doubt", "the answer in the fact's own words"),
     lambda q, i, a: in_the_facts_words(q, i, a)),
)  # fmt: skip
# tried in order when the value was found: it may be in a relation, or of another event
_FOUND_DOUBTS: tuple[tuple[str, Callable[[Question, list[str], list[str], str], Any]], ...] = (
    (rule("doubt.relation", "doubt", "the value in a relation the question doesn't ask"),
     lambda q, i, f, a: relation_doubt(q.text, a, q.expected)),
    (rule("doubt.other_month", "doubt", "another month beside it"), lambda q, i, f, a: other_month(i, a)),
    (rule("doubt.distance_told", "doubt", "a distance told otherwise"), lambda q, i, f, a: distance_told(q, i, a)),
    (rule("doubt.looks_like", "doubt", "a value that only looks like it"), lambda q, i, f, a: looks_like(i, a)),
    (rule("doubt.shortened", "doubt", "the value shortened"), lambda q, i, f, a: _shortened(i, a)),
    (rule("doubt.across_scripts", "doubt", "found across scripts"), lambda q, i, f, a: across_scripts(f, a)),
)  # fmt: skip


_DIGIT = re.compile(r"\d")  # a number beside "you don't have one" would be an invented answer
_AND = re.compile(rf"\s+(?:{words_pattern('and')})\s+", re.IGNORECASE)
_ALTERNATIVE = re.compile(rf"(?<!\w)(?:{words_pattern('or')})(?!\w)", re.IGNORECASE)


def doubt(
    question: Question, items: list[str], found: list[str], answer: str, never: bool
) -> tuple[str, str] | None:
    """Why the exact grader can't be sure of its score, or None. Being sure must mean being
    right: a value merely present is not a value given as the answer."""
    if "rule" in question.tags:
        return _RULE_TAG, "a rule question: whether the reply follows the rule is an action, not a value"
    if "conflict" in question.tags:  # found or not: docs/grading.md lists it as never decided
        return _CONFLICT_TAG, "a conflict: whether it is told as still open takes reading, not matching"
    cues = _cues()
    if not found:
        wanted = [w for item in items for w in extract_quantities(item)]
        given = [a for a in extract_quantities(answer) if same_kind(wanted, a)]
        # only when something in it looks like a value we could not read ("Noted." has none: wrong)
        unread = _DIGIT.search(answer) or any(
            w in cues.month_words for w in re.findall(r"\w+", answer.lower())
        )
        if wanted and not given and not never and unread:
            return _UNREAD_VALUE, "no value of the expected kind recognised in the answer (another notation?)"
        dated = cues.months_ambiguous and any(m in items[0].lower() for m in cues.months_ambiguous.values())
        if dated and NUMERIC_DATE.search(answer):  # "03/11": 3 November or March 11 — not read, not failed
            return _NUMERIC_DATE, "a numeric date that reads two ways (day/month or month/day)"
        if never:
            return None
        return first_speaking(
            *((rule_id, partial(check, question, items, answer)) for rule_id, check in _MISSING_DOUBTS)
        )
    if hedged := cues.hedge.search(answer):
        return _HEDGED, f"a hedged answer ({hedged.group(0)!r})"
    # the right value, maybe in a relation or of an event the question doesn't ask
    tried = ((rule_id, partial(check, question, items, found, answer)) for rule_id, check in _FOUND_DOUBTS)
    if relation := first_speaking(*tried):
        return relation
    plain = digits_for_words(MARKUP.sub(" ", answer)).strip()  # "two thousand and twelve" is one number
    first_line = plain.splitlines()[0] if plain else ""
    # a list answer is split at commas too; one value only at "and" ("penicillin and erythromycin")
    parts = [p for p in (LIST_SPLIT if len(items) > 1 else _AND).split(first_line) if p.strip(" .!")]
    if len(parts) > len(items) and all(len(p.split()) <= 3 for p in parts):
        return _MORE_ITEMS, f"{len(parts)} items given for {len(items)} expected"
    for sentence in SENTENCES.split(answer):
        if _ALTERNATIVE.search(sentence) and any(
            item_found(i, extract_quantities(sentence), key_terms(sentence), extract_identifiers(sentence))
            for i in found
        ):
            return _ALTERNATIVES, "the expected value is given as one of alternatives"
    if period := unsaid_period(question, answer):
        return _UNSAID_PERIOD, period
    if other := other_subject(question, answer):
        return _OTHER_SUBJECT, other
    if aside := aside_claim(question, answer):
        return _ASIDE, f"says more of it than the facts do ({', '.join(aside[:3])})"
    if question.superseded and (kept := cues.unchanged.search(MARKUP.sub(" ", answer))):
        return _UNCHANGED, f"says it never changed ({kept.group(0)!r}); the fact was updated"
    if earlier := earlier_words(question, answer):
        return (
            _EARLIER_WORDS,
            f"names what the fact said before ({', '.join(earlier[:3])}) beside the expected one",
        )
    wanted = [w for item in items for w in extract_quantities(item)]
    if extra := claims_not_told(question, wanted, answer):
        return (
            _NOT_TOLD_CLAIMS,
            f"claims the facts don't hold ({', '.join(extra[:3])}) beside the expected one",
        )
    missing = [i for i in items if i not in found]
    if (
        clash := contradicted(question, answer)
        or said_as_another(missing, answer)
        or [
            d
            for d in (
                said_otherwise(missing, answer),
                weekday_for_date(missing, answer),
                short_year(missing, answer),
            )
            if d
        ]
    ):
        if not missing:
            return _CONTRADICTED, f"says what the facts say otherwise ({'; '.join(clash[:2])})"
        # "Right wrist, 2020" for "left, 2020": the missing item given wrong — a wrong item costs
        # one (0), a missing one doesn't (5); which it is takes reading
        return _MISSING_OTHERWISE, f"a missing item may be given otherwise ({'; '.join(clash[:2])})"
    if mixed := other_facts_mixed_in(question, answer):
        return _OTHER_FACTS, f"says things of other facts ({', '.join(mixed[:3])}) beside the expected one"
    if len(items) != 1:
        if "history" in question.tags and len(found) == len(items) and out_of_order(items, answer):
            return (
                _OUT_OF_ORDER,
                "the earlier values in another order than asked: which was when takes reading",
            )
        if others := [a for a in extract_quantities(answer) if rivals(wanted, a)]:
            # "3, 10 and 14 November" for "3 November and 10 November": an extra item or a wrong one
            listed = ", ".join(shown(o) for o in others[:3])
            return _RIVALS, f"other values of its kind ({listed}) beside the expected ones"
        listed_so = listed_otherwise(question, items, found, answer)
        return (_LISTED_OTHERWISE, listed_so) if listed_so else None
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
            return _RIVALS, f"other values of its kind ({listed}) beside the expected one"
        if same and rivals(wanted, same[-1]) and not history:
            return _LAST_FIGURE, f"the last figure given ({shown(same[-1])}) is not the expected one"
    else:  # words: a name, a place — every part of it, or not sure
        terms = [t for t in key_terms(items[0]) if t not in UNIT_WORDS and t not in TITLES]
        answer_terms = key_terms(answer)
        hits = sum(1 for t in terms if any(term_found(t, a) for a in answer_terms))
        if terms and hits < len(terms):
            return _SOME_WORDS, f"only {hits} of the {len(terms)} words of {items[0]!r}"
    return None


def first_speaking(*tried: tuple[str, Callable[[], Any]]) -> tuple[str, Any] | None:
    """The first rule whose check speaks (a truthy result), with what it said; None if none does."""
    for rule_id, check in tried:
        if said := check():
            return rule_id, said
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
            short = [
                a for a in said if len(a) < len(name) and term_found(name, a) and not same_lemma(name, a)
            ]
            if short:
                return f"{short[0]!r} is shorter than {name!r}: a short form, or another name"
    return None


_LATIN_NAME = re.compile(r"(?<![\w'])[A-Z][a-z]+")
