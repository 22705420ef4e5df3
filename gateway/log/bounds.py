"""How much a run's log may hold, so that every reader can read it (docs/security.md).

Readers hold a log's events in memory (a blob's bytes stay in the file: runlog.LazyBlob), about
1 KiB per record; so a reader refuses a log of more than `max_log_records()` records, named
(`RunLogTooLarge`), instead of exhausting memory on it. A run stops (`limit_reached`) before its
own log gets there, and after a turn that added more than `max_turn_log_bytes()` — so every log
marathon writes can be read whole, and a model answering 100 MB a turn can't grow it for hours.
Both bounds can be raised for a machine with the memory: `MARATHON_MAX_LOG_RECORDS`,
`MARATHON_MAX_TURN_LOG_MIB`.
"""

from __future__ import annotations

import os

MAX_LOG_RECORDS = 150_000  # records a reader takes from one log (`MARATHON_MAX_LOG_RECORDS`)
LOG_RECORDS_MARGIN = 10_000  # a run stops this far below the readers' bound: its last turn and end fit
MAX_TURN_LOG_MIB = 256  # what one turn may add to its log (`MARATHON_MAX_TURN_LOG_MIB`)


def max_turn_log_bytes() -> int:
    """What one turn may add to its run's log before the run stops (`limit_reached`):
    `MARATHON_MAX_TURN_LOG_MIB`, else `MAX_TURN_LOG_MIB` MiB."""
    value = os.environ.get("MARATHON_MAX_TURN_LOG_MIB", "")
    return (int(value) if value.isdigit() and int(value) > 0 else MAX_TURN_LOG_MIB) << 20


def max_log_records() -> int:
    """How many records a reader takes from one log: `MARATHON_MAX_LOG_RECORDS`, else
    `MAX_LOG_RECORDS` (docs/security.md). A run stops at it (`limit_reached`), so a log marathon
    wrote is always read whole; a larger one was made some other way."""
    value = os.environ.get("MARATHON_MAX_LOG_RECORDS", "")
    return int(value) if value.isdigit() and int(value) > 0 else MAX_LOG_RECORDS




def log_bound(records: int, size: int, turn_started_at: int | None) -> str:
    """Which bound a run's log reached ("" when none): `records` it holds, `size` its bytes now,
    `turn_started_at` its bytes when the last turn started (None: the first turn)."""
    most = max_log_records()
    if records >= most - LOG_RECORDS_MARGIN:
        return (
            f"log_records: the log holds {records:,} records, near the {most:,} a reader takes "
            "(MARATHON_MAX_LOG_RECORDS)"
        )
    grew = size - (size if turn_started_at is None else turn_started_at)
    if grew > max_turn_log_bytes():
        return (
            f"turn_log_bytes: one turn added {grew / 2**20:,.0f} MiB to the log, past the "
            f"{max_turn_log_bytes() / 2**20:,.0f} MiB a turn may (MARATHON_MAX_TURN_LOG_MIB)"
        )
    return ""
