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

from persona.grading.cues import cues
from persona.grading.said_otherwise import TITLES
from persona.morphology import Parse, cyrillic, lemmas, parses
from persona.terms import key_terms, terms_match

Role = Literal["user", "other"]

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[^\W\d_]+(?:'s)?")
_USER_ASKING = re.compile(r"\b(?:I|me|my|mine|myself)\b")  # "I" in capitals: the person asking
_USER_ANSWERED = re.compile(r"\b(?:you|your|yours|yourself)\b", re.IGNORECASE)
_NAME = re.compile(r"(?<![\w'])[A-Z][a-z]+(?:'s)?")
_OPENING = re.compile(
    r"\W*((?:[Yy]our|[Hh]is|[Hh]er|[Tt]heir)\s+[a-z]+|[A-Z][a-z]+)\s+(?:still\s+|also\s+|just\s+)?([a-z]+)"
)
_LINKS = frozenset({"is", "are", "was", "were", "has", "have", "had", "will", "would", "did", "does", "do"})
# "you said", «вы говорили»: what was said is reported, its speaker no party to the relation
_REPORTING = re.compile(
    r"\b(?:you|вы|ты)\s+(?:мне\s+|me\s+)?(?:said|told|mentioned|говорил\w*|рассказывал\w*|упоминал\w*|писал\w*"
    r"|сказал\w*|сообщал\w*)\b",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"\s*[—–:;,]\s*")
_DASHED = re.compile(r"\s+[—–]\s+|:\s+")
_NOT_NAMES = frozenset(
    {"I", "What", "Who", "Where", "When", "Which", "How", "Why", "Whose", "Is", "Do", "Did", "Does"}
)


def relation_doubt(question: str, answer: str, expected: str = "") -> str | None:
    """Why the answer may state its value in a relation the question doesn't ask, or None."""
    try:
        roles = _russian(question, answer) if cyrillic(question) else _english(question, answer)
        return (
            roles
            or _other_purpose(question, answer)
            or _converse(question, answer)
            or _other_person(question, expected, answer)
            or _other_doer(expected, answer)
            or _role_given_to_another(question, expected, answer)
            or _asked_action_denied(question, answer)
        )
    except Exception:  # odd text: no doubt raised, the other rules grade it
        return None


# what a value was for: "charge for the shower", «взял за перекладку печи»
_PURPOSE = re.compile(
    r"(?<!\w)(?:for\s+(?:[a-z]+ing\s+)?(?:the|my|your|his|her|our|a|an)|за)\s+([^\W\d_]+(?:\s+[^\W\d_]+)?)",
    re.IGNORECASE,
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
            # a clause opening on the question's verb with the other subject: "Marcus booked a
            # table" to "Where did I book…?" (also after "That wasn't you —"), "You owe him
            # £150" to "How much does Chidi owe me?"
            for clause in _DASHED.split(sentence):
                opening = _OPENING.match(clause)
                if opening and lemmas(opening.group(2)) & asked_words and opening.group(2).lower() not in _LINKS:
                    subject = opening.group(1)  # "Chidi", "Your brother" (owes / booked), "You"
                    own = re.search(rf"\bmy {re.escape(subject.split()[-1])}\b", question, re.IGNORECASE)
                    someone = subject == party or (" " in subject and not own and re.search(r"(?:s|ed)$", opening.group(2)))
                    if (someone and user_first) or (subject.lower() == "you" and not user_first):
                        return f"{subject} {opening.group(2)} …: the other way round from the question (who did what to whom?)"
            named = re.search(rf"(?<!\w){re.escape(party)}(?!\w)", sentence)
            you = _USER_ANSWERED.search(sentence)
            if named and you:
                if user_first != (you.start() < named.start()):
                    return f"names {party} and you the other way round from the question (who did what to whom?)"
                break
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
        denied = re.search(r"(?<!\w)не\s+$", text[: m.start()])  # «записывал Андрей, а не вы»
        if not denied and any("NPRO" in p.grammemes and person in p.grammemes for p in nominative):
            return "user"
        named = word[0].isupper() and any({"Name", "Surn", "Patr"} & p.grammemes for p in nominative)
        pronoun = any(
            "NPRO" in p.grammemes and "3per" in p.grammemes and "Anph" in p.grammemes for p in nominative
        )
        other = other or named or pronoun
    return "other" if other else None


# owing and lending name one debt from its two ends: "Chidi lent you £150" answers "How much do I
# owe Chidi?" — and «Наташа одолжила вам» reverses «Сколько мне должна Наташа?»; which, takes reading
_OWING = re.compile(r"(?<!\w)(?:owe[sd]?|owing|debt|долж[ен]\w*|долг(?:а|у|ом|е|и|ов)?)(?!\w)", re.IGNORECASE)
_LENDING = re.compile(
    r"(?<!\w)(?:lent|lend\w*|loan\w*|borrow\w*|одолжи\w*|одалжива\w*|занял\w*|взял\w*\s+в\s+долг)(?!\w)",
    re.IGNORECASE,
)


def _converse(question: str, answer: str) -> str | None:
    """A debt asked as owing and answered as lending (or the other way round)."""
    if _OWING.search(question) and (lent := _LENDING.search(answer)):
        return f"answers a question of owing with {lent.group(0)!r}: who owes whom takes reading"
    if _LENDING.search(question) and (owed := _OWING.search(answer)):
        return f"answers a question of lending with {owed.group(0)!r}: who owes whom takes reading"
    return None


def _people(text: str) -> dict[str, set[str]]:
    """The people a Russian text names, by their dictionary form (pymorphy3's Name/Surn), with
    the cases they may stand in — a name written in Latin letters read back in Cyrillic ("Lilya"
    is «Лиля»)."""
    out: dict[str, set[str]] = {}
    for m in _WORD.finditer(text):
        word = m.group(0)
        readings = parses(word) if cyrillic(word) else _latin_name_readings(word)
        if word[0].isupper() and not any({"PREP", "CONJ", "PRCL", "NPRO"} & p.grammemes for p in readings):
            for p in readings:  # «Из» is no Иза
                if {"Name", "Surn"} & p.grammemes:
                    out.setdefault(p.lemma, set()).update(p.grammemes & _CASES)
    return out


_CASES = frozenset({"nomn", "gent", "datv", "accs", "ablt", "loct"})
# a Russian name written in Latin letters, read back: longest spellings first
_FROM_LATIN = (
    ("shch", "щ"), ("sch", "щ"), ("zh", "ж"), ("kh", "х"), ("ch", "ч"), ("sh", "ш"), ("ts", "ц"),
    ("iy", "ий"), ("yi", "ый"), ("ya", "я"), ("ia", "ия"), ("yu", "ю"), ("iu", "ю"), ("yo", "ё"),
    ("ye", "е"), ("a", "а"), ("b", "б"), ("v", "в"), ("w", "в"), ("g", "г"), ("d", "д"), ("e", "е"),
    ("z", "з"), ("i", "и"), ("j", "й"), ("y", "й"), ("k", "к"), ("c", "к"), ("q", "к"), ("l", "л"),
    ("m", "м"), ("n", "н"), ("o", "о"), ("p", "п"), ("r", "р"), ("s", "с"), ("t", "т"), ("u", "у"),
    ("f", "ф"), ("h", "х"), ("x", "кс"),
)  # fmt: skip


def _latin_name_readings(word: str) -> tuple[Parse, ...]:
    """pymorphy3's readings of a capitalised Latin word read back in Cyrillic, when one of them
    is a name ("Lilya" → «Лиля», "Natalya" → «Наталья»); none for any other word."""
    if not (word.isascii() and word[:1].isupper() and len(word) >= 3):
        return ()
    rest, out = word.lower(), ""
    while rest:
        latin, letter = next((pair for pair in _FROM_LATIN if rest.startswith(pair[0])), (rest[0], rest[0]))
        out, rest = out + letter, rest[len(latin) :]
    soft = re.sub(r"(?<=[бвдзлмнпрстф])([яю])", r"ь\1", out)  # "Natalya": «Наталья»
    for spelling in dict.fromkeys((out, soft)):
        readings = parses(spelling.capitalize())
        if any({"Name", "Surn"} & p.grammemes for p in readings):
            return readings
    return ()


def _same_person(a: str, b: str) -> bool:
    """«Наталья» and «Наташа», «Мишенька» and «Миша»: one name's forms."""
    return a[:3] == b[:3] or any(a in group and b in group for group in cues().name_forms)


def _other_person(question: str, expected: str, answer: str) -> str | None:
    """«Веру к ортодонту» for «К какому врачу я записала Мишу?»: the question's person is not in
    the answer, another one is, in the same case — the value may be someone else's («вместе с
    Андреем» is a bystander)."""
    if not cyrillic(question):
        return None  # English has no reading of which capitalised word is a person (places, days)
    in_expected = _people(expected)
    asked = {k: v for k, v in _people(question).items() if k not in in_expected}
    if not asked:
        return None
    said = _people(answer)
    if any(_same_person(s, a) for s in said for a in asked):
        return None
    cases = set().union(*asked.values())
    others = [s for s, c in said.items() if s not in in_expected and c & cases]
    if others:
        return f"names {', '.join(sorted(others))}, not {', '.join(sorted(asked))} the question asks about"
    # «Это вас записали к ортодонту» for «…я записала Мишу?»: the person asking in the asked one's place
    you = next(
        (
            m.group(0)
            for m in _WORD.finditer(answer)
            if any({"NPRO", "2per"} <= p.grammemes and p.grammemes & cases for p in parses(m.group(0)))
        ),
        None,
    )
    if you and "nomn" not in cases:
        return f"puts {you!r} where the question has {', '.join(sorted(asked))}"
    return None


def _other_doer(expected: str, answer: str) -> str | None:
    """«вы косите его флоксы» for «косит флоксы»: the expected verb said in another person."""
    if not cyrillic(expected):
        return None
    wanted: dict[str, set[str]] = {}
    for m in _WORD.finditer(expected):
        for p in parses(m.group(0)):
            if "VERB" in p.grammemes and (person := {"1per", "2per", "3per"} & p.grammemes):
                wanted.setdefault(p.lemma, set()).update(person)
    for m in _WORD.finditer(answer):
        verbs = [p for p in parses(m.group(0)) if "VERB" in p.grammemes and p.lemma in wanted]
        people = {g for p in verbs for g in {"1per", "2per", "3per"} & p.grammemes}
        if verbs and people and not people & wanted[verbs[0].lemma]:
            return f"{m.group(0)!r}: the expected action, done by someone else (who did what?)"
    return None


_ROLE_WORDS = re.compile(r"[^\W\d_]{2,}")
_CAPITALISED_NAME = r"((?:(?:Dr|Mr|Mrs|Ms|д-р|доктор)\.?\s+)?[A-ZА-ЯЁ][\w'-]+(?:\s+[A-ZА-ЯЁ][\w'-]+)?)"


def _role_given_to_another(question: str, expected: str, answer: str) -> str | None:
    """ "Your GP is Dr Lindqvist; Dr Haddad is your dentist." to "Who is my GP?": the role asked
    about, given to a name that is not the expected one."""
    roles = [w for w in _ROLE_WORDS.findall(question.lower()) if w not in _QUESTION_WORDS]
    wanted = key_terms(expected)
    for role in roles:
        r = re.escape(role)
        for m in re.finditer(
            rf"(?i:\b(?:your|ваш\w*|the)\s+{r}\b)\s*(?:is|was|—|–|-|:)\s*{_CAPITALISED_NAME}"
            rf"|{_CAPITALISED_NAME}\s+(?:is|was)\s+(?i:your\s+{r}\b)",
            answer,
        ):
            name = m.group(1) or m.group(2)
            if not any(terms_match(t, w) for t in key_terms(name) if t not in TITLES for w in wanted):
                return f"gives the {role} asked about as {name!r}"
    return None


_QUESTION_WORDS = frozenset(
    "what who whom whose where when which how why is are was were do does did my me i the a an of "
    "что кто кого чей где когда какой какая какое как почему мой моя моё мое мне меня я".split()
)
# "I don't have a booking of yours", «Мишу вы никуда не записывали»: the asked action denied
_DENIAL = re.compile(r"(?<!\w)(?:не|never|didn't|did\s+not|wasn't|haven't|don't)\s+(?:\w+\s+)?(\w+)", re.IGNORECASE)


# "How much do I owe …", "Where did I book …": the verb after its auxiliary and subject
_ENGLISH_VERB = re.compile(r"\b(?:do|did|does|have|has|will|can|should)\s+(?:I|you|we|he|she|they|\w+)\s+([a-z]{3,})\b")


def _asked_action_denied(question: str, answer: str) -> str | None:
    """The answer denies the question's own action (its verb, by the first five letters of its
    stem: записала / записывали) — and gives the value anyway, for someone else."""
    verbs = {
        w[:5]
        for w in _ROLE_WORDS.findall(question.lower())
        if len(w) >= 5 and any({"VERB", "INFN"} & p.grammemes for p in parses(w)[:1])
    } | {lemma[:5] for m in _ENGLISH_VERB.finditer(question) for lemma in lemmas(m.group(1).lower())}
    for m in _DENIAL.finditer(answer):
        said = m.group(1).lower()
        if len(said) < 5 or said[:5] in {"remem", "помню"}:
            continue
        if said[:5] in verbs or any(lemma[:5] in verbs for lemma in lemmas(said)):
            return f"denies the action asked about ({m.group(0).strip()!r}) and gives a value"
    return None
