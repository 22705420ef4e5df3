"""The never-told detector's words, per language, read from `persona/languages/*.json5`
(`never_told`, `not_known`, `answer_after`, `stall`, `asks_for`, …): compiled once, in the
order the languages are known. Kept apart from the detector (`never_told.py`) so its rules read
without the table's plumbing; a caller may rely on every field being a compiled pattern, one
that matches nothing where a language leaves the entry out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from persona.languages import known_languages, language_table


@dataclass(frozen=True)
class Phrasings:
    claims: re.Pattern[str]
    connector: re.Pattern[str]
    contrast: re.Pattern[str]  # "but", «но»: where one claim ends and something else begins
    request: re.Pattern[str]
    asks_back: re.Pattern[str]  # "Did Strava record it?": a question back to the user, no guess
    count_words: re.Pattern[str]  # "twice", «трое»: a count without a digit
    numbers_only: re.Pattern[str]  # "how many": a question only a number answers
    told_not_to: re.Pattern[str]  # "not to …" after "said": what was said, no denial
    change: re.Pattern[str]  # "changed", «с тех пор»: a claim about a change, not the fact
    correction: re.Pattern[str]  # "no wait, I do": the reply corrects its claim
    advice: re.Pattern[str]  # "maybe check…", "Marcus might know": a sentence that only advises
    stall: re.Pattern[str]
    found: re.Pattern[str]  # "… yes, Camino de Santiago", «… да, нашла»: the promise kept in the same reply
    negation: re.Pattern[str]
    knowing: re.Pattern[str]
    other_knowledge: re.Pattern[str]
    told_else: re.Pattern[str]  # "you said…", "I know…": a later sentence on what else it knows
    aside: re.Pattern[str]  # "— which is wise": after a claim's dash, a comment on it, no answer
    which: re.Pattern[str]  # "which station", «в какой больнице»: a claim about one detail
    yes_no: re.Pattern[str]  # "Yes —", «Нет,»: a reply that opens by answering a yes/no question
    lead_in: re.Pattern[str]  # "checked", "searched", «посмотрела»: a first sentence that only leads in
    telling: re.Pattern[str]  # "said", «говорили»: knowing words that report what was said
    others: re.Pattern[str]  # "no other allergies", «других аллергий»: a claim about what else there is
    denied_after: int  # how many words after a knowing word its negation may come ("found nothing")
    filler: re.Pattern[str]
    exception: re.Pattern[str]  # "apart from", «кроме»: what follows may be the value
    no_value: re.Pattern[str]  # words that name no value ("could", «по-моему»): no competitor beside a claim
    guess: re.Pattern[str]
    forget: re.Pattern[str]  # "you asked me to forget": a deletion honoured, not a never-told claim
    refusal: re.Pattern[str]  # "I'd rather not discuss salary details": a refusal, no never-told claim
    asks_for: dict[str, re.Pattern[str]]  # "how many", «когда»: the kind of value a question asks for
    # "date" to a "when" question, «сумма» to «сколько»: a claim's words that name the asked value
    value_words: dict[str, re.Pattern[str]]

    def refuses(self, text: str, claim: tuple[int, int]) -> bool:
        """Whether a claim's words lie in a refusal to say ("I'd rather not discuss salary
        details", «Не могу сообщать номера документов»): no claim of never being told."""
        return any(claim[0] < m.end() and m.start() < claim[1] for m in self.refusal.finditer(text))


@cache
def phrasings() -> tuple[Phrasings, ...]:
    out = []
    for code in known_languages():
        table = language_table(code)
        known = table.get("not_known", {})
        claims = table.get("never_told", [])
        if not claims:
            continue
        after = table.get("answer_after", {})
        out.append(
            Phrasings(
                claims=re.compile("|".join(f"(?:{p})" for p in claims), re.IGNORECASE),
                connector=re.compile(after.get("connector", r"(?!)"), re.IGNORECASE),
                contrast=re.compile(after.get("contrast", r"(?!)"), re.IGNORECASE),
                advice=words_pattern(table.get("advice", [])),
                request=re.compile(after.get("request", r"\?"), re.IGNORECASE),
                asks_back=re.compile(after.get("asks_back", r"(?!)"), re.IGNORECASE),
                count_words=words_pattern(table.get("count_words", [])),
                numbers_only=words_pattern(table.get("numbers_only", [])),
                told_not_to=re.compile(known.get("told_not_to", r"(?!)"), re.IGNORECASE),
                change=words_pattern(known.get("change", [])),
                correction=re.compile(after.get("correction", r"(?!)"), re.IGNORECASE),
                stall=re.compile(
                    "|".join(f"(?:{p})" for p in table.get("stall", [])) or r"(?!)", re.IGNORECASE
                ),
                found=words_pattern(table.get("stall_kept", [])),
                negation=words_pattern(known.get("negation", [])),
                knowing=words_pattern(known.get("knowing", [])),
                other_knowledge=words_pattern(known.get("other_knowledge", [])),
                told_else=words_pattern(known.get("told_else", [])),
                aside=words_pattern(known.get("aside", [])),
                which=words_pattern(known.get("which", [])),
                yes_no=re.compile(
                    r"\W*(?:" + ("|".join(known.get("yes_no", [])) or r"(?!)") + r")(?!\w)",
                    re.IGNORECASE,
                ),
                lead_in=words_pattern(known.get("lead_in", [])),
                telling=words_pattern(known.get("telling", [])),
                others=words_pattern(known.get("others", [])),
                denied_after=int(known.get("denied_after", 2)),
                filler=words_pattern(known.get("filler", [])),
                no_value=words_pattern(known.get("no_value", [])),
                exception=words_pattern(known.get("exception", [])),
                guess=words_pattern(table.get("grading", {}).get("guess", [])),
                asks_for={
                    kind: re.compile(r"(?<!\w)(?:" + "|".join(words) + r")(?!\w)", re.IGNORECASE)
                    for kind, words in table.get("asks_for", {}).items()
                },
                value_words={
                    kind: words_pattern(words) for kind, words in table.get("value_words", {}).items()
                },
                refusal=re.compile(known.get("refusal", r"(?!)"), re.IGNORECASE),
                forget=re.compile(
                    "|".join(f"(?:{p})" for p in table.get("grading", {}).get("asked_to_forget", []))
                    or r"(?!)",
                    re.IGNORECASE,
                ),
            )
        )
    return tuple(out)


def words_pattern(words: list[str]) -> re.Pattern[str]:
    """Whole words or phrases; a trailing * marks a stem; "n't" glues to its verb."""
    alternatives = []
    for w in words:
        body = re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w)
        alternatives.append(body if w.startswith("n'") else r"(?<!\w)" + body + r"(?!\w)")
    return re.compile("|".join(alternatives) or r"(?!)", re.IGNORECASE)
