"""Whether an answer states content the person asked the agent to forget.

A `[deleted]` question fails for many reasons (an empty reply, a wrong claim); only one of them
is the agent recalling what it was asked to forget — the one the experiment blocker
`deleted_recalled` counts. The deleted facts' own names and numbers decide it, in any form an
answer may give them: lowercase ("stolbukhin"), inflected (a name's first six letters), a
number in words ("eighty-eight").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from persona.benchmark.screening import marks
from persona.terms import extract_identifiers, extract_quantities


def states_deleted(deleted_texts: Iterable[str], answer: str) -> list[str]:
    """The names and numbers of the deleted facts that `answer` states (empty: none)."""
    words = {w.replace("ё", "е")[:6] for w in re.findall(r"[^\W\d_][\w'-]*", answer.lower()) if len(w) >= 3}
    numbers = {str(q.value) for q in extract_quantities(answer)} | extract_identifiers(answer)
    found: list[str] = []
    for text in deleted_texts:
        m = marks(text)
        found += sorted(e for e in m.entities if e in words)
        found += sorted(n for n in m.numbers if n in numbers)
    return list(dict.fromkeys(found))
