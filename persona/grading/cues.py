"""The words the exact grader reads answers by, per language, from `persona/languages/*.json5`
(`grading`): month names, past and current markers, hedges, guesses, periods, what a [deleted]
or [abstain] question's right answer says. Loaded once; data, not code — a new language adds
its words there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from persona.languages import known_languages, language_table

_AUXILIARIES = frozenset({"was", "were", "был", "была", "было", "были"})


@dataclass(frozen=True)
class Cues:
    months: dict[int, str]  # month number → the form dates take in the expected answers
    months_ambiguous: dict[int, str]  # English: "05/10" is May or October — converted only when unambiguous
    month_words: frozenset[str]
    past: re.Pattern[str]
    current: re.Pattern[str]
    forget: re.Pattern[str]  # "you asked me to forget": a [deleted] question's right answer
    guess: re.Pattern[str]  # "I think", "кажется": a guess, not an abstention
    hedge: re.Pattern[str]  # guess words and "not sure", «то ли»: a value given so is no verdict
    rejected: re.Pattern[str]  # "not 950", «а не 950»: a value ruled out, no rival
    unchanged: re.Pattern[str]  # "it never changed", «ни разу не меняли»: false of an updated fact
    periods: dict[str, re.Pattern[str]]  # "a week", «в месяц»: a figure's period
    recurring: dict[str, re.Pattern[str]]  # "every month": a period in the facts; in an answer after a figure
    measures: dict[str, re.Pattern[str]]  # "square feet", «соток»: what a figure of area counts
    not_had: re.Pattern[str]  # "you don't have a dog": on [abstain], a right answer
    hints: re.Pattern[str]  # "it starts with a D": on [deleted], a leak
    remarks: re.Pattern[str]  # "keep it somewhere safe", «между нами»: an aside that claims nothing
    short_forms: dict[str, str]  # "пн" → "понедельник", "sept" → "september": abbreviations of words
    name_forms: tuple[tuple[str, ...], ...]  # ("михаил", "миша"): one given name's full and short forms
    relative_days: dict[str, int]  # "послезавтра" → 2: a day named by its distance from today
    relative_span: re.Pattern[str]  # "in two weeks", «через 10 дней»: how far off, said beside a date


@cache
def cues() -> Cues:
    months: dict[int, str] = {}
    ambiguous: dict[int, str] = {}
    words: set[str] = set()
    past: list[str] = []
    current: list[str] = []
    forget: list[str] = []
    guess: list[str] = []
    hedge: list[str] = []
    rejected: list[str] = []
    unchanged: list[str] = []
    periods: dict[str, list[str]] = {}
    recurring: dict[str, list[str]] = {}
    measures: dict[str, list[str]] = {}
    not_had: list[str] = []
    hints: list[str] = []
    remarks: list[str] = []
    relative_span: list[str] = []
    short_forms: dict[str, str] = {}
    relative_days: dict[str, int] = {}
    name_forms: list[tuple[str, ...]] = []
    for code in known_languages():
        grading = language_table(code).get("grading", {})
        for n, name in enumerate(grading.get("months", []), start=1):
            words.add(name)
            if code == "ru":  # "05.10" meets "5 октября"; English numeric dates are ambiguous (US/EU)
                months[n] = name
            else:
                ambiguous[n] = name
        past += grading.get("past", [])
        current += grading.get("current", [])
        forget += grading.get("asked_to_forget", [])
        guess += grading.get("guess", [])
        hedge += grading.get("guess", []) + grading.get("hedge", [])
        rejected += grading.get("rejected", [])
        unchanged += grading.get("unchanged", [])
        not_had += grading.get("not_had", [])
        hints += grading.get("hints", [])
        remarks += grading.get("remarks", [])
        relative_span += grading.get("relative_span", [])
        for name, words_of in grading.get("periods", {}).items():
            periods.setdefault(name, []).extend(words_of)
        for name, words_of in grading.get("recurring", {}).items():
            recurring.setdefault(name, []).extend(words_of)
        for full, shorts in grading.get("short_forms", {}).items():
            short_forms.update({short.lower(): full for short in shorts})
        for days, said in grading.get("relative_days", {}).items():
            relative_days.update({phrase.lower(): int(days) for phrase in said})
        name_forms += [tuple(n.lower().replace("ё", "е") for n in g) for g in grading.get("name_forms", [])]
        for name, words_of in grading.get("measures", {}).items():
            measures.setdefault(name, []).extend(words_of)

    def cue(words: list[str]) -> re.Pattern[str]:
        """Whole words (a trailing * marks a stem); "was"/"был" not as a passive's auxiliary
        ("was moved to 14:30" says the new value; "he was born on 20 April" says no old one)."""
        alternatives = []
        for w in words:
            if w.endswith("*"):
                alternatives.append(re.escape(w[:-1]) + r"\w*")
            elif w.lower() in _AUXILIARIES:
                alternatives.append(re.escape(w) + r"(?!\w)(?!\s+(?:\w+(?:ed|ен[аоы]?|ан[аоы]?|ён)|born)\b)")
            else:
                alternatives.append(re.escape(w) + r"(?!\w)")
        return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + ")", re.IGNORECASE)

    forget_re = re.compile("|".join(f"(?:{p})" for p in forget) or r"(?!)", re.IGNORECASE)

    def phrases(table: dict[str, list[str]]) -> dict[str, re.Pattern[str]]:
        return {
            name: re.compile(r"(?<!\w)(?:" + "|".join(re.escape(w) for w in ws) + r")(?!\w)", re.IGNORECASE)
            for name, ws in table.items()
        }

    return Cues(
        months, ambiguous, frozenset(words), cue(past), cue(current), forget_re,
        cue(guess), cue(hedge), cue(rejected), cue(unchanged), phrases(periods),
        phrases(recurring), phrases(measures),
        re.compile("|".join(f"(?:{p})" for p in not_had) or r"(?!)", re.IGNORECASE),
        cue(hints), cue(remarks), short_forms, tuple(name_forms), relative_days,
        re.compile("|".join(f"(?:{p})" for p in relative_span) or r"(?!)", re.IGNORECASE),
    )  # fmt: skip
