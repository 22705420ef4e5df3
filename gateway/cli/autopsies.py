"""`marathon autopsy RUN [--fact ID]`: where each wrong answer's fact was lost (the memory
autopsy, gateway/report/autopsy.py), read from the run's log and its agent's memory files; with
`--fact` (a fact `FILE:ID`, or a question id) the timeline of each question asking it."""

from __future__ import annotations

import sys
from pathlib import Path

from gateway.display import safe_text
from gateway.log.runlog import EVENTS_FILE, RunLogFormatError
from gateway.report.autopsy import autopsy
from gateway.report.autopsy_render import render_autopsy, render_timeline
from gateway.report.recordings import load_run
from persona.benchmark.errors import BenchmarkErrors


def cmd_autopsy(run: Path, fact: str | None) -> int:
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
    if fact is None:
        stand_in = bool(recorded.header.agent.get("offline_stand_in"))
        status = f"the run is {recorded.summary.status}"
        print(safe_text(render_autopsy(result, stand_in, status)), end="")
        if damage := recorded.log.damage_text():  # a half log is no whole run: say where it stops
            print(f"\nLog: its log is {damage} — the autopsy covers only the questions before it.")
        return 0
    # a fact ("home:1.3"): every question asking its value; a question id: that question
    picked = [q for q in result.questions if fact in (q.question_id, *q.facts)]
    if not picked:
        known = ", ".join(q.question_id for q in result.questions) or "none"
        print(
            f"error: no graded question asks {fact!r} in {run_dir.name} (a fact as FILE:ID, or a question: {known})",
            file=sys.stderr,
        )
        return 2
    print("\n".join(safe_text(render_timeline(q)) for q in picked), end="")
    return 0
