"""What a memory write's tool answered it: stored, refused, or acknowledged with nothing written.

Why: the recorder marks a write failed only on an explicit error (gateway/traffic/tool_results.py),
so a tool that answers "Memory full — note not saved" or "Already noted." without an error flag
looked like a write that stored the fact, and the autopsy called its loss "stored, then lost"
(issue 60). The autopsy reads the result's words before it counts a write as stored.

What a caller may rely on: the written text is taken out of the result before its words are read
(a tool that echoes "saved: my partner refused the offer" refused nothing); a result that says
neither is `ACKNOWLEDGED` — an acknowledgement is still no proof that anything was stored, which
is why the autopsy also asks the state (checkpoints, the end state) before "stored, then lost".
"""

from __future__ import annotations

import re
from enum import StrEnum


class WriteOutcome(StrEnum):
    ACKNOWLEDGED = "acknowledged"  # no error, no refusal: stored, as far as the tool says
    REFUSED = "refused"  # an error, or words that say it was not saved (memory full, over a limit)
    NOTHING_WRITTEN = "nothing written"  # answered without storing: "already noted", no change
    UNSEEN = "result not seen"  # no later request carried the result (only when it matters)


# words a tool uses when it did not store the note; English, as the tools of the agents we know
# answer (Hermes: "Memory at 2,164/2,200 chars … would exceed the limit")
_REFUSED = re.compile(
    r"\b(?:not\s+(?:been\s+)?(?:saved|stored|written|added)|was(?:n't|\s+not)\s+(?:saved|stored|written|added)"
    r"|(?:could\s*n[o']t|can\s*n[o']t|cannot|unable\s+to|failed\s+to)\s+(?:save|store|write|add|remember)"
    r"|memory\s+(?:is\s+)?full|(?:would\s+)?exceeds?\b[^.\n]{0,40}\b(?:limit|capacity|quota)|over\s+(?:the\s+)?limit"
    r"|no\s+(?:more\s+)?(?:room|space)|(?:refused|rejected|denied)\b)",
    re.IGNORECASE,
)
_NOTHING = re.compile(
    r"\b(?:already\s+(?:noted|saved|stored|known|recorded|remembered|exists|in\s+(?:memory|your\s+notes|the\s+notes))"
    r"|duplicate|no\s+changes?\b|nothing\s+(?:new\s+)?to\s+(?:save|store|update|add)|unchanged|skipped)",
    re.IGNORECASE,
)


def outcome_of(result: str | None, failed: bool, written: str = "") -> WriteOutcome:
    """The outcome of one write: `failed` — the recorder saw an explicit error; `result` — the
    tool's answer (None: not seen); `written` — the call's text, taken out of the answer first."""
    if failed:
        return WriteOutcome.REFUSED
    if result is None:
        return WriteOutcome.ACKNOWLEDGED  # as before results were read: the recorder saw no error
    words = result
    for line in (line.strip() for line in written.splitlines()):
        if len(line) > 3:
            words = words.replace(line, " ")
    if _REFUSED.search(words):
        return WriteOutcome.REFUSED
    if _NOTHING.search(words):
        return WriteOutcome.NOTHING_WRITTEN
    return WriteOutcome.ACKNOWLEDGED
