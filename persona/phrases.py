"""The few fixed phrases the persona wraps around verbatim benchmark text, per language.

They are data (the `phrases` table of `persona/languages/<code>.json5`): the scripted
driver's fact batches, updates and nudges, and the introduction of a scale ladder's
distractor sessions. What a caller may rely on: `phrases_for` returns the language's full
table, or raises `UnknownLanguage` — a Russian benchmark is never framed in English.
"""

from __future__ import annotations

from persona.languages import language_table


def phrases_for(language: str) -> dict[str, str]:
    phrases: dict[str, str] = language_table(language)["phrases"]
    return phrases
