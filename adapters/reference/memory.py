"""The reference agent's long-term memory: a folder of Markdown notes.

Each `memory_write` appends one bullet to `notes.md`; `memory_search` ranks notes by shared
words (a crude stem: the first five letters) and, among equals, the newest first — so an
updated fact outranks the one it replaced when both match equally.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

_STOP = frozenset(
    """the and for with about what which when where who how did does you your are was were
    has have had that this from into can tell please again search memory answer
    что как где когда кто какой какая какие сколько мне меня мой моя мои это для при поищи
    пожалуйста памяти своей ещё еще ответь раз""".split()
)


def stems(text: str) -> set[str]:
    """Words of three letters or more, cut to five (a crude stem), minus question words."""
    words = re.findall(r"[^\W_]+", text.lower().replace("ё", "е"))
    return {w[:5] for w in words if len(w) > 2 and w not in _STOP}


class MemoryFolder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.notes = self.root / "notes.md"

    def write(self, text: str) -> str:
        line = " ".join(text.split())
        if not line:
            return "nothing to save"
        stamp = time.strftime("%Y-%m-%d %H:%M")
        with self.notes.open("a", encoding="utf-8") as f:
            f.write(f"- [{stamp}] {line}\n")
        return "saved"

    def entries(self) -> list[str]:
        if not self.notes.exists():
            return []
        lines = self.notes.read_text(encoding="utf-8").splitlines()
        return [re.sub(r"^- \[[^\]]*\]\s*", "", ln) for ln in lines if ln.startswith("- ")]

    def drop(self, lost: Callable[[str], bool]) -> int:
        """Remove the notes `lost` picks (the `lose` fault); how many went."""
        if not self.notes.exists():
            return 0
        lines = self.notes.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [ln for ln in lines if not lost(ln)]
        self.notes.write_text("".join(kept), encoding="utf-8")
        return len(lines) - len(kept)

    def search(self, query: str, limit: int = 3) -> list[str]:
        wanted = stems(query)
        scored = []
        for index, entry in enumerate(self.entries()):
            score = len(wanted & stems(entry))
            if score:
                scored.append((score, index, entry))
        scored.sort(key=lambda s: (-s[0], -s[1]))
        return [entry for _, _, entry in scored[:limit]]
