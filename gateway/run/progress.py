"""Live progress of runs in flight: one line per run, redrawn while a matrix runs.

`RunProgress.observe()` sees every event the run logs (and, on resume, every event already
in the log), so the figures are the log's, never a second bookkeeping. `ProgressBoard` draws
them: in place on a terminal, as a line per changed run every few seconds otherwise (CI logs).
"""

from __future__ import annotations

import asyncio
import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

from gateway.display import safe_text
from gateway.log.events import (
    Asked,
    Evaluation,
    Event,
    FactTold,
    LLMExchange,
    PersonaTurn,
    PhaseEntered,
    RunEnded,
    RunStart,
    Said,
)
from gateway.log.vocabulary import TerminationReason
from gateway.report.cost import RoleCost


@dataclass
class RunProgress:
    run_id: str
    phases: int
    questions: int
    stand_in: bool = False
    phase: int = -1
    phase_title: str = ""
    told: set[tuple[str, str]] = field(default_factory=set)  # (file, fact id): a re-sent fact once
    graded: int = 0
    started: bool = False  # its log has a start: a waiting run prints no line of its own
    ended: TerminationReason | None = None  # how its last start ended (None: waiting, or running)
    agent: RoleCost = field(default_factory=RoleCost)
    persona: RoleCost = field(default_factory=RoleCost)
    turns: int = 0  # messages the persona sent the agent (a run's `agent_turns` limit counts them)
    active_before: float = 0.0  # seconds of earlier starts of this run
    segment_start: float | None = None
    last_ts: float = 0.0
    node: str = ""  # where the run executes, when not in this process (a Ray cluster's node)

    @property
    def shown(self) -> bool:
        """The board has a line for it: it started, or it ended before it could (an agent that
        would not start, a persona model out of reach)."""
        return self.started or self.ended is not None

    @property
    def status(self) -> str:
        """The board's word for the run: waiting, running, or how it ended."""
        return self.ended.value if self.ended else "running" if self.started else "waiting"

    @property
    def facts_told(self) -> int:
        return len(self.told)

    @property
    def node_short(self) -> str:
        """`IP/node id` with the id cut to 6 characters, for a line of the board."""
        ip, _, node_id = self.node.partition("/")
        return f"{ip}/{node_id[:6]}"

    def inherit(self, events: list[Event]) -> None:
        """A fork's inherited teaching: the facts its parent told count as told here, as the
        report counts them (the board said "facts 3" beside the report's 40)."""
        self.told.update((e.file, e.fact_id) for e in events if isinstance(e, FactTold))

    def restart(self) -> None:
        """Forget what was observed: the log was started over (`--fresh`)."""
        fresh = RunProgress(self.run_id, self.phases, self.questions, self.stand_in, node=self.node)
        self.__dict__.update(fresh.__dict__)

    def active_seconds(self, now: float) -> float:
        """Time the run has been running, over all its starts (gaps between starts left out)."""
        return self.active_before + (now - self.segment_start if self.segment_start is not None else 0.0)

    def observe(self, event: Event) -> None:
        if isinstance(event, RunStart):
            if self.segment_start is not None:  # an earlier start that ended without an end record
                self.active_before += max(0.0, self.last_ts - self.segment_start)
            self.segment_start = event.ts
        elif isinstance(event, RunEnded) and self.segment_start is not None:
            self.active_before += max(0.0, event.ts - self.segment_start)
            self.segment_start = None
        self.last_ts = event.ts or self.last_ts
        match event:
            case Said() | Asked():
                self.turns += 1
            case PhaseEntered():
                self.phase, self.phase_title = event.index, event.title
                self.started, self.ended = True, None
            case FactTold():
                self.told.add((event.file, event.fact_id))
            case Evaluation():
                self.graded += 1
            case LLMExchange() if event.kind.conversational:
                self.agent.add("standin" if self.stand_in else event.model, event.usage)
            case PersonaTurn():
                self.persona.add(
                    str(event.response.get("model") or event.client), event.response.get("usage", {})
                )
            case RunStart():
                self.started, self.ended = True, None
            case RunEnded():
                self.ended = event.reason

    def limit_reached(self, limits: dict[str, float], now: float) -> tuple[str, bool]:
        """(which limit the run has reached — "" when none; whether `spend_usd` can't be
        checked because a model's price is unknown)."""
        if "agent_turns" in limits and self.turns >= limits["agent_turns"]:
            return f"agent_turns: {self.turns} messages sent, the limit is {limits['agent_turns']:g}", False
        if "wall_seconds" in limits and (elapsed := self.active_seconds(now)) >= limits["wall_seconds"]:
            return f"wall_seconds: {elapsed:.0f} s running, the limit is {limits['wall_seconds']:g}", False
        if "spend_usd" in limits:
            if self.agent.unpriced or self.persona.unpriced:
                return "", True
            if (spent := self.agent.dollars + self.persona.dollars) >= limits["spend_usd"]:
                return f"spend_usd: ${spent:.4f} spent, the limit is ${limits['spend_usd']:g}", False
        return "", False

    @property
    def tokens(self) -> int:
        return sum(self.agent.tokens.values()) + sum(self.persona.tokens.values())

    @property
    def tokens_shown(self) -> str:
        """The tokens, or "—" while none were counted: an agent whose model calls are not recorded
        has no count, which is not a count of zero (the report says "not observable")."""
        return f"{self.tokens:,}" if self.tokens else "—"

    @property
    def cost(self) -> str:
        if self.agent.unpriced or self.persona.unpriced:
            return "price unknown"
        return f"${self.agent.dollars + self.persona.dollars:.4f}"

    def line(self) -> str:
        phase = f"phase {self.phase + 1}/{self.phases}" if self.phase >= 0 else "phase –"
        return (
            f"[{self.run_id}] {self.status:<11} {phase} {self.phase_title[:24]:<24} "
            f"facts {self.facts_told:>4}  graded {self.graded:>3}/{self.questions:<3} "
            f"tokens {self.tokens_shown:>9}  {self.cost}" + (f"  @{self.node_short}" if self.node else "")
        )


class ProgressBoard:
    """Redraws every run's line while `watch()` runs; never blocks the runs (it only reads)."""

    def __init__(self, runs: list[RunProgress], out: TextIO | None = None, interval: float = 1.0) -> None:
        self.runs = runs
        self.out = out or sys.stdout
        self.tty = self.out.isatty()
        self.interval = interval if self.tty else max(interval, 10.0)
        self._drawn = 0
        self._last: dict[str, str] = {}

    def draw(self) -> None:
        if self.tty:
            # the board's own cursor codes: the only control sequences that reach the terminal
            control = getattr(self.out, "control", self.out.write)
            if self._drawn:
                control(f"\x1b[{self._drawn}F")
            for run in self.runs:
                control("\x1b[2K")
                self.out.write(safe_text(run.line(), one_line=True) + "\n")
            self._drawn = len(self.runs)
        else:
            for run in self.runs:
                line = run.line()
                if self._last.get(run.run_id) != line and run.shown:
                    self._last[run.run_id] = line
                    self.out.write(f"{time.strftime('%H:%M:%S')} {safe_text(line, one_line=True)}\n")
        self.out.flush()

    async def watch(self) -> None:
        if not self.tty:  # a log: say at once what is coming, not ten silent seconds first
            count = len(self.runs)
            self.out.write(
                f"{time.strftime('%H:%M:%S')} {count} run{'s' if count != 1 else ''} to go: a line for each "
                f"as it moves, at most every {self.interval:g} s\n"
            )
        try:
            while True:
                self.draw()
                await asyncio.sleep(self.interval)
        finally:
            self.draw()
