"""Where each key and list item of a JSON5 text starts: the line an error about it names.

json5 gives values, not positions. Searching the text for a key's name finds its first
occurrence anywhere — a bad `limits` in the third run was reported at the first run's line.
`SourceMap` reads the text once (strings, comments and unquoted keys as JSON5 has them) and maps
each value's path — `("runs", 2, "limits")` — to the line it starts on.

What a caller may rely on: `line(*path)` is the line of the deepest part of `path` the text has
(a key the text lacks: its object's line), 0 for nothing at all; the map never raises on text
json5 rejects (it stops where the text stops making sense).
"""

from __future__ import annotations

import re

type KeyPath = tuple[str | int, ...]

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?)
  | (?P<punct>[{}\[\]:,])
  | (?P<word>[^\s{}\[\]:,"'/]+|/)
    """,
    re.VERBOSE | re.DOTALL,
)


class SourceMap:
    """Each value's path in a JSON5 text → the line it starts on (1-based)."""

    def __init__(self, raw: str) -> None:
        self.lines: dict[KeyPath, int] = {}
        self._read(raw)

    def line(self, *path: str | int) -> int:
        for end in range(len(path), -1, -1):
            found = self.lines.get(tuple(path[:end]))
            if found:
                return found
        return 0

    def _read(self, raw: str) -> None:
        stack: list[tuple[str, KeyPath, int]] = []  # (container "{" or "[", its path, next index)
        key: str | None = None
        key_line = 0
        expect_value = True  # at the top, or after ":" / "[" / "," in a list
        line = 1
        pos = 0
        for m in _TOKEN.finditer(raw):
            if m.start() != pos:
                return  # a character no JSON5 token starts with: stop, keep what was mapped
            pos = m.end()
            kind, text = m.lastgroup, m.group()
            start_line = line
            line += text.count("\n")
            if kind in ("space", "comment"):
                continue
            top = stack[-1] if stack else None
            if kind == "punct" and text == ":":
                expect_value = True
                continue
            if kind == "punct" and text == ",":
                if top and top[0] == "[":
                    stack[-1] = (top[0], top[1], top[2] + 1)
                expect_value = bool(top and top[0] == "[")
                key = None
                continue
            if kind == "punct" and text in "}]":
                if stack:
                    stack.pop()
                expect_value = False
                continue
            if top and top[0] == "{" and not expect_value:  # a key
                key, key_line = (_unquoted(text) if kind == "string" else text), start_line
                continue
            # a value starts here
            here: KeyPath = ()
            at = start_line
            if top and top[0] == "{" and key is not None:
                here, at = (*top[1], key), key_line  # an error about a key names the key's line
            elif top and top[0] == "[":
                here = (*top[1], top[2])
            self.lines.setdefault(here, at)
            if kind == "punct" and text in "{[":
                stack.append((text, here, 0))
                expect_value = text == "["
            else:
                expect_value = False


def _unquoted(text: str) -> str:
    body = text[1:-1] if len(text) >= 2 and text[-1] == text[0] else text[1:]
    return re.sub(r"\\(.)", r"\1", body)
