"""The MarathonMemBench directive subset: parsed as data, never executed.

A phase may open with a fenced ```js block. We accept exactly these statements, one per line
(a trailing `;` optional, `//` comments and blank lines ignored):

    vars.NAME = LITERAL;          LITERAL: "str" | 'str' | number | true | false | null | [LITERAL, ...]
    await bench.newSession();     start a new session with the agent
    await bench.compact();        ask the agent to compact its context (our addition)
    await bench.checkpoint("NAME"); archive the agent's state here, to fork runs from (our addition)

Anything else -- `require('fs')`, `process.exit()`, a function call, an expression -- is a
validation error at its line. The block is never handed to an interpreter, so a benchmark file
can't run code on the machine that loads it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from persona.benchmark.errors import BenchmarkError, SourceLocation

type Literal = str | int | float | bool | list[Literal] | None

BENCH_ACTIONS = {"newSession": "new_session", "compact": "compact"}


@dataclass(frozen=True)
class SetVar:
    name: str
    value: Literal
    line: int


@dataclass(frozen=True)
class BenchAction:
    """`await bench.<method>()`; `action` is our name for it (`new_session`, `compact`, or
    `checkpoint:NAME` for `await bench.checkpoint("NAME")`)."""

    action: str
    line: int


type Directive = SetVar | BenchAction

_SET_VAR = re.compile(r"^vars\.([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+?)\s*;?$")
_BENCH_CALL = re.compile(r"^await\s+bench\.([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*\)\s*;?$")
_CHECKPOINT_CALL = re.compile(r"^await\s+bench\.checkpoint\s*\(\s*(['\"])(.*?)\1\s*\)\s*;?$")
CHECKPOINT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # it names a file in the run folder
CHECKPOINT_PREFIX = "checkpoint:"
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$")


def parse_directives(lines: list[str], path: Path, first_line: int) -> list[Directive]:
    """Parse the body of a ```js block; `first_line` is the 1-based file line of `lines[0]`."""
    out: list[Directive] = []
    for offset, raw in enumerate(lines):
        lineno = first_line + offset
        text = _strip_comment(raw).strip()
        if not text:
            continue
        where = SourceLocation(path, lineno)
        if m := _SET_VAR.match(text):
            out.append(SetVar(m.group(1), _parse_literal(m.group(2), where), lineno))
        elif m := _CHECKPOINT_CALL.match(text):
            if not CHECKPOINT_NAME.match(m.group(2)):
                raise BenchmarkError(
                    where,
                    f"checkpoint name {m.group(2)!r}: letters, digits, '.', '_' or '-', at most 64 (it names a file)",
                )
            out.append(BenchAction(CHECKPOINT_PREFIX + m.group(2), lineno))
        elif m := _BENCH_CALL.match(text):
            method = m.group(1)
            if method not in BENCH_ACTIONS:
                known = ", ".join([*(f"bench.{k}()" for k in BENCH_ACTIONS), 'bench.checkpoint("NAME")'])
                raise BenchmarkError(where, f"unknown bench action bench.{method}(); expected one of {known}")
            out.append(BenchAction(BENCH_ACTIONS[method], lineno))
        else:
            raise BenchmarkError(
                where,
                f"unsupported directive {text!r}; expected `vars.NAME = literal;`, "
                "`await bench.newSession();`, `await bench.compact();` or `await bench.checkpoint(\"NAME\");` "
                "(directives are data, "
                "not JavaScript)",
            )
    return out


def _outside_strings(text: str) -> tuple[list[tuple[int, str]], bool]:
    """The characters of `text` outside string literals, with their index; and whether a string
    literal is left open at the end."""
    out: list[tuple[int, str]] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        else:
            out.append((i, ch))
        i += 1
    return out, quote is not None


def _strip_comment(line: str) -> str:
    """Drop a `//` comment that is not inside a string literal."""
    chars, _ = _outside_strings(line)
    for i, ch in chars:
        if ch == "/" and line.startswith("//", i):
            return line[:i]
    return line


MAX_DEPTH = 16  # lists nested deeper are no one's directive, and would exhaust the parser
MAX_NUMBER_CHARS = 40


def _parse_literal(text: str, where: SourceLocation, depth: int = 0) -> Literal:
    text = text.strip()
    if depth > MAX_DEPTH:
        raise BenchmarkError(where, f"a literal nested more than {MAX_DEPTH} lists deep")
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    if _NUMBER.match(text):
        if len(text) > MAX_NUMBER_CHARS:
            raise BenchmarkError(where, f"a number of {len(text)} characters; at most {MAX_NUMBER_CHARS}")
        return float(text) if any(c in text for c in ".eE") else int(text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        body = text[1:-1]
        if text[0] == "'":
            body = body.replace('\\"', '"').replace('"', '\\"').replace("\\'", "'")
        try:
            value = json.loads(f'"{body}"')
        except json.JSONDecodeError as exc:
            raise BenchmarkError(where, f"bad string literal {text}: {exc.msg}") from None
        return str(value)
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [_parse_literal(part, where, depth + 1) for part in _split_top_level(inner, where)] if inner else []
    raise BenchmarkError(
        where, f"expected a literal (string, number, true, false, null or a list of them), got {text!r}"
    )


def _split_top_level(text: str, where: SourceLocation) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    chars, open_string = _outside_strings(text)
    for i, ch in chars:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if open_string or depth:
        raise BenchmarkError(where, f"unterminated literal in [{text}]")
    last = text[start:]
    if last.strip():
        parts.append(last)
    return parts
