"""Switches that break one stage of the reference agent's memory on purpose — the known truth
the memory autopsy is measured against (docs/experiments.md, "The memory autopsy"; issue 48).

Each breaks exactly one link of told → stored → kept → retrieved → used, and leaves the rest
as it is:

- `refuse_writes`: a `memory_write` whose text holds any of these (case-folded) is refused by
  the tool (an error result): the fact is **never stored** — or, for an update, the new value
  never reaches memory and the agent **keeps the old value**;
- `ack_without_write`: a `memory_write` whose text holds any of these is answered "saved", as
  a stored note is, but nothing is written — the tool's acknowledgement lies: the fact is
  **never stored** (for an update: the agent **keeps the old value**), though the call and its
  result look like a write that went through;
- `lose`: at each compaction, notes holding any of these are dropped from the notes file: the
  fact was **stored, then lost**;
- `no_search`: the search tool is not offered (the agent answers from its context alone):
  **stored but not retrieved**;
- `ignore_results`: the agent searches, then answers as if nothing was found: **retrieved but
  not used**.

Settings (`agent: {adapter: "reference", faults: {...}}`) are checked before a run starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

IGNORED_ANSWER = "I don't remember that."
REFUSED_WRITE = "could not save: the memory store refused this note"
KEYS = {"refuse_writes", "ack_without_write", "lose", "no_search", "ignore_results"}


@dataclass(frozen=True)
class MemoryFaults:
    refuse_writes: tuple[str, ...] = ()
    ack_without_write: tuple[str, ...] = ()
    lose: tuple[str, ...] = ()
    no_search: bool = False
    ignore_results: bool = False

    @classmethod
    def of(cls, settings: object) -> MemoryFaults:
        """Read `faults` from agent settings; raises ValueError naming what is wrong."""
        if settings is None:
            return cls()
        if not isinstance(settings, dict):
            raise ValueError(
                "reference agent `faults` must be an object ({refuse_writes, ack_without_write, lose, no_search, ignore_results})"
            )
        unknown = sorted(set(settings) - KEYS)
        if unknown:
            raise ValueError(f"reference agent `faults`: unknown key {unknown[0]!r} (known: {', '.join(sorted(KEYS))})")
        return cls(
            refuse_writes=_strings(settings, "refuse_writes"),
            ack_without_write=_strings(settings, "ack_without_write"),
            lose=_strings(settings, "lose"),
            no_search=_flag(settings, "no_search"),
            ignore_results=_flag(settings, "ignore_results"),
        )

    def refuses(self, text: str) -> bool:
        return _holds(text, self.refuse_writes)

    def acks_without_writing(self, text: str) -> bool:
        return _holds(text, self.ack_without_write)

    def loses(self, note: str) -> bool:
        return _holds(note, self.lose)


def _holds(text: str, needles: tuple[str, ...]) -> bool:
    folded = text.casefold()
    return any(n.casefold() in folded for n in needles)


def _strings(settings: dict[str, Any], key: str) -> tuple[str, ...]:
    value = settings.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"reference agent `faults.{key}` must be a list of non-empty strings")
    return tuple(value)


def _flag(settings: dict[str, Any], key: str) -> bool:
    value = settings.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"reference agent `faults.{key}` must be true or false")
    return value
