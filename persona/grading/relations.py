"""Who did what to whom: an answer with the right value in a relation the question doesn't ask.

"Chidi owes you £150." for "How much do I owe Chidi?", «Вы должны Наташе 12 000.» for «Сколько
мне должна Наташа?», "Marcus booked a table at Ottolenghi's" for "Where did I book a table for
Marcus's birthday?": the value is there, the relation is reversed. Reading roles surely takes
meaning, so this never decides a score: it is a doubt (`relation_doubt`), and an answer it
names is graded uncertain — a judge reads it, or the question stays unresolved. Never
certain-right is the promise (docs/grading.md); an answer in the question's own roles is left to
the other rules.

How roles are read: in English by word order (the person asking and the other party: "I … Chidi"
in the question, "Chidi … you" in the answer); in Russian, where word order is free, by case
(pymorphy3, `persona.morphology`): who is in the nominative — the person asking («я», «вы») or
another person («Наташа», «Ирина», «она»).
"""

from __future__ import annotations

import re
from typing import Literal

from persona.morphology import cyrillic, lemmas, parses
from persona.terms import key_terms, terms_match

Role = Literal["user", "other"]

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[^\W\d_]+(?:'s)?")
_USER_ASKING = re.compile(r"\b(?:I|me|my|mine|myself)\b")  # "I" in capitals: the person asking
_USER_ANSWERED = re.compile(r"\b(?:you|your|yours|yourself)\b", re.IGNORECASE)
_NAME = re.compile(r"(?<![\w'])[A-Z][a-z]+(?:'s)?")
_OPENING = re.compile(r"\W*([A-Z][a-z]+)\s+(?:still\s+|also\s+|just\s+)?([a-z]+)")
_LINKS = frozenset({"is", "are", "was", "were", "has", "have", "had", "will", "would", "did", "does", "do"})
# "you said", «вы говорили»: what was said is reported, its speaker no party to the relation
_REPORTING = re.compile(
    r"\b(?:you|вы|ты)\s+(?:мне\s+|me\s+)?(?:said|told|mentioned|говорил\w*|рассказывал\w*|упоминал\w*|писал\w*"
    r"|сказал\w*|сообщал\w*)\b",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"\s*[—–:;,]\s*")
_NOT_NAMES = frozenset(
    {"I", "What", "Who", "Where", "When", "Which", "How", "Why", "Whose", "Is", "Do", "Did", "Does"}
)


def relation_doubt(question: str, answer: str) -> str | None:
    """Why the answer may state its value in a relation the question doesn't ask, or None."""
    try:
        roles = _russian(question, answer) if cyrillic(question) else _english(question, answer)
        return roles or _other_purpose(question, answer)
    except Exception:  # odd text: no doubt raised, the other rules grade it
        return None


# what a value was for: "charge for the shower", «взял за перекладку печи»
_PURPOSE = re.compile(
    r"(?<!\w)(?:for\s+(?:the|my|your|his|her|our|a|an)|за)\s+([^\W\d_]+(?:\s+[^\W\d_]+)?)", re.IGNORECASE
)


def _other_purpose(question: str, answer: str) -> str | None:
    """The value given as for something else: "£95 for the kitchen tap" to "How much did Gareth
    charge for the shower?" (another job, another event)."""
    asked = [key_terms(m.group(1)) for m in _PURPOSE.finditer(question)]
    if not asked:
        return None
    own = key_terms(question)
    for m in _PURPOSE.finditer(answer):
        said = key_terms(m.group(1))
        if said and not any(terms_match(a, o) for a in said for o in own):
            return f"gives it for {m.group(1)!r}, the question asks about {' '.join(asked[0])!r}"
    return None


def _english(question: str, answer: str) -> str | None:
    parties = [n.removesuffix("'s") for n in _NAME.findall(question) if n.removesuffix("'s") not in _NOT_NAMES]
    users = list(_USER_ASKING.finditer(question))
    if not parties or not users:
        return None
    asked_words = {lemma for w in _WORD.findall(question.lower()) for lemma in lemmas(w)}
    answer = _REPORTING.sub(" ", answer)
    for party in parties:
        at = question.find(party)
        user_first = min(users, key=lambda u: abs(u.start() - at)).start() < at  # "Remind me, … owe me?"
        for sentence in _SENTENCE.split(answer):
            named = re.search(rf"(?<!\w){re.escape(party)}(?!\w)", sentence)
            you = _USER_ANSWERED.search(sentence)
            if named and you:
                if user_first != (you.start() < named.start()):
                    return f"names {party} and you the other way round from the question (who did what to whom?)"
                break
            # the sentence opens on the question's verb with the other subject: "Marcus booked a
            # table" to "Where did I book…?", "You owe him £150" to "How much does Chidi owe me?"
            opening = _OPENING.match(sentence)
            if opening and lemmas(opening.group(2)) & asked_words and opening.group(2).lower() not in _LINKS:
                subject = opening.group(1)
                if (subject == party and user_first) or (subject.lower() == "you" and not user_first):
                    return f"{subject} {opening.group(2)} …: the other way round from the question (who did what to whom?)"
    return None


def _russian(question: str, answer: str) -> str | None:
    asked = _subject(_CLAUSES.split(question.strip())[-1] or question, asking=True)  # «Я забыла — сколько мне…»
    said = _subject(_REPORTING.sub(" ", answer), asking=False)  # «Вы говорили — 3 мая»: no subject of the value
    if asked is None or said is None or asked == said:
        return None
    answered = "you" if said == "user" else "someone else"
    asking = "the person asking" if asked == "user" else "someone else"
    return f"the answer's subject is {answered}, the question's {asking} (who did what to whom?)"


def _subject(text: str, asking: bool) -> Role | None:
    """Who is in the nominative: the person asking («я» asked, «вы» answered) or another person
    (a name, «она», «он»); None when neither is. The person asking wins where both are."""
    person = "1per" if asking else "2per"
    other = False
    for m in _WORD.finditer(text):
        word = m.group(0)
        readings = parses(word)
        nominative = [p for p in readings if "nomn" in p.grammemes]
        if not nominative or len(nominative) < len(readings) / 2:
            continue  # not surely the nominative («вас», «Веру»)
        if any("NPRO" in p.grammemes and person in p.grammemes for p in nominative):
            return "user"
        named = word[0].isupper() and any({"Name", "Surn", "Patr"} & p.grammemes for p in nominative)
        pronoun = any(
            "NPRO" in p.grammemes and "3per" in p.grammemes and "Anph" in p.grammemes for p in nominative
        )
        other = other or named or pronoun
    return "other" if other else None
