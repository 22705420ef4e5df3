"""Bounds for reading JSON5 text from outside (benchmarks, configs).

json5 recurses once per nesting level: thousands of levels exhaust the stack (a
RecursionError, a traceback) and take seconds before they do. Callers check `json5_nesting`
against `MAX_JSON_DEPTH` before parsing and report the file as an error.
"""

from __future__ import annotations

MAX_JSON_DEPTH = 32


def json5_nesting(raw: str) -> int:
    """How deep objects and lists nest in JSON5 text, strings left out (json5 recurses per
    level: thousands of levels exhaust the stack and take seconds before they do)."""
    depth = deepest = 0
    quote = ""
    escaped = False
    for ch in raw:
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest
