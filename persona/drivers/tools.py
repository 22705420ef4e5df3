"""The LLM persona's tools: their specs, as the model sees them.

Their effects are in `persona/drivers/tool_calls.py` (`_tool_*`): bad input never raises, it comes
back to the model as a tool error it can act on; the engine, not the model, keeps the agenda
(`next_phase` refuses while the phase's required facts are untold or its questions ungraded,
and the retry rule's ×0.5 is applied there, not by the model).
"""

from __future__ import annotations

from persona.llm.types import ToolSpec

_FILE = {"type": "string", "description": "facts file name, e.g. profile or family"}

TOOL_SPECS = [
    ToolSpec(
        "next_phase",
        "Finish the current phase and get the next one. Refused, with the reason, while the phase is not done.",
        {"type": "object", "properties": {}},
    ),
    ToolSpec(
        "facts_read",
        "Read a facts file: every fact with its id and current value.",
        {"type": "object", "properties": {"file": _FILE}, "required": ["file"]},
    ),
    ToolSpec(
        "facts_mark_told",
        "Mark facts as told, right after the assistant replied to the message that stated them.",
        {
            "type": "object",
            "properties": {"file": _FILE, "ids": {"type": "array", "items": {"type": "string"}}},
            "required": ["file", "ids"],
        },
    ),
    ToolSpec(
        "facts_get_untold",
        "List the facts of a file you have not told yet.",
        {"type": "object", "properties": {"file": _FILE}, "required": ["file"]},
    ),
    ToolSpec(
        "facts_edit",
        "Change a fact's value (write — to delete it).",
        {
            "type": "object",
            "properties": {"file": _FILE, "id": {"type": "string"}, "text": {"type": "string"}},
            "required": ["file", "id", "text"],
        },
    ),
    ToolSpec(
        "facts_add",
        "Add a new fact to a section of a facts file; returns its id.",
        {
            "type": "object",
            "properties": {"file": _FILE, "section": {"type": "string"}, "text": {"type": "string"}},
            "required": ["file", "section", "text"],
        },
    ),
    ToolSpec(
        "ask_again",
        "The assistant said it doesn't know or was never told: send it `message`, asking it to "
        "search its memory (no hint of the answer). Its answer is the question's second attempt.",
        {
            "type": "object",
            "properties": {"question_id": {"type": "string"}, "message": {"type": "string"}},
            "required": ["question_id", "message"],
        },
    ),
    ToolSpec(
        "log_evaluation",
        "Grade the assistant's answer to a question: score 0-10 and a short comment.",
        {
            "type": "object",
            "properties": {
                "question_id": {"type": "string"},
                "score": {"type": "number"},
                "comment": {"type": "string"},
            },
            "required": ["question_id", "score", "comment"],
        },
    ),
]
