"""A reply that only promises to look ("Let me check my notes — one moment!", «Секунду,
проверю»): the scripted persona doesn't grade it, says "go ahead" once and grades what follows.
Apart from the never-told detector (`never_told.py`), whose claim rules a stall must not meet:
a stall says nothing yet, neither a value nor that nothing was found.
"""

from __future__ import annotations

import re

from persona.grading.never_told import says_never_told
from persona.grading.never_told_phrasings import phrasings
from persona.grading.quoted import unquoted

_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")


# a stall is short: a promise, not an answer with a promise at its end
_STALL_WORDS = 40


def is_stall(reply: str) -> bool:
    """True when `reply` only promises to look ("Let me check my notes — one moment!",
    «Секунду, проверю») and gives nothing yet: no number, no claim of not knowing, a few words.
    Such a reply is not graded: the persona says go ahead once and grades what follows."""
    text = unquoted(reply)
    if len(_WORD.findall(text)) > _STALL_WORDS or _DIGIT.search(text) or says_never_told(reply):
        return False
    for lang in phrasings():
        promise = lang.stall.search(text)
        kept = promise and lang.found.search(text, promise.end())
        # "… yes, Camino de Santiago": kept only when a name follows (not "… да, сейчас")
        if promise and not (kept and _NAMED_AFTER.match(text, kept.end())):
            # «Кафе называется «Пышечная». Если хочешь, пролистаю переписку…»: an answer first,
            # then an offer to look further, is an answer
            said = text[: max(0, text.rfind(".", 0, promise.start()))]
            return not (_STATES.search(said) and _NAME_IN.search(said))
    return False


# before the promise, a sentence that states a name: "The café is called Pyshechnaya.", not
# "Good question, Anna."
_STATES = re.compile(
    r"(?<!\w)(?:is|are|was|were|called|named|называется|называют|зовут|это)(?!\w)|\s[—:]\s", re.IGNORECASE
)
_NAME_IN = re.compile(
    r"(?<=[\w,])\s+(?!I\b)(?-i:[A-ZА-ЯЁ])\w+"
)  # a capitalised word not first in its sentence


_NAMED_AFTER = re.compile(r"[\W_]{0,4}(?:(?:the|a|an)\s+)?(?:\d|(?-i:[A-ZА-ЯЁ])\w)", re.IGNORECASE)
