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
        # section number → heading ("1" → "Жена Лена"): facts are told, and added, in context
        self.sections = {name: dict(ff.sections) for name, ff in benchmark.facts.items()}
        self.told: set[str] = set()

    def render(self, name: str, marks: bool = True) -> str:
        """The live facts file as written — its title, its `## N. heading` sections, the facts
        in id order — each told fact marked `(told)` unless `marks` is off."""
        lines = [f"# {self.titles.get(name, name)}"]
        headings = self.sections.get(name, {})
        section = None
        for fid, text in sorted(self.files[name].items(), key=lambda item: _id_order(item[0])):
            number = fid.split(".")[0]
            if number != section and number in headings:
                lines.append(f"## {number}. {headings[number]}")
            section = number
            mark = " (told)" if marks and f"{name}:{fid}" in self.told else ""
            lines.append(f"{fid} {text}{mark}")
        return "\n".join(lines)

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


def _id_order(fact_id: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in fact_id.split("."))
