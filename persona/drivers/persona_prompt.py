"""The parts of the LLM persona's prompt made at run time (the fixed prompt is
`prompts/system.md`): the benchmark's language, said rather than assumed, and the one-off
reminder when the model wrote nothing or wrote as the assistant."""

from __future__ import annotations

from persona.languages import UnknownLanguage, language_table


def language_part(code: str) -> str:
    try:
        name = str(language_table(code).get("name", code))
    except UnknownLanguage:
        name = code
    return (
        f"# Language\n\nThis scenario is in {name} (`{code}`): write every message to the assistant "
        "in that language, whatever language the scenario's notes or the assistant use."
    )


def reminder(empty: bool) -> str:
    """Sent once, out of the transcript, to regenerate an empty or out-of-role message."""
    if empty:
        return "Reminder: write your next chat message to the assistant now, as the person you play."
    return "Reminder: you are the user, not the assistant. Write your next message as the person you play."
