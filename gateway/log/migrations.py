"""Older log formats read as the current one: a chain of converters, record by record."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gateway.log.errors import RunLogFormatError
from gateway.log.events import FORMAT_VERSION


def _slip_names_its_subject(record: dict[str, Any]) -> dict[str, Any]:
    """Format 2 → 3: a `persona_slip` names its fact (`file:id`), question and the details never
    said in fields of their own; format 2 had them only in its words — a fact as the detail's
    first word (`fact_not_said`, then "…, but 34, Pixel never said"), a question as the `id:`
    before it (`answer_leaked`, `grade_disputed`).
    Idempotent: a resumed format-2 log holds format-3 records, which pass unchanged."""
    if record.get("t") != "persona_slip" or "fact" in record or not isinstance(record.get("detail"), str):
        return record
    first = record["detail"].split(" ", 1)[0]
    kind = record.get("kind")
    fact = first if kind == "fact_not_said" and ":" in first else ""
    question = first[:-1] if kind in ("answer_leaked", "grade_disputed") and first.endswith(":") else ""
    said = re.search(r" marked told, but (.+) never said", record["detail"]) if fact else None
    missing = said.group(1).split(", ") if said else []
    return {**record, "fact": fact, "question_id": question, "missing": missing}


# format N → N+1 converters for a record; applied in a chain up to FORMAT_VERSION.
# 1 → 2 changed only the framing (a CRC per record), not the records.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: lambda record: record,
    2: _slip_names_its_subject,
}


def migrate(record: dict[str, Any], version: int) -> dict[str, Any]:
    while version < FORMAT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise RunLogFormatError(f"no migration from log format {version}")
        record = step(record)
        version += 1
    return record
