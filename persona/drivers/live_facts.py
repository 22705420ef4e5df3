"""Live copies of a benchmark's facts: what the persona currently holds true.

Updates (`✎` lines, and later the LLM persona's `facts_edit`/`facts_add`) change these copies,
never the benchmark's files. Writing `—` deletes a fact and frees its id. `told` tracks which
facts were stated to the agent, for `require_all_facts` and the coverage audit.
"""

from __future__ import annotations

from persona.benchmark.model import DELETED_MARKERS, Benchmark


class LiveFacts:
    def __init__(self, benchmark: Benchmark) -> None:
        self.files: dict[str, dict[str, str]] = {
            name: {fid: f.text for fid, f in ff.facts.items()} for name, ff in benchmark.facts.items()
        }
        self.titles = {name: ff.title for name, ff in benchmark.facts.items()}
        self.told: set[str] = set()

    def get(self, file: str, fact_id: str) -> str | None:
        return self.files.get(file, {}).get(fact_id)

    def edit(self, file: str, fact_id: str, text: str) -> str | None:
        """Set (or with `—`, delete) a fact; returns the previous text. Deleting un-tells it."""
        facts = self.files.setdefault(file, {})
        old = facts.get(fact_id)
        if text.strip() in DELETED_MARKERS:
            facts.pop(fact_id, None)
            self.told.discard(f"{file}:{fact_id}")
        else:
            facts[fact_id] = text
        return old

    def untold(self, file: str) -> list[tuple[str, str]]:
        return [
            (fid, text) for fid, text in self.files.get(file, {}).items() if f"{file}:{fid}" not in self.told
        ]

    def mark_told(self, fact_keys: tuple[str, ...] | list[str]) -> None:
        self.told.update(fact_keys)
