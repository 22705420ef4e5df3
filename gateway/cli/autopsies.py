"""`marathon autopsy RUN [--question ID]`: where each wrong answer's fact was lost (the
memory autopsy, gateway/report/autopsy.py), read from the run's log and its agent's memory
files; one question's timeline with `--question` (a fact id `file:id` picks its questions)."""

from __future__ import annotations

import sys
from pathlib import Path

from gateway.display import safe_text
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError
from gateway.report.autopsy import autopsy, render_autopsy, render_timeline
from gateway.report.recordings import load_run
from persona.benchmark.errors import BenchmarkErrors


def cmd_autopsy(run: Path, question: str | None) -> int:
    run_dir = run.parent if run.name == EVENTS_FILE else run
    try:
        recorded = load_run(run_dir)
    except (OSError, RunLogFormatError, KeyError) as exc:
        print(f"error: {run_dir}: can't read the run: {exc}", file=sys.stderr)
        return 1
    except BenchmarkErrors as exc:
        print(f"error: {run_dir}: its benchmark no longer loads ({exc.errors[0]})", file=sys.stderr)
        return 1
    result = autopsy(recorded)
    if question is None:
        print(safe_text(render_autopsy(result, bool(recorded.header.agent.get("offline_stand_in")))), end="")
        return 0
    picked = [q for q in result.questions if q.question_id == question]
    if not picked:
        known = ", ".join(q.question_id for q in result.questions) or "none"
        print(f"error: no graded question {question!r} in {run_dir.name} (graded: {known})", file=sys.stderr)
        return 2
    print(safe_text(render_timeline(picked[0])), end="")
    return 0
