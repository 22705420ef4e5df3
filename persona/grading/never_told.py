"""Detect an agent saying it was never told (or doesn't know), in English and Russian.

Used twice: the retry rule (a "you never told me" earns one nudge to search memory) and
abstention questions (where saying so is the right answer). False negatives cost a retry;
false positives would hand out a free nudge, so the phrasings are deliberately specific.
"""

from __future__ import annotations

import re

_PATTERNS = [
    # English
    r"\byou (?:have ?n[o']t|have not|never|did ?n[o']t|did not|had ?n[o']t)\b[^.?!]{0,25}?\b(?:told|tell|mentioned?|said|say|shared?|given|give|informed?)\b",
    r"\bi (?:do ?n[o']t|don't|do not|can ?n[o']t|cannot|could ?n[o']t|couldn't) (?:have|know|recall|remember|find|see|locate)\b",
    r"\bno (?:information|record|records|memory|memories|mention|notes?|details?|data)\b",
    r"\b(?:not|never) (?:been )?(?:told|mentioned|shared|given)\b",
    r"\bnothing (?:about|on|in my|regarding)\b",
    r"\bi'?m not (?:sure|aware)\b",
    r"\bi (?:have|'ve) no (?:idea|knowledge|record)\b",
    # Russian
    r"\b(?:вы|ты)\s+(?:мне\s+)?(?:ещё\s+|еще\s+)?(?:никогда\s+)?не\s+(?:говорил[иа]?|рассказывал[иа]?|упоминал[иа]?|сообщал[иа]?|называл[иа]?|писал[иа]?)",
    r"\bне\s+(?:знаю|помню|припоминаю|нашёл|нашел|нашла|могу\s+найти|удалось\s+найти)",
    r"\bнет\s+(?:информации|данных|сведений|записей|упоминаний)",
    r"\bничего\s+не\s+(?:знаю|известно|нашёл|нашел|нашла|сказано)",
    r"\bне\s+(?:было|упоминалось|говорилось|сообщалось)",
    r"\bмне\s+(?:это\s+)?неизвестно",
]
_NEVER_TOLD = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)


def says_never_told(answer: str) -> bool:
    """True when `answer` claims the agent was never told, doesn't know or found nothing."""
    return bool(_NEVER_TOLD.search(answer.replace("’", "'")))
