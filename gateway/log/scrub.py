"""Text from outside made writable: lone surrogate code points replaced by U+FFFD.

A hostile or broken agent can send JSON with `"\\ud800"`: Python decodes it to a `str` that
UTF-8 can't encode, so writing it would end the run — and every resume of it — with
`'utf-8' codec can't encode …`. Text from outside (agent replies, Bot API messages, LLM
bodies) is scrubbed once where it comes in, and the fact is logged there; the log writer
scrubs too, as the last line, so no record can make the log unwritable.
"""

from __future__ import annotations

import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def scrub_text(text: str) -> tuple[str, int]:
    """`text` with lone surrogates replaced, and how many there were."""
    found = len(_LONE_SURROGATE.findall(text))
    return (_LONE_SURROGATE.sub(REPLACEMENT, text), found) if found else (text, 0)


def scrub(value: Any) -> tuple[Any, int]:
    """A copy of a JSON-like value with every string scrubbed (keys too), and the count."""
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        total = 0
        for key, item in value.items():
            clean_key, a = scrub(key)
            clean_item, b = scrub(item)
            out[clean_key] = clean_item
            total += a + b
        return out, total
    if isinstance(value, (list, tuple)):
        items = [scrub(item) for item in value]
        cleaned = [clean for clean, _ in items]
        return (tuple(cleaned) if isinstance(value, tuple) else cleaned), sum(n for _, n in items)
    return value, 0
