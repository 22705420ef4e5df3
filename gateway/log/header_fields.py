"""A run log's header, field by field: what every reader takes its maps to hold.

A header names its run's benchmark by a map of plain values; a crafted or hand-edited header whose
`benchmark.path` is a number was a traceback from verify, the autopsy and `state`, and kept
`marathon report` from writing any run's report. `read_log` refuses such a header with the field
named, so the run fails alone (unreadable, named) and every other run is read.
"""

from __future__ import annotations

from gateway.log.events import Header

# the header's maps, field by field: what every reader takes them to be (a run's own folder
# names it; a crafted or hand-edited header must fail its run, named — never the other runs')
_HEADER_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "benchmark": {"path": str, "name": str, "hash": str, "rung": str, "pool": str, "language": str,
                  "checkpoint_at": str, "until": str, "questions": (list, int), "phases": int},
}  # fmt: skip


def header_field_problem(header: Header) -> str:
    """The first field of the header's `benchmark` map that is not of its type ("" when none
    is). Its `parent` map is checked where a fork's lineage is read (gateway/log/lineage.py)."""
    for part, fields in _HEADER_FIELDS.items():
        values = getattr(header, part)
        for name, kind in fields.items():
            value = values.get(name)
            if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
                return f"{part}.{name} is {str(value)[:40]!r}, expected {_kind_words(kind)}"
    return ""


def _kind_words(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words = {str: "text", int: "a whole number", list: "a list"}
    return " or ".join(words.get(k, k.__name__) for k in kinds)
