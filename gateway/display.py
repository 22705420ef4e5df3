"""Text from agents and benchmarks, made safe to show on a terminal or in a markdown file.

An agent under test is untrusted, and so is a benchmark from anyone: an error body with an OSC
title sequence, `ESC[2J` and a fake "completed: mean 10.00/10" on a line of its own, an answer
holding an OSC 52 clipboard write, OSC 8 links, a C1 CSI (0x9b) or NUL, bidi overrides that
reorder what a reader sees. `safe_text` is the one function that neutralises them: every
control character but tab and newline becomes visible (`\\x1b`, `\\x9b`, `\\u202e`), and with
`one_line` a newline too, so one field can never pose as another line. `SafeStream` applies it
to everything written to the CLI's stdout and stderr; the progress board's own cursor codes go
through `SafeStream.control`, the only way a control sequence reaches the terminal.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

# C0 but tab and newline, DEL, C1, and the Unicode bidi embedding/override/isolate controls
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_NEWLINE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(m: re.Match[str]) -> str:
    c = m.group(0)
    if c == "\n":
        return "\\n"
    if c == "\r":
        return "\\r"
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def safe_text(text: str, one_line: bool = False) -> str:
    """`text` with every control character shown, not obeyed (tab and — unless `one_line` —
    newline kept). What a caller may rely on: the result holds no ESC, C1, NUL or bidi control."""
    return (_CONTROL_OR_NEWLINE if one_line else _CONTROL).sub(_visible, text)


class SafeStream:
    """A text stream that writes `safe_text` of what it is given; `control` writes a control
    sequence of our own (the progress board's cursor moves) unchanged."""

    def __init__(self, inner: TextIO) -> None:
        self.stream = inner

    def write(self, text: str) -> int:
        return self.stream.write(safe_text(text))

    def control(self, sequence: str) -> None:
        self.stream.write(sequence)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, buffer…
        return getattr(self.stream, name)


def install() -> None:
    """Make the CLI's stdout and stderr safe (once; idempotent)."""
    import sys

    if not isinstance(sys.stdout, SafeStream):
        sys.stdout = SafeStream(sys.stdout)  # type: ignore[assignment,unused-ignore]
    if not isinstance(sys.stderr, SafeStream):
        sys.stderr = SafeStream(sys.stderr)  # type: ignore[assignment,unused-ignore]
