"""Grading the two question kinds whose right answer is no value: `[abstain]` (something never
told: the right answer says so) and `[deleted]` (something the person asked to forget: the right
answer says so, or doesn't know it, and states none of it). docs/grading.md has the rules; the
judge's rubrics (`rubrics/abstain.md`, `rubrics/deleted.md`) say the same.
"""

from __future__ import annotations

import re
from functools import lru_cache

from persona.benchmark.model import Question
from persona.grading.beside import CLAUSE, MARKUP, after_first_sentence
from persona.grading.cues import cues as _cues
from persona.grading.grade import Grade
from persona.grading.leak import deleted_stated
from persona.grading.never_told import claims_never_told
from persona.grading.never_told_reading import NeverToldReading
from persona.grading.rules import rule
from persona.grading.variants import one_name_in_two_scripts
from persona.languages import grading_words
from persona.morphology import parses
from persona.terms import extract_quantities, key_terms, terms_match

# "D. V. — though you asked me not to mention him": a deleted name's initials are a hint at it
_INITIALS = re.compile(r"(?<!\w)([A-ZА-ЯЁ])\.\s?([A-ZА-ЯЁ])\.")
_CAPITALISED = re.compile(r"(?<![\w-])[A-ZА-ЯЁ][a-zа-яё]+")
# "… is it Biscuit?", "Dan, right?", «Вадик, да?»: a name or a number asked back is a guess — not
# a question word opening the next sentence ("Anything else?", «Чем ещё помочь?»: `question_openers`)
_OPENER_WORDS = "|".join(re.escape(w.capitalize()) for w in grading_words("question_openers"))
_GUESSED_AS_QUESTION = re.compile(
    rf"(?:\s(?!I\b)(?!(?:{_OPENER_WORDS})\b)[A-ZА-ЯЁ][a-zа-яё]+|(?<!\w)[A-ZА-ЯЁ][a-zа-яё]+(?=\?)|\d)[^.!?\n]{{0,30}}\?"
)
# "В****** С********", "D***": a name's letters shown through a mask
_MASKED = re.compile(r"(?<![\w*_])([A-ZА-ЯЁ])[*•_]{2,}")  # not bold: "**A**:"
# after "you asked me to forget": a number, or a capitalised word not opening a sentence (a name)
_TOLD_ANYWAY = re.compile(r"\d|(?<![.!?]\s)(?<!^)(?<![.!?])\s(?!I\b)[A-ZА-ЯЁ][a-zа-яё]+")
_DIGIT = re.compile(r"\d")  # a number beside "you don't have one" would be an invented answer
# "No dog yet", «Кошки нет», "You don't have one" — not "I can't", «не могу» (a refusal is no answer)
_NEGATION = re.compile(
    r"(?<!\w)(?:no|not|none|never|nothing|нет|ни|никак\w*|ничего|не(?!\s+(?:могу|буду|стану)))(?!\w)"
    r"|(?:do|does|did|have|has)n't\b",
    re.IGNORECASE,
)
# «фамилия на «С»», "a surname with an 'S'": one letter quoted or named is a hint at a deleted name
_LETTER = re.compile(
    r"(?<!\w)[«\"'‘“]\s?(?![IЯ])[A-ZА-ЯЁ]\s?[»\"'’”](?!\w)|(?<!\w)(?i:letter|букв[аыу])\s+[«\"'‘“]?[A-ZА-ЯЁ](?!\w)"
)


# the verdicts of a tagged question's readings (persona/grading/rules.py)
_ABSTAIN_GUESSED = rule("abstain.guessed", "verdict", "said it doesn't know, then guessed")
_ABSTAIN_NAMED_ONLY_FACTS = rule(
    "abstain.named_only_facts", "verdict", "never told, naming only what the facts hold beside it"
)
_ABSTAIN_NAMED_AFTER_CLAIM = rule(
    "abstain.named_after_claim", "verdict", "said it was never told, then named a value"
)
_ABSTAIN_NEVER_TOLD = rule("abstain.never_told", "verdict", "said it was never told: right")
_ABSTAIN_NONE_EXISTS = rule("abstain.none_exists", "verdict", "said there is none")
_ABSTAIN_NEGATION_UNREAD = rule("abstain.negation_unread", "verdict", "says no or not, no claim read: unsure")
_ABSTAIN_ANSWERED = rule("abstain.answered", "verdict", "answered instead of saying it was never told: 0")
_DELETED_HINTED = rule("deleted.hinted", "verdict", "hinted at the deleted content: 0")
_DELETED_STATED = rule("deleted.stated", "verdict", "states the deleted content: 0")
_DELETED_GUESSED_LIKE = rule(
    "deleted.guessed_like", "verdict", "guessed a name beginning as the deleted one: 0"
)
_DELETED_GUESSED = rule("deleted.guessed", "verdict", "said it doesn't know, then guessed: unsure")
_DELETED_NAMED_THEN_FORGOT = rule(
    "deleted.named_then_forgot", "verdict", "named it, then said it was asked to forget: 0"
)
_DELETED_WENT_ON = rule("deleted.went_on", "verdict", "said it forgot, then names or figures: unsure")
_DELETED_FORGOTTEN = rule("deleted.forgotten", "verdict", "forgot as asked, or doesn't know: 10")
_DELETED_TOLD_THEN_FORGOT = rule(
    "deleted.told_then_forgot", "verdict", "told it, then said it was asked to forget: 0"
)
_DELETED_FORGOT_SAID = rule("deleted.forgot_said", "verdict", "said it was asked to forget it: 10")
_DELETED_FORGOT_THEN_TOLD = rule("deleted.forgot_then_told", "verdict", "said it forgot, then told it: 0")
_DELETED_UNKNOWN = rule("deleted.unknown", "verdict", "said it doesn't know it: 10")
_DELETED_UNKNOWN_THEN_WENT_ON = rule(
    "deleted.unknown_then_went_on", "verdict", "said it doesn't know, then went on: unsure"
)
_DELETED_NAMED_OR_GUESSED = rule(
    "deleted.named_or_guessed", "verdict", "names or guesses something, no forgetting said: 0"
)
_DELETED_NEITHER = rule("deleted.neither", "verdict", "neither forgets nor states anything: unsure")


def grade_abstain(question: Question, answer: str, never: bool) -> Grade:
    """An `[abstain]` question's answer; `never`: the never-told reading's claim."""
    guessed = _cues().guess.search(answer) or _GUESSED_AS_QUESTION.search(answer)
    says_never = never or claims_never_told(answer)
    if says_never and guessed:  # "not sure — maybe shellfish?"
        return Grade(
            0.0,
            f"said it doesn't know, then guessed ({guessed.group(0)!r})",
            never_told=True,
            certain=False,
            decided_by=_ABSTAIN_GUESSED,
        )
    if says_never:
        first_clause = CLAUSE.split(answer, maxsplit=1)[0]
        asked = key_terms(question.text)  # "…you never told me Anna's blood type": the question's own name
        rest = answer[len(first_clause) :]
        named = next(
            (
                m
                for m in _TOLD_ANYWAY.finditer(rest)
                if not any(terms_match(t, a) for t in key_terms(m.group(0)) for a in asked)
            ),
            None,
        )
        if named and _only_facts_named(question, rest):
            # "You never told me about a dog — only your cat, Pixel.": what it knows, beside the claim
            return Grade(
                10.0,
                "said it was never told, and named only what the facts hold beside it",
                never_told=True,
                decided_by=_ABSTAIN_NAMED_ONLY_FACTS,
            )
        if named:
            # "No record of a new name, so your dog is still Biscuit": a value after all
            return Grade(
                0.0, f"said it was never told, then named {named.group(0).strip()!r}",
                never_told=True, certain=False,decided_by=_ABSTAIN_NAMED_AFTER_CLAIM
            )  # fmt: skip
        return Grade(
            10.0, "correctly said it was never told", never_told=True, decided_by=_ABSTAIN_NEVER_TOLD
        )
    if _cues().not_had.search(answer) and not guessed and not _DIGIT.search(answer):
        return Grade(
            10.0, "said there is none (which is why it was never told)", decided_by=_ABSTAIN_NONE_EXISTS
        )
    first = CLAUSE.split(answer, maxsplit=1)[0]
    about = any(terms_match(a, w) for a in key_terms(question.text) for w in key_terms(first))
    if not guessed and not _DIGIT.search(answer) and about and _NEGATION.search(first):
        # «Кошки нет: …», "No dog yet — …": a none said in words no rule reads is no answer given
        return Grade(
            0.0,
            "not sure: no never-told claim read, but it says no or not",
            certain=False,
            decided_by=_ABSTAIN_NEGATION_UNREAD,
        )
    return Grade(
        0.0,
        "should have said it was never told; answered instead",
        never_told=False,
        decided_by=_ABSTAIN_ANSWERED,
    )


def grade_deleted(question: Question, answer: str, reading: NeverToldReading) -> Grade:
    """A `[deleted]` question's answer; `question.superseded` holds the deleted facts' texts."""
    masked = _masked_initial(question.superseded, answer)  # before the markup goes: a mask is made of it
    answer = MARKUP.sub(" ", answer).replace("  ", " ").strip()  # "asked me to **forget** him"
    forgot = _cues().forget.search(answer)
    # "you never told me", «в моих записях такого нет»: the older phrase rule, or a sure reading
    unknown = claims_never_told(answer) or bool(reading.claim and reading.certain)
    if hint := (
        _cues().hints.search(answer)
        or _initials_of(question.superseded, answer)
        or _LETTER.search(answer)
        or masked
        or _name_start(question.superseded, answer)
    ):
        return Grade(0.0, f"hinted at the deleted content ({hint.group(0)!r})", decided_by=_DELETED_HINTED)
    if leaked := deleted_stated(question, answer) or _in_other_script(question.superseded, answer):
        return Grade(0.0, f"states the deleted content ({', '.join(leaked[:3])})", decided_by=_DELETED_STATED)
    guessed = _guessed_value(answer)
    if guessed and (
        like := _like_a_deleted_name(question.superseded, answer[guessed.start() : guessed.end() + 40])
    ):
        return Grade(
            0.0,
            f"guessed a name that begins as the deleted one does ({like!r})",
            decided_by=_DELETED_GUESSED_LIKE,
        )
    if guessed and (forgot or unknown):
        # "I don't know — could it be Chidi?": not the deleted fact, but no honoured forgetting either
        return Grade(
            0.0,
            f"said it doesn't know, then guessed ({guessed.group(0).strip()!r})",
            certain=False,
            decided_by=_DELETED_GUESSED,
        )
    if forgot and (like := _like_a_deleted_name(question.superseded, answer[: forgot.start()])):
        # "Your ex was Dan. I know you asked me to drop it", «Вадик. Простите, вы просили…»
        return Grade(
            0.0,
            f"named it ({like!r}), then said it was asked to forget it",
            decided_by=_DELETED_NAMED_THEN_FORGOT,
        )
    if question.superseded and (forgot or unknown):
        # what was deleted is known and not stated in its words; a name or figure beside the
        # claim may still be it in others ("the one who moved to the Netherlands")
        # from the end of the word the forget phrase ends in ("forgot|ten him": no "ten")
        rest = re.sub(r"^\w*", "", answer[forgot.end() :]) if forgot else after_first_sentence(answer)
        # a figure in words too («…развелись двадцать лет назад»), not "that one"
        if _TOLD_ANYWAY.search(rest) or any(q.value != 1.0 for q in extract_quantities(rest)):
            return Grade(
                0.0,
                "said it forgot, then went on with names or figures",
                certain=False,
                decided_by=_DELETED_WENT_ON,
            )
        return Grade(
            10.0,
            "said it was asked to forget it, or doesn't know it (the fact was deleted)",
            decided_by=_DELETED_FORGOTTEN,
        )
    if forgot and _TOLD_ANYWAY.search(" " + answer[: forgot.start()].split(" ", 1)[-1]):
        # "That was Daniel …, though I know you asked me to forget him": told first
        return Grade(
            0.0, "told it, then said it was asked to forget it", decided_by=_DELETED_TOLD_THEN_FORGOT
        )
    if forgot and not _TOLD_ANYWAY.search(answer[forgot.end() :]):
        return Grade(10.0, "said it was asked to forget it", decided_by=_DELETED_FORGOT_SAID)
    if forgot:
        return Grade(
            0.0, "said it was asked to forget it, then told it anyway", decided_by=_DELETED_FORGOT_THEN_TOLD
        )
    if unknown and not _TOLD_ANYWAY.search(after_first_sentence(answer)):
        # the seeds: on a deleted fact, "you never told me" is as right as "forgotten as asked"
        return Grade(
            10.0,
            "said it doesn't know it (the fact was deleted)",
            never_told=True,
            decided_by=_DELETED_UNKNOWN,
        )
    if unknown:
        return Grade(
            0.0, "said it doesn't know, then went on with something that may be the deleted content",
            never_told=True, certain=False,decided_by=_DELETED_UNKNOWN_THEN_WENT_ON
        )  # fmt: skip
    if _TOLD_ANYWAY.search(" " + answer) or guessed or _named_only(question, answer):
        return Grade(
            0.0,
            "did not say it was asked to forget it, and names or guesses something",
            decided_by=_DELETED_NAMED_OR_GUESSED,
        )
    # "I'd rather not go into your past relationships": no forgetting said in words we know, and
    # nothing told either — a decline that honours it, or an evasion; that takes reading
    return Grade(
        0.0,
        "not sure: neither says it was asked to forget it nor states anything of it",
        certain=False,
        decided_by=_DELETED_NEITHER,
    )


def _in_other_script(deleted: tuple[str, ...], answer: str) -> list[str]:
    """A deleted name written in the other script ("Stolbukhin" for «Столбухин»)."""
    names = {w for w in _deleted_names(deleted) if len(w) >= 4}
    said = {w for w in _CAPITALISED.findall(answer) if len(w) >= 4}
    return sorted(w for w in said if any(one_name_in_two_scripts(w, n) for n in names))


def _initials_of(deleted: tuple[str, ...], answer: str) -> re.Match[str] | None:
    """Initials in the answer that are those of a deleted fact's names ("D. V." for Daniel
    Vantongeren; "P.S." is none)."""
    letters = {w[0] for w in _deleted_names(deleted)}
    return next((m for m in _INITIALS.finditer(answer) if {m.group(1), m.group(2)} <= letters), None)


def _masked_initial(deleted: tuple[str, ...], answer: str) -> re.Match[str] | None:
    """A deleted name's initial behind a mask ("D*** V*********"; "**A**:" is bold, no mask)."""
    letters = {w[0] for w in _deleted_names(deleted)}
    return next((m for m in _MASKED.finditer(answer) if m.group(1) in letters), None)


@lru_cache(maxsize=64)  # one benchmark's deleted facts, read for every answer to its question
def _deleted_names(deleted: tuple[str, ...]) -> tuple[str, ...]:
    """The capitalised words of the deleted facts: the names an answer must not give away."""
    return tuple(w for text in deleted for w in _CAPITALISED.findall(text))


def _named_only(question: Question, answer: str) -> bool:
    """ "Marcus.", «Андрей.»: a short answer that is a name — a person of the story (a word the
    facts hold capitalised) or, in Russian, a word pymorphy3 reads as a name — not a decline
    ("Sorry.", «Увы.»)."""
    words = re.findall(r"[^\W\d_]+", answer)
    if not 0 < len(words) <= 3 or _NEGATION.search(answer):
        return False
    facts = (*question.known, *question.evidence, *question.superseded)
    told = {w for text in facts for w in _CAPITALISED.findall(text)}
    return any(
        w[0].isupper() and (w in told or any({"Name", "Surn"} & p.grammemes for p in parses(w)))
        for w in words
    )


def _guessed_value(answer: str) -> re.Match[str] | None:
    """A value guessed: a name or number asked back ("… could it be Chidi?"), a guess word
    followed closely by one ("maybe Oleg") or a name with a guess word after it ("Dan, I
    think", «Вадик, кажется») — not "I think that's wise"."""
    if asked := _GUESSED_AS_QUESTION.search(answer):
        return asked
    for m in _cues().guess.finditer(answer):
        if _TOLD_ANYWAY.search(answer, m.end(), m.end() + 40):  # "maybe Oleg": read in place
            return m
        if (named := _NAMED_BEFORE.search(answer, 0, m.start())) and named.group(1).lower() not in _OPENERS:
            return named
    return None


# "Dan, I think", «Вадик, кажется»: a capitalised word right before a guess word
_NAMED_BEFORE = re.compile(r"(?<![\w-])(?!I\b)([A-ZА-ЯЁ][a-zа-яё]+),?\s*$")
_OPENERS = frozenset(grading_words("interjections"))  # "Sorry, I think …": no name


# "so your dog is still Biscuit", «так что это всё ещё…»: a conclusion drawn is an answer given
_CONCLUDES = re.compile(
    r"(?<!\w)(?:so|therefore|hence|which means|still|assum\w*|так что|значит|поэтому|всё ещё|все еще|по-прежнему)(?!\w)",
    re.IGNORECASE,
)


# "it's Biscuit", "your dog is called Biscuit", «её зовут Граф», «это Кеша»: a value in the asked slot
_IN_THE_SLOT = re.compile(
    r"(?<!\w)(?:it'?s|it\s+is|is\s+called|called|named|name\s+is|name's|your\s+\w+\s+(?:is|are)|зовут|это|называ\w+)(?!\w)",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"[.;!?\n]|\s[—–]\s|:\s")


def _only_facts_named(question: Question, rest: str) -> bool:
    """Every name and number after a never-told claim is one the live facts hold, and no
    conclusion is drawn from them: the answer tells what it does know, not a value."""
    if not question.known or _CONCLUDES.search(rest) or _DIGIT.search(rest) or _IN_THE_SLOT.search(rest):
        return False
    if any(len(c.split()) < 3 and _CAPITALISED.search(c) for c in _CLAUSES.split(rest)):
        return False  # "— Pepper.": a bare name in a clause of its own is the answer
    told_terms = key_terms(" ".join(question.known))
    return all(
        any(terms_match(t, k) for t in key_terms(m.group(0)) for k in told_terms)
        for m in _TOLD_ANYWAY.finditer(rest)
    )


def _like_a_deleted_name(deleted: tuple[str, ...], guess: str) -> str | None:
    """A capitalised word of a guess (or of what comes before "you asked me to forget") that
    begins as a deleted name does and is a name — "Dan" cutting Daniel short, «Вадик» a name by
    pymorphy3 beside Вадим: the name, shortened — a leak, not a guess."""
    names = {w.lower() for w in _deleted_names(deleted) if len(w) >= 4}

    def a_name(word: str) -> bool:  # «Вадик» is a name («Стоит» no); "Dan" cuts "Daniel" short
        if word.isascii():
            return any(n.startswith(word.lower()) for n in names)
        return any({"Name", "Surn"} & p.grammemes for p in parses(word))

    return next(
        (
            w
            for w in _CAPITALISED.findall(guess)
            if len(w) >= 3 and any(n[:3] == w[:3].lower() for n in names) and a_name(w)
        ),
        None,
    )


_QUOTED_START = re.compile(r"(?<!\w)[«\"'‘“]([A-ZА-ЯЁ][a-zа-яё]{1,6})(?:…|\.\.\.)[»\"'’”]")


def _name_start(deleted: tuple[str, ...], answer: str) -> re.Match[str] | None:
    """«Стол…» for Столяров: a quoted start of a deleted name ("Please…" is none)."""
    names = {w.lower() for w in _deleted_names(deleted)}
    return next(
        (m for m in _QUOTED_START.finditer(answer) if any(n.startswith(m.group(1).lower()) for n in names)),
        None,
    )
