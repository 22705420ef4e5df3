"""When the LLM persona's model can't play: the signs the engine watches for, and their limits.

A real small model (SmolLM2-135M as the persona) sent the same paragraph for 7.5 minutes
without ever calling a tool; no phase ended, nothing noticed, and the run then crashed on the
model's context length. `PlayWatch` sees each message the persona sends and whether the model
made progress with it (a fact marked told, a question asked, a grade, a phase entered or an
edit); past a limit it raises `PersonaCantPlay` with one sentence saying what it saw.

Limits come from the persona settings (`give_up: {repeats, idle_messages}`); the defaults let
a model that plays at all finish the shipped benchmarks (the busiest phase of marathon-en needs
about 12 messages between two marked facts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from persona.drivers.protocol import PersonaCantPlay

# what providers say when a request is past the model's window (OpenAI-compatible servers:
# llama.cpp, vLLM; OpenAI; Anthropic)
_CONTEXT_ERROR = re.compile(
    r"context[ _-]?length|maximum context|context window|prompt is too long|too many tokens|n_ctx",
    re.IGNORECASE,
)


def is_context_error(message: str) -> bool:
    """Does a provider's error say the request was longer than the model can take?"""
    return bool(_CONTEXT_ERROR.search(message))


def _alike(a: str, b: str) -> bool:
    """The same message, or one grown out of the other (SmolLM2 sent a paragraph, then the
    same paragraph twice as long, then that again), or four fifths of the words shared."""
    if a == b or (min(len(a), len(b)) >= 40 and (a in b or b in a)):
        return True
    words_a, words_b = set(a.split()), set(b.split())
    return len(words_a & words_b) >= 0.8 * len(words_a | words_b)


@dataclass
class GiveUp:
    repeats: int = 3  # the same message this many times in a row
    idle_messages: int = 30  # messages in a row with no progress

    @classmethod
    def from_settings(cls, value: Any) -> GiveUp:
        """`give_up` of the persona settings; raises ValueError naming the field."""
        if value is None:
            return cls()
        if not isinstance(value, dict) or set(value) - {"repeats", "idle_messages"}:
            raise ValueError("persona `give_up` must be {repeats: N, idle_messages: N}")
        out = cls()
        for name in ("repeats", "idle_messages"):
            if name in value:
                number = value[name]
                if not isinstance(number, int) or isinstance(number, bool) or number < 2:
                    raise ValueError(f"persona `give_up.{name}` must be a whole number of at least 2")
                setattr(out, name, number)
        return out


@dataclass
class PlayWatch:
    limits: GiveUp
    last: str = ""
    same: int = 0
    idle: int = 0
    stuck_rounds: int = 0  # tool-call rounds in a row that ended without a message

    def message(self, text: str, progressed: bool, phase: str, live: bool = True) -> None:
        """The persona sent `text`; `progressed`: the model moved the benchmark on with it.
        A message replayed from the log on resume (`live` False) is not judged again and
        starts the count over: the run was stopped for it, and the model may have been fixed."""
        self.stuck_rounds = 0
        if not live:
            self.last, self.same, self.idle = "", 0, 0
            return
        flat = " ".join(text.lower().split())
        self.same = self.same + 1 if self.last and _alike(flat, self.last) else 1
        self.last = flat
        self.idle = 0 if progressed else self.idle + 1
        if self.same >= self.limits.repeats:
            raise PersonaCantPlay(
                f"the persona model sent the same message {self.same} times in a row in phase {phase!r} "
                f"({text[:80]!r}): it is not playing the persona — try a larger model"
            )
        if self.idle >= self.limits.idle_messages:
            raise PersonaCantPlay(
                f"the persona model sent {self.idle} messages in a row in phase {phase!r} without marking "
                "a fact told, asking a question, grading or ending the phase: it is not using its tools — "
                "try a model that calls tools"
            )

    def stuck(self, rounds: int, phase: str) -> None:
        """The model used `rounds` tool calls in a row without writing a message (a phase it
        can't finish: `next_phase` refusing again and again). Three times in a row: it can't play."""
        self.stuck_rounds += 1
        if self.stuck_rounds >= 3:
            raise PersonaCantPlay(
                f"the persona model called tools {rounds * self.stuck_rounds} times in a row in phase {phase!r} "
                "without writing a message to the assistant: it can't finish the phase — try a larger model"
            )
