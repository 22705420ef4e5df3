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
- `memory_full`: a `memory_write` whose text holds any of these is answered as a full store
  answers ("Memory full … this note was not saved") — no error flag, nothing written: the
  agent's **write was refused**, and only the result's words say so;
- `already_noted`: a `memory_write` whose text holds any of these is answered "Already noted."
  and nothing is written (a dedupe that believes the note is there): **never stored**;
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
FULL_ANSWER = "Memory full (2,200/2,200 chars): this note was not saved. Remove an entry first."
ALREADY_ANSWER = "Already noted."
KEYS = {"refuse_writes", "ack_without_write", "memory_full", "already_noted", "lose", "no_search", "ignore_results"}


@dataclass(frozen=True)
class MemoryFaults:
    refuse_writes: tuple[str, ...] = ()
    ack_without_write: tuple[str, ...] = ()
    memory_full: tuple[str, ...] = ()
    already_noted: tuple[str, ...] = ()
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
                f"reference agent `faults` must be an object ({{{', '.join(sorted(KEYS))}}})"
            )
        unknown = sorted(set(settings) - KEYS)
        if unknown:
            raise ValueError(f"reference agent `faults`: unknown key {unknown[0]!r} (known: {', '.join(sorted(KEYS))})")
        return cls(
            refuse_writes=_strings(settings, "refuse_writes"),
            ack_without_write=_strings(settings, "ack_without_write"),
            memory_full=_strings(settings, "memory_full"),
            already_noted=_strings(settings, "already_noted"),
            lose=_strings(settings, "lose"),
            no_search=_flag(settings, "no_search"),
            ignore_results=_flag(settings, "ignore_results"),
        )

    def refuses(self, text: str) -> bool:
        return _holds(text, self.refuse_writes)

    def acks_without_writing(self, text: str) -> bool:
        return _holds(text, self.ack_without_write)

    def silent_answer(self, text: str) -> str | None:
        """The answer a write gets when a fault writes nothing and says so only in words (no
        error flag): a full store, or a dedupe; None when the write goes on."""
        if _holds(text, self.memory_full):
            return FULL_ANSWER
        if _holds(text, self.already_noted):
            return ALREADY_ANSWER
        return None

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
