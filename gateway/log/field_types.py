"""Checking a decoded record's fields against the types its event class declares.

A log is read from disk, and a disk holds whatever was written (or damaged, or crafted): a
`score: "ten"` once made the viewer answer 500 and `report` and resume trace back. What a
caller may rely on: `field_checks(cls)` is built once per event class from its annotations;
`problem(checks, record)` names the first field whose value has the wrong type, or is "".
Simple fields (str, int, float, bool, bytes, `X | None`) cost one set lookup per value. A field
typed with a `StrEnum` (a kind, a reason) holds one of its values, and `enum_fields(cls)` names
the enum that turns the value read into its member.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from enum import StrEnum
from typing import Any

type Check = frozenset[type] | Callable[[Any], bool]

_EXACT: dict[Any, frozenset[type]] = {
    str: frozenset({str}),
    bytes: frozenset({bytes}),
    bool: frozenset({bool}),
    int: frozenset({int}),
    float: frozenset({int, float}),  # msgpack gives int for a float field's whole numbers
    type(None): frozenset({type(None)}),
}


def _exact_types(hint: Any) -> frozenset[type] | None:
    """The exact runtime types a simple hint (str, int, `str | None`, …) allows; None when the
    hint needs a deeper look (lists, dicts). Exact: bool is never a valid int here."""
    if hint in _EXACT:
        return _EXACT[hint]
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        parts = [_exact_types(a) for a in typing.get_args(hint)]
        if all(p is not None for p in parts):
            return frozenset().union(*(p for p in parts if p is not None))
    return None


def _check_for(hint: Any) -> Callable[[Any], bool]:
    """Does a decoded value have the declared type?"""
    exact = _exact_types(hint)
    if exact is not None:
        return lambda v: type(v) in exact
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return lambda v: True
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        values = frozenset(member.value for member in hint)
        return lambda v: isinstance(v, str) and v in values
    if origin in (types.UnionType, typing.Union):
        checks = [_check_for(a) for a in args]
        return lambda v: any(c(v) for c in checks)
    if hint is type(None):
        return lambda v: v is None
    if hint is bool:
        return lambda v: isinstance(v, bool)
    if hint is int:
        return lambda v: isinstance(v, int) and not isinstance(v, bool)
    if hint is float:
        return lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    if hint in (str, bytes):
        return lambda v: isinstance(v, hint)
    if origin is list:
        item = _check_for(args[0]) if args else (lambda v: True)
        return lambda v: isinstance(v, list) and all(item(x) for x in v)
    if origin is dict:
        value = _check_for(args[1]) if len(args) == 2 else (lambda v: True)
        return lambda v: isinstance(v, dict) and all(isinstance(k, str) and value(x) for k, x in v.items())
    return lambda v: True  # a type this reader does not check


def _type_name(hint: Any) -> str:
    if isinstance(hint, type) and issubclass(hint, StrEnum):
        return "one of " + ", ".join(repr(member.value) for member in hint)
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


def field_checks(cls: type, fields: frozenset[str]) -> dict[str, tuple[Check, str]]:
    """Each of `fields`' check and the name of its declared type."""
    return {
        name: (_exact_types(hint) or _check_for(hint), _type_name(hint))
        for name, hint in typing.get_type_hints(cls).items()
        if name in fields
    }


def problem(checks: dict[str, tuple[Check, str]], record: dict[str, Any]) -> str:
    """The first field of `record` whose value is not of its declared type, said in words."""
    for name, value in record.items():
        entry = checks.get(name)
        if entry is None:
            continue
        check, expected = entry
        if not (type(value) in check if isinstance(check, frozenset) else check(value)):
            # a kind off its list: its value; else the type that is wrong
            shown = repr(value[:40]) if isinstance(value, str) and expected.startswith("one of") else type(value).__name__
            return f"field {name!r} is {shown}, expected {expected}"
    return ""


def enum_fields(cls: type, fields: frozenset[str]) -> dict[str, type[StrEnum]]:
    """Each of `fields` declared as a `StrEnum`, with its enum: what a value read becomes."""
    return {
        name: hint
        for name, hint in typing.get_type_hints(cls).items()
        if name in fields and isinstance(hint, type) and issubclass(hint, StrEnum)
    }
