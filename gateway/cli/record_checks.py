"""Is a run's log what its folder and its figures claim? The record-level checks of `marathon verify`.

Reading a log is forgiving on purpose — a record of an unknown kind or with a bad field is kept
as `UnknownEvent`/`InvalidEvent` and skipped, so an older tool still shows a newer log — but a
result built on such a log is not one to publish. These checks name, per run:

- the folder: the header's `run_id` is the folder's name (a copied fork, two swapped logs, an
  edited header all fail it), and no two folders hold the same run;
- the records: every record of a kind this version knows and with valid fields, `seq` rising by
  one from the header, one header only;
- the grades: every score (and its bounds, the first try's score) a finite number from 0 to 10,
  every answer text.

What a caller may rely on: each problem is one line naming the record (its `seq`) or the folder.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

from gateway.log.events import Evaluation, Header, InvalidEvent, UnknownEvent
from gateway.log.runlog import RunLog
from persona.outcome import FULL_SCORE

SHOWN = 5  # problems of one kind listed before "and N more"


def folder_problems(run_dir: Path, log: RunLog) -> list[str]:
    run_id = log.header.run_id
    if run_id != run_dir.name:
        return [
            f"its header names the run {run_id!r}, not {run_dir.name!r}: a log copied, moved or edited "
            "into another run's folder (its figures would be counted as that run's)"
        ]
    return []


def duplicate_runs(run_ids: dict[Path, str]) -> list[str]:
    """Folders whose logs name the same run (a backup copy counted as one more run)."""
    counted = Counter(run_ids.values())
    return [
        f"the run {run_id!r} is in {n} folders: {', '.join(sorted(str(p.name) for p, r in run_ids.items() if r == run_id))}"
        for run_id, n in sorted(counted.items())
        if n > 1
    ]


def record_problems(log: RunLog) -> list[str]:
    problems: list[str] = []
    expected = log.header.seq + 1
    for event in log.events:
        if isinstance(event, InvalidEvent):
            problems.append(f"record {event.seq}: {event.problem} — the figures leave it out")
        elif isinstance(event, UnknownEvent):
            problems.append(
                f"record {event.seq}: a {event.tag!r} record this version does not know — the figures leave it out"
            )
        elif isinstance(event, Header):
            problems.append(f"record {event.seq}: a second header in the middle of the log")
        if event.seq != expected:
            problems.append(
                f"record {event.seq} follows record {expected - 1}: records are numbered one by one"
            )
        expected = event.seq + 1
        if isinstance(event, Evaluation):
            problems += _grade_problems(event)
    return _capped(problems)


def _grade_problems(event: Evaluation) -> list[str]:
    problems = []
    for name in ("score", "first_score", "low", "high"):
        value = getattr(event, name)
        if value is None and name in ("low", "high"):
            continue
        if (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or not math.isfinite(value)
            or not 0 <= value <= FULL_SCORE
        ):
            problems.append(
                f"record {event.seq}: question {event.question_id}'s {name} is {value!r}, not a number from 0 to {FULL_SCORE:g}"
            )
    if not isinstance(event.answer, str):
        problems.append(
            f"record {event.seq}: question {event.question_id}'s answer is a {type(event.answer).__name__}, not text"
        )
    return problems


def _capped(problems: list[str]) -> list[str]:
    if len(problems) <= SHOWN:
        return problems
    return [*problems[:SHOWN], f"and {len(problems) - SHOWN} more such problems"]
