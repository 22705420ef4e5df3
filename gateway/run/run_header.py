"""A run's header, what its ending says (`RunOutcome`), and whether a log may be resumed.

The header records everything that defines the run (design §6); a resume is refused when the
log was started with another benchmark or persona — continuing would mix two runs in one log.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway import __version__
from gateway.log.events import (
    Header,
)
from gateway.log.runlog import RunLog
from gateway.log.vocabulary import TerminationReason
from gateway.run.agents import describe_agent
from gateway.run.checkpoints import SavedCheckpoint
from gateway.run.config import RunSpec
from gateway.run.definition import agent_version, run_definition
from gateway.run.personas import driver_name
from gateway.traffic.rederive import analyzer_identity
from persona.benchmark.model import Benchmark


class ResumeError(RuntimeError):
    """The log can't be continued (other benchmark, diverging replay); `--fresh` starts over."""


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    reason: TerminationReason | None
    skipped: bool = False
    resumed: bool = False
    resent: int = 0
    detail: str = ""  # why it ended, when not `completed` (the last agent error, an exception)

    @property
    def report(self) -> Path:
        return self.run_dir / "report.md"


def run_header(spec: RunSpec, bench: Benchmark, parent: SavedCheckpoint | None) -> Header:
    """The header a fresh log of `spec` starts with (`bench`: the benchmark as played)."""
    return Header(
        tool_version=__version__,
        run_id=spec.id,
        benchmark={
            "name": bench.name,
            "path": str(spec.benchmark),
            "hash": bench.content_hash,
            "language": bench.language,
            "questions": len(bench.questions),
            "phases": len(bench.phases),
            **(
                {"rung": bench.rung, "distractors": list(bench.distractors)}
                | ({"pool": str(spec.pool)} if spec.pool else {})
                if bench.rung
                else {}
            ),
            **({"checkpoint_at": spec.checkpoint_at} if spec.checkpoint_at else {}),
            **({"until": spec.until} if spec.until else {}),
            # a fork that plays some questions only: their ids (`Header.question_count` reads both)
            **({"questions": list(spec.questions)} if spec.questions is not None else {}),
            **({"restate": True} if spec.restate else {}),
        },
        parent=(parent.reference() | ({} if spec.parent_prefix else {"prefix": False})) if parent else {},
        persona={**spec.persona, "driver": driver_name(spec.persona)},
        agent=describe_agent(spec.agent),
        meta=spec.meta,
        defines=run_definition(spec.persona, spec.limits)
        | {"agent_version": agent_version(spec.agent), "traffic_analyzer": analyzer_identity()},
    )


def resume_refusal(previous: RunLog, spec: RunSpec, bench: Benchmark, location: str) -> str | None:
    """Why `previous` can't be continued by `spec` (None: it can)."""
    if previous.header.benchmark.get("hash") != bench.content_hash:
        return (
            f"{location}: the benchmark {spec.benchmark} changed since this run started; "
            "resuming would mix two benchmarks — use --fresh to start over"
        )
    logged, wanted = _identity(previous.header.persona), _identity({**spec.persona, "driver": driver_name(spec.persona)})
    if logged != wanted:
        differ = sorted(k for k in {*logged, *wanted} if logged.get(k) != wanted.get(k))
        return (
            f"{location}: this run was started with the persona {_persona_words(logged)}, "
            f"not {_persona_words(wanted)} (they differ in {', '.join(differ)}); resuming would mix two "
            f"personas in one run — resume it with the same persona (--persona {logged.get('driver')}), "
            "or use --fresh to start over"
        )
    return None


# how the persona fits its model's window: no part of who plays, so a resume may change them (the
# fix a context-length failure names is to set `context_tokens` and run again)
WINDOW_SETTINGS = ("context_tokens", "compaction")


def _identity(persona: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in persona.items() if k not in WINDOW_SETTINGS}


def window_changes(previous: RunLog, spec: RunSpec) -> dict[str, Any]:
    """The window settings `spec` changes from the run's header, as this start's values (None:
    now unset), for `RunStart.persona_window`."""
    logged = previous.header.persona
    return {k: spec.persona.get(k) for k in WINDOW_SETTINGS if spec.persona.get(k) != logged.get(k)}


def _persona_words(settings: dict[str, Any]) -> str:
    extra = ", ".join(f"{k}={v}" for k, v in sorted(settings.items()) if k != "driver")
    return f"{settings.get('driver')}" + (f" ({extra})" if extra else "")
