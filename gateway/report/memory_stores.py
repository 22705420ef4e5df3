"""Agent memory kept in a database, not in files: read as texts the memory autopsy searches
the way it searches memory files (gateway/report/memory_state.py).

`memory_store: {kind: "letta-sqlite", path: ".letta/sqlite.db"}` in the agent's settings (the
`letta` profile sets it): Letta's core-memory blocks and its archival passages not deleted,
read from its SQLite database under the state folder. The database is opened read-only and
immutable — a report never writes the agent's state, nor waits on its locks. What a caller may
rely on: a store that can't be read raises `StoreUnreadable` with the reason.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


class StoreUnreadable(Exception):
    """The agent's memory store can't be read (missing, not a database, another schema)."""


def _letta_sqlite(db: Path) -> dict[str, str]:
    if not db.is_file():
        raise StoreUnreadable(f"{db} is not there")
    wal = db.with_name(db.name + "-wal")
    if wal.is_file() and wal.stat().st_size:  # recent writes not yet in the database file
        with tempfile.TemporaryDirectory() as tmp:  # read a copy with them, never the agent's own
            copy = Path(tmp) / db.name
            shutil.copyfile(db, copy)
            shutil.copyfile(wal, Path(tmp) / wal.name)
            return _read_letta(f"{copy.as_uri()}?mode=ro", db.name)
    return _read_letta(f"{db.resolve().as_uri()}?mode=ro&immutable=1", db.name)


def _read_letta(uri: str, name: str) -> dict[str, str]:
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as con:
            texts = {f"block {label}": str(value or "") for label, value in con.execute("select label, value from block")}
            passages = con.execute("select id, text from archival_passages where not coalesce(is_deleted, 0)")
            texts.update({f"archival passage {pid}": str(text or "") for pid, text in passages})
    except sqlite3.Error as exc:
        raise StoreUnreadable(f"{name}: {exc}") from None
    return texts


STORES: dict[str, Callable[[Path], dict[str, str]]] = {"letta-sqlite": _letta_sqlite}


def store_of(agent: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, path under the state folder) of the agent's memory store, when its settings name one."""
    store = agent.get("memory_store")
    if not isinstance(store, dict) or store.get("kind") not in STORES or not isinstance(store.get("path"), str):
        return None
    return str(store["kind"]), str(store["path"])


def read_store(kind: str, db: Path) -> dict[str, str]:
    """The store's texts by where they are ("block human", "archival passage ID")."""
    return STORES[kind](db)
