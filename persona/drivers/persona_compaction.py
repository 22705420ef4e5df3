"""The LLM persona's own context: trimmed at a phase boundary when it grows past its limits.

The persona model sees the whole conversation so far; a marathon is longer than any model's
window. Past `Compaction.max_tokens` the messages are cut at the latest phase boundary whose
messages fit `trim_to_tokens`, and a recap — the profile and the facts files read, with their
current values — is put in front, so the persona never loses what it must know. A context
error from the provider halves both limits and cuts at once (`LLMPersonaDriver._call`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from persona.llm.types import estimate_tokens


@dataclass
class Compaction:
    max_tokens: int = 30000
    trim_to_tokens: int = 10000

    @classmethod
    def for_window(cls, context_tokens: int) -> Compaction:
        """Limits that fit a model's window of `context_tokens`, room left for the system
        parts, the tools and the answer (a 8,192-token server took 9,241 and failed)."""
        return cls(min(30000, context_tokens // 2), min(10000, context_tokens // 5))


def compacted(
    messages: list[dict[str, Any]],
    boundaries: list[int],
    limits: Compaction,
    recap: Callable[[], str],
    force: bool = False,
) -> tuple[list[dict[str, Any]], list[int]] | None:
    """The messages and phase boundaries after a cut, or None when there is nothing to cut
    (under the limit and not `force`d, or no earlier phase to cut at). A `force`d cut — the
    provider refused the context — cuts at least the oldest phase, even when the rest would
    fit `trim_to_tokens` (the estimate is only an estimate: a 6,000-token window refused a
    conversation the limits said fits, and nothing was cut)."""
    if not (force or estimate_tokens(messages) > limits.max_tokens) or len(boundaries) < 2:
        return None
    cut = boundaries[-1]
    for b in reversed(boundaries[:-1]):
        if estimate_tokens(messages[b:]) > limits.trim_to_tokens:
            break
        cut = b
    if cut == 0 and force:
        cut = next((b for b in boundaries if b > 0), 0)
    if cut == 0:
        return None
    phase_text = "\n".join(
        str(b.get("content") if b.get("type") == "tool_result" else b.get("text", ""))
        for b in messages[cut]["content"]
    )
    kept = [
        {"role": "user", "content": [{"type": "text", "text": f"{recap()}\n\n{phase_text}"}]},
        *messages[cut + 1 :],
    ]
    return kept, [0] + [b - cut for b in boundaries if b > cut]
