"""Detect an agent saying it was never told (or doesn't know), in every language we have.

Used twice: the scripted persona's retry rule (through `never_told_reading.py`, which says
where this yes/no guess is unsure) and abstention questions (where saying so is the right
answer). The LLM persona decides the retry itself, as in MarathonMemBench.

A reply says so when one of the language's `never_told` phrasings appears in it, or a negation
near a knowing word — words the agent quotes («…», "…") left out, unless the quote is the value
— and the reply doesn't answer anyway: a value before the claim or after it ("You haven't told
your sister yet, but the party is on Friday"), a guess, a value of the kind the question asks
for (see `answer_after`, `asks_for` in `persona/languages/*.json5`; the words are compiled in
`never_told_phrasings.py`). Measured on the calibration sets and on frozen held-out sets nobody
tuned on (figures in docs/grading.md). Every language's phrasings apply to every reply: an
agent may answer a Russian persona in English.
"""

from __future__ import annotations

import re

from persona.grading.cues import cues as _cues
from persona.grading.never_told_phrasings import Phrasings, phrasings
from persona.grading.quoted import unquoted
from persona.languages import words_pattern
from persona.numerals import digits_for_words
from persona.terms import key_terms, terms_match

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_SENTENCE_END_FULL = re.compile(r"(?<=[.!?])\s+|\n+")  # "I can't recall… oh wait, yes: 6%" goes on
_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")
_NUMBER = re.compile(r"(?<!\w)\d+(?:[.,:]\d+)*(?!\w)")  # "a size 12", not the code "V5C"
TOPIC = "⁂"  # stands for a name or number of the question: no value, no sentence's end
_CLAIM_CLAUSE_END = re.compile(r"[,;:—–(]|\s-\s")
# a clause that says what the claim is about: "…, that you have a cat", «…, что у вас есть кошка»
_OBJECT_CLAUSE = re.compile(rf"\s*(?:{words_pattern('object_clause')})(?!\w)", re.IGNORECASE)
ONE = re.compile(rf"(?<!\w)(?:{words_pattern('one')})(?!\w)", re.IGNORECASE)
_CLOCK = re.compile(r"\d{1,2}[:.]\d{2}")
NAMED = re.compile(r"(?<=[\w,;:—–])\s+(?!I\b)[A-ZА-ЯЁ][\w-]+")


_WINDOW = 8  # words between a negation and a knowing word ("I don't, as far as I can see, have it")


def _claims_in(text: str, lang: Phrasings) -> list[tuple[int, int]]:
    """Where `text` says it doesn't know, as (start, end) spans: a phrasing of the language, or
    a negation within a few words of a knowing word in one sentence (markdown marks are no
    words). A span ends where the claim does: what follows it may still answer."""
    plain = MARKDOWN.sub(lambda m: " " * len(m.group(0)), text)  # same offsets as `text`
    found = [m.span() for m in lang.claims.finditer(plain)]  # "_No entry._" is "No entry"
    for sentence in _SENTENCE_SPAN.finditer(plain):
        body = sentence.group(0)
        starts = [w.start() for w in _WORD.finditer(body)]

        def index(pos: int, starts: list[int] = starts) -> int:
            return sum(1 for st in starts if st <= pos)

        # "Нет, терпеть не можете — говорили…", "Not really — you said…": a yes/no answer set
        # apart at the start denies nothing that follows
        answered = lang.yes_no.match(body)
        answered_to = answered.end() if answered and _SET_APART.match(body, answered.end()) else 0
        negations = [
            (index(m.start()), m)
            for m in lang.negation.finditer(body)
            if m.start() >= answered_to
            # «просил … не присылать», "said not to go above that": what was said, no denial
            and not (lang.told_not_to.match(body, m.start()) and lang.telling.search(body, 0, m.start()))
        ]
        knowing = [(index(m.start()), m) for m in lang.knowing.finditer(body)]
        # a negation before its knowing word ("no babysitter saved"), or just after it ("found
        # nothing"): one further on denies something else ("You told me … — no surgery needed")
        pair = next(
            (
                (n, k)
                for n in negations
                for k in knowing
                if -lang.denied_after <= k[0] - n[0] <= _WINDOW
                # not across a "but": "Не могу найти «брат», но Сергей у меня записан"
                and not lang.contrast.search(
                    body, min(n[1].end(), k[1].end()), max(n[1].start(), k[1].start())
                )
                # «терпеть не можете — говорили…»: a negation before a dash, the knowing word
                # after it, are two thoughts
                and not (n[0] < k[0] and _DASH.search(body, n[1].end(), k[1].start()))
                # "You said Jess didn't want…", «вы говорили, что он не ладит»: the negation is
                # what was said, not a denial that it was
                and not (
                    n[0] > k[0]
                    and lang.telling.fullmatch(k[1].group(0))
                    and _REPORTED.search(body, k[1].end(), n[1].start())
                )
            ),
            None,
        )
        if pair is not None:
            n, k = pair[0][1], pair[1][1]
            found.append(
                (sentence.start() + min(n.start(), k.start()), sentence.start() + max(n.end(), k.end()))
            )
    return found


_DASH = re.compile(r"\s[—–]\s")
_HEADING = re.compile(r"(?m)^#{1,6}\s.*$")
_SET_APART = re.compile(r"\s*[,—–:!]")
# between a knowing word and a negation after it: a new clause or subject — what was said
_REPORTED = re.compile(
    r"[,:⁂]|(?<!\w)(?:that|he|she|it|they|you|i|we|что|чтобы|он|она|оно|они|ты|вы|я|мы)(?!\w)|(?<!\w)(?-i:[A-ZА-ЯЁ])\w",
    re.IGNORECASE,
)
_SENTENCE_SPAN = re.compile(r"[^.!?…\n]+[.!?…]*")
MARKDOWN = re.compile(r"[*_`#>|]+")


def says_never_told(answer: str, question: str = "", spans: list[Spans] | None = None) -> bool:
    """True when `answer` claims the agent was never told, doesn't know or found nothing — and
    does not then answer all the same (a value after the claim, or a guess: "not sure — maybe
    Thursday?"); a number or name of the `question` ("nothing on your 10 km time") is no answer."""
    for lang, text, claims in claim_spans(answer, question) if spans is None else spans:
        body = _HEADING.sub(lambda m: " " * len(m.group(0)), text)  # "### Trip to Rome" answers nothing
        if (
            _guesses(text, lang)
            or _corrected(text, claims, lang)
            or _about_a_change(body, claims, question, lang)
            or _answered_before(body, lang, claims, question)
            or _opens_with_answer(text, claims, question, lang)
            or _answered_first(body, claims, question, lang)
        ):
            return False
        kinds = {kind for kind, words in lang.asks_for.items() if words.search(question)}
        if (
            kinds
            and not _claims_what_was_asked(text, claims, question, lang)
            and _gives_asked_kind(text, claims, kinds, lang)
        ):
            return False
        if lang.numbers_only.search(question) and not _holds_count(text, claims, lang):
            return True  # "how many", no number anywhere but in its claims: whatever else it says
        # «Номер столика мне не сообщали. Бронь на 20:00 — есть»: a claim that names what was
        # asked, in words of the question's, leaves a later sentence's figures as what else it knows
        named = bool(question) and _claims_what_was_asked(text, claims, question, lang, strict=True)
        if any(not _answers_after(text[end:], lang, later=not named) for _, end in claims):
            return True
    return False


type Spans = tuple[Phrasings, str, list[tuple[int, int]]]


def claim_spans(answer: str, question: str = "") -> list[Spans]:
    """Per language claiming not to know in `answer`: it, the text read (quotes out, the question's
    names and numbers marked) and the claims' spans; none for "forgot as asked" ([deleted])."""
    text = unquoted(answer)
    if question:  # the question's own numbers and names are its topic, not an answer
        text = _without_topic(text, question)
    out = []
    for lang in phrasings():
        found = _claims_in(text, lang)
        claims = [c for c in found if not (_about_others(text, c, lang) or lang.refuses(text, c))]
        if claims and not lang.forget.search(text):
            out.append((lang, text, claims))
    return out


def _without_topic(text: str, question: str) -> str:
    """`text` with the question's numbers and names ("5k", "10km" and its "10", «Оля» and its
    case forms: «Оли», «Олю», also from «Оле») as a mark that is no value."""
    tokens = set(re.findall(r"\d+(?:[.,]\d+)?(?:[^\W\d_]+)?|[A-ZА-ЯЁ][\w-]+", question))
    tokens |= set(re.findall(r"\d+(?=[^\W\d_])", question))
    for token in tokens:
        text = re.sub(rf"(?<!\w){re.escape(token)}(?!\w)", TOPIC, text)
    opening = question.lstrip()  # «Какой…?»: the question's first word is capitalised anyway
    stems = {
        _CASE_ENDING.sub("", t) for t in tokens if _CYRILLIC_NAME.fullmatch(t) and not opening.startswith(t)
    }
    for stem in (s for s in stems if len(s) >= _STEM):
        text = re.sub(rf"(?<!\w){re.escape(stem)}{_CASE_ENDINGS}?(?!\w)", TOPIC, text)
    return text


# a Russian name's case ending: «Оля», «Оли», «Олей» share «Ол» (not «Олег»)
_CASE_ENDINGS = r"(?:ой|ей|ою|ею|ом|ем|а|я|и|ы|е|у|ю|й|ь)"
_CASE_ENDING = re.compile(_CASE_ENDINGS + "$")
_CYRILLIC_NAME = re.compile(r"[А-ЯЁ][а-яё]{2,}")
_STEM = 3  # «Кат» of «Кати»; «Ян» of «Яна» would take in «Яном»


def plain_word(word: str, lang: Phrasings) -> bool:
    """A word a claim is made of, or leads in with: no answer in it."""
    return any(p.fullmatch(word) for p in (lang.filler, lang.lead_in, lang.negation, lang.knowing))


def _about_others(text: str, claim: tuple[int, int], lang: Phrasings) -> bool:
    """ "Peanuts — she carries antihistamines. No other allergies were mentioned": a claim
    about what else there is, after the reply has said something first, is no claim about
    what was asked."""
    start, end = claim
    said = [w for w in key_terms(text[:start]) if not plain_word(w, lang) and not lang.others.fullmatch(w)]
    if not said:  # "O negative. I don't have anything else …"; not "Sorry, but I don't…"
        return False
    sentence_start = _sentence_start_at(text, start)
    after = _CLAIM_CLAUSE_END.search(text, end)
    stop = min(after.start() if after else len(text), _sentence_end_at(text, end))
    return bool(lang.others.search(text[sentence_start:stop]))


def _claims_what_was_asked(
    text: str, claims: list[tuple[int, int]], question: str, lang: Phrasings, strict: bool = False
) -> bool:
    """Whether a sentence holding a claim names what the question asks about ("I don't have
    your sister's birthday — only your mum's") — then a value beside it is what else is known;
    a claim about another detail ("You didn't tell me the venue") leaves the value the answer.
    `strict`: only a claim made of the question's words and words naming the asked value
    (`value_words`: "date" to "when"), nothing of its own ("the flight number" to "what time is
    my flight" names another detail) — the reading that lets it set aside figures around it."""
    asked = key_terms(question)
    kinds = ["any", *(kind for kind, words in lang.asks_for.items() if words.search(question))]
    named = re.compile(
        "|".join(lang.value_words[k].pattern for k in kinds if k in lang.value_words) or r"(?!)",
        re.IGNORECASE,
    )
    for sentence in _SENTENCE_SPAN.finditer(text):
        inside = [end for start, end in claims if sentence.start() <= start < sentence.end()]
        if not inside:
            continue
        # the claim's own clause: up to the first break after it ("…names, only the size: five")
        after = _CLAIM_CLAUSE_END.search(text, min(inside), sentence.end())
        while after and _OBJECT_CLAUSE.match(
            text, after.end()
        ):  # "…, что у вас есть кошка": what it wasn't told
            after = _CLAIM_CLAUSE_END.search(text, after.end(), sentence.end())
        body = text[sentence.start() : after.start() if after else sentence.end()]
        if strict and after and text[after.start()] == ",":  # "Но не знаю, считаете вы…": its object
            body = text[sentence.start() : sentence.end()]
        own = [
            w
            for w in key_terms(body)
            if len(w) > (2 if strict else 3)  # "the bay", «год» are details too
            and not any(p.fullmatch(w) for p in (lang.knowing, lang.negation, lang.filler))
        ]
        # a word of its own, neither the question's nor one naming the asked value: the claim
        # is about another detail ("I don't have the flight number" to "what time is my flight")
        foreign = [w for w in own if not any(terms_match(a, w) for a in asked) and not named.fullmatch(w)]
        if (
            not own  # "I don't know.", "I don't have that.": a bare claim is about the question
            or TOPIC in body  # a name or number of the question, taken out before
            or (not foreign if strict else any(terms_match(a, w) for a in asked for w in own))
        ):
            return True
    return False


def _gives_asked_kind(text: str, claims: list[tuple[int, int]], kinds: set[str], lang: Phrasings) -> bool:
    """Whether, outside its claims, the reply holds a value of the kind the question asks for
    ("only the size: five people" to "how many", "only the month: January" to "when", "just
    Brenda" to "who"): then it answers, and says besides what else it doesn't know. The
    question's own numbers and names are gone from `text` already; a sentence on what else it
    knows ("Вы говорили, что договор до 31 мая, но…") is no answer."""
    text = _SENTENCE_SPAN.sub(
        lambda m: " " * len(m.group(0)) if lang.told_else.search(m.group(0)) else m.group(0), text
    )
    outside = MARKDOWN.sub(" ", outside_claims(text, claims))  # "._\n\nIf you…" opens no name
    plain = digits_for_words(ONE.sub(" ", outside))  # "one thing I wasn't told" holds no count
    months = _cues().month_words
    if "count" in kinds and _DIGIT.search(plain):
        return True
    if "time" in kinds and (
        _CLOCK.search(plain) or any(w in months for w in re.findall(r"\w+", outside.lower()))
    ):
        return True
    return bool(kinds & {"name", "place"}) and bool(NAMED.search(outside))


def outside_claims(text: str, claims: list[tuple[int, int]]) -> str:
    """`text` with its claims' spans taken out (overlapping spans once)."""
    rest, last = [], 0
    for start, end in sorted(claims):
        rest.append(text[last:start])
        last = max(last, end)
    rest.append(text[last:])
    return " ".join(rest)


def _holds_count(text: str, claims: list[tuple[int, int]], lang: Phrasings) -> bool:
    """Whether the reply, outside its claims, holds a number ("four", «трое», "twice") or names
    what it counts — the question's own numbers are gone from `text` already."""
    outside = outside_claims(text, claims)
    if lang.count_words.search(outside) or len(NAMED.findall(outside)) >= 2:
        return True  # "just one", «трое»; "so far it's Anna, Tom and Priya" counts them
    return bool(_DIGIT.search(digits_for_words(ONE.sub(" ", outside))))


def _corrected(text: str, claims: list[tuple[int, int]], lang: Phrasings) -> bool:
    """ "I can't find it… no wait, I do: it's James", «не помню… ой, подожди, помню! Девятого»:
    after the claim the reply corrects itself and goes on with words of its own."""
    fix = lang.correction.search(text, min(s for s, _ in claims))
    return fix is not None and any(not plain_word(w, lang) for w in key_terms(text[fix.end() :]))


def _about_a_change(text: str, claims: list[tuple[int, int]], question: str, lang: Phrasings) -> bool:
    """ "LK19 ABC — unless you changed cars, which I haven't heard about", «Восемь. Новых отпусков
    с тех пор у меня не записано»: every claim is about a change the question doesn't ask about,
    and the reply says something of its own besides — the value, with a caveat."""
    if lang.change.search(question):
        return False
    kept, last = [], 0
    for start, end in sorted(claims):
        sentence_start = _sentence_start_at(text, start)
        stop = _sentence_end_at(text, end)
        if not lang.change.search(text, sentence_start, stop):
            return False
        # what the claim's clause says is the claim; before it, in its sentence, may be the value
        clause = max(
            (m.end() for m in _CLAIM_CLAUSE_END.finditer(text, sentence_start, start)), default=sentence_start
        )
        kept.append(text[last:clause])
        last = max(last, stop)
    kept.append(text[last:])
    said = " ".join(kept)
    asked = key_terms(question)
    own = [
        w for w in key_terms(said) if not plain_word(w, lang) and not any(terms_match(w, a) for a in asked)
    ]
    return bool(own) or bool(_DIGIT.search(digits_for_words(said)))  # «Двенадцать.» is a value too


def _guesses(text: str, lang: Phrasings) -> bool:
    """ "Not sure — probably Thursday?", «возможно, Барсик?»: a guess is an answer."""
    return any(
        lang.guess.search(s)
        and not _claims_in(s, lang)
        and not lang.advice.search(s)  # "maybe check the welcome book?" guesses no value
        and (
            _DIGIT.search(s)
            or (s.rstrip().endswith("?") and not lang.asks_back.search(s))
            or re.search(r"(?<=[\w,])\s+[A-ZА-ЯЁ]\w+", s)  # "Кажется, Сафронов"
        )
        for sentence in _SENTENCE_END.split(text)
        for s in _CLAUSE_BREAK.split(sentence)  # "No record of it — maybe Biscuit?"
        if s.strip()
    )  # a guess word that only softens the claim ("вы, кажется, не рассказывали") is no guess


_CLAUSE_BREAK = re.compile(
    r"\s[—–-]\s|[;:]\s|,\s+(?=(?:but|но|а|maybe|perhaps|probably|возможно|наверное)\b)"
)


def _sentence_start_at(text: str, pos: int) -> int:
    """Where the sentence holding `pos` starts."""
    return max(text.rfind(c, 0, pos) for c in ".!?…\n") + 1


def _sentence_end_at(text: str, start: int) -> int:
    """Where the sentence holding `start` ends."""
    end = _SENTENCE_END.search(text, start)
    return end.start() if end else len(text)


def _answered_first(text: str, claims: list[tuple[int, int]], question: str, lang: Phrasings) -> bool:
    """ "Edinburgh. You didn't say which street, though.", "Yes — a hip replacement, left side.
    You didn't say which hospital.": a first sentence that says something of its own (words
    the question doesn't hold) and every claim after it about a detail the question doesn't
    name. A first sentence that only leads in ("I checked my notes.") holds no such words."""
    if not question:
        return False
    first = next((m for m in _SENTENCE_SPAN.finditer(text) if m.group(0).strip()), None)
    if first is None or first.group(0).rstrip().endswith("?") or any(s < first.end() for s, _ in claims):
        return False
    asked = key_terms(question)
    own = [
        w
        for w in key_terms(first.group(0))
        if not plain_word(w, lang) and not any(terms_match(w, a) for a in asked)
    ]
    words = _WORD.findall(first.group(0))
    valued = (
        len(words) <= 4
        or _DIGIT.search(digits_for_words(first.group(0)))  # «Два литра — …»
        or any(w.lower() in _cues().month_words for w in words)  # «была в апреле»
        or NAMED.search(first.group(0))
        or lang.yes_no.match(first.group(0))
    )
    # "He's a paramedic with the ambulance service. You never said which station": a claim
    # about which detail, after a sentence that names what something is
    detail = any(lang.which.search(text, start, _sentence_end_at(text, start)) for start, _ in claims)
    if not own or not (valued or detail) or len(words) > 10 or lang.stall.search(first.group(0)):
        return False
    yes = lang.yes_no.match(first.group(0))
    if yes and _SET_APART.match(first.group(0), yes.end()):
        return True  # "Yes — penicillin. … I don't have any food allergies noted."
    return not _claims_what_was_asked(text, claims, question, lang)


_OPENING_END = re.compile(r"[.!:;(—–]\W*$|\s-\s*$")
_SUBJECT_LAST = re.compile(
    r"(?:(?<!\w)(?:though|although|but|however|yet|но|хотя|правда|однако),?\s*)?"
    r"(?:(?<!\w)(?:you|i|we|вы|ты|я|мы)\s*)?$",
    re.IGNORECASE,
)  # "Dr Patel — though you never told me…": the claim's subject and the word leading to it
_DASHED = re.compile(r"[—–]\W*$|\s-\s*$")


def _opens_with_answer(text: str, claims: list[tuple[int, int]], question: str, lang: Phrasings) -> bool:
    """ "Lyon. (You didn't tell me the venue.)", "Dr Haddad — no other GP has come up": the
    reply opens with a short answer, set apart, and its claim is about another detail — one
    the question doesn't name, or "no other"."""
    start = min(s for s, _ in claims)
    opening = _SUBJECT_LAST.sub("", text[:start])  # "Mustard yellow — you said not…": the claim's subject
    words = _WORD.findall(opening)
    if not question or not 1 <= len(words) <= 4 or not _OPENING_END.search(opening.rstrip()):
        return False
    if any(
        lang.filler.fullmatch(w) or lang.negation.fullmatch(w) or lang.knowing.fullmatch(w) for w in words
    ):
        return False  # "Sorry — …", «Увы: …»: no answer, only the way into the claim
    named = len(words) <= 3 and any(
        w[0].isupper() for w in words[1:] or words
    )  # a first word is capitalised anyway
    # "The shower — I don't remember the date": a few words of its own, before a dash
    asked = key_terms(question)
    own = _DASHED.search(opening.rstrip()) and any(
        not plain_word(t, lang) and not any(terms_match(t, a) for a in asked) for t in key_terms(opening)
    )
    if not (_DIGIT.search(opening) or named or (len(words) <= 3 and own)):
        return False
    clause = text[start : _sentence_end_at(text, start)]
    return bool(lang.other_knowledge.search(clause)) or not _claims_what_was_asked(
        text, claims, question, lang
    )


def _answered_before(text: str, lang: Phrasings, claims: list[tuple[int, int]], question: str) -> bool:
    """ "Dr Lindqvist. I don't have any other dentist noted.": the first sentence answers (a
    number or a name) and the claim only follows it."""
    first = next((m for m in _SENTENCE_SPAN.finditer(text) if _WORD.search(m.group(0))), None)
    if (
        first is None
        or first.group(0).rstrip().endswith("?")
        or any(start < first.end() for start, _ in claims)
    ):
        return False  # a table's rule ("|---|") or a heading is no first sentence
    said = first.group(0)
    if question and _claims_what_was_asked(text, claims, question, lang, strict=True):
        return False  # «По Пете записан только английский — 17:00. Плавания нет»: what else it knows
    return bool(_DIGIT.search(said) or re.search(r"(?<=\w)\s+[A-ZА-ЯЁ]\w+", said))


def claims_never_told(answer: str) -> bool:
    """True when `answer` says anywhere that the agent was never told — even if it then adds
    what it does know ("You never mentioned a food allergy; I only know of the amoxicillin
    one"). For abstention questions, where that claim is the answer."""
    text = unquoted(answer)
    return any(lang.claims.search(text) for lang in phrasings())


_OPENING_WORDS = 2  # "But it's Friday, I think", «Но, кажется, в пятницу»


def _answers_after(rest: str, lang: Phrasings, later: bool = True) -> bool:
    """Whether the text after a claim gives an answer: a sentence that is no question or
    request and holds a number, or goes on after a connector with words of its own. `later`
    False: only the claim's own sentence (an ellipsis goes on: "Not sure… oh wait, yes: 6%") and
    a guess asked after it may."""
    for n, sentence in enumerate((_SENTENCE_END if later else _SENTENCE_END_FULL).split(rest)):
        if n and not later and not sentence.rstrip().endswith("?"):
            continue  # but a guess asked ("Может, у соседки Тамары?") answers
        if not sentence.strip() or lang.request.search(sentence.rstrip().rstrip("?")):
            continue
        if n and lang.advice.search(sentence) and not _NUMBER.search(sentence):
            continue  # "Maybe check the welcome book in the kitchen?": advice, no answer
        if n and lang.told_else.search(sentence):
            continue  # a sentence of its own on what else it knows: "I know he's in Year 3, though."
        if sentence.rstrip().endswith("?"):  # "… Елена Викторовна Шубина?": a guess, asked
            if _DIGIT.search(sentence) or (
                not lang.asks_back.search(sentence)
                and re.search(
                    r"(?<=\w)\s+[A-ZА-ЯЁ]\w+|^\s*[A-ZА-ЯЁ]\w+\s+[A-ZА-ЯЁ]\w",
                    sentence,  # not "Should I …?"
                )
            ):
                return True
            continue
        if lang.other_knowledge.search(sentence) or _claims_in(sentence, lang):
            continue  # "I only know she is 64", "… but not when her birthday is"
        if _DIGIT.search(sentence):
            return True
        joined = lang.connector.search(sentence)
        # in a later sentence, a connector opens it ("But it's Friday, I think") or it is a
        # comment of its own ("Kids' feet change fast, so a quick measure…")
        if joined and (not n or len(_WORD.findall(sentence[: joined.start()])) <= _OPENING_WORDS):
            tail = sentence[joined.end() :]
            if lang.aside.match(tail.lstrip()):
                continue  # "— which is probably wise for a PIN"
            # "…, but we never set a number": what follows says it doesn't know either
            denied = lang.negation.search(tail) and not _DIGIT.search(tail)
            if len(_WORD.findall(tail)) >= 2 and not _claims_in(tail, lang) and not denied:
                return True
    return False
