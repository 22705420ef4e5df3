"""The find stage of the exact grader: whether one expected item is in an answer — its codes,
its figures (as numbers, units checked), and its key terms (half of them beside a figure, two
thirds without). What a caller may rely on: it never raises, and reads no doubt (that is the
doubt stage's: persona/grading/doubt.py)."""

from __future__ import annotations

import math
import re

from persona.grading.codes import same_codes
from persona.grading.said_otherwise import TITLES
from persona.terms import (
    IDENTIFIER,
    UNIT_WORDS,
    Quantity,
    extract_identifiers,
    extract_quantities,
    key_terms,
    term_found,
)


def item_found(item: str, answer_qty: list[Quantity], answer_terms: list[str], answer_ids: set[str]) -> bool:
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


_DIGITS_ONLY = re.compile(r"[\d\s-]+")
