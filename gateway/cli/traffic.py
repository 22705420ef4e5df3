"""`marathon rescore RUN --traffic`: the run's traffic readings made again with today's rules."""

from __future__ import annotations

import sys
from pathlib import Path

from gateway.log.lineage import LineageError
from gateway.log.lock import RunInUse
from gateway.log.runlog import RunLogFormatError
from gateway.report.traffic_rescore import rescore_traffic
from persona.benchmark.errors import BenchmarkErrors


def cmd_rescore_traffic(run: Path) -> int:
    """Prints the figures that moved and where the result went; exit 0, or 1 naming why the run
    can't be read."""
    try:
        before, after, report = rescore_traffic(run)
    except (OSError, RunLogFormatError, LineageError, RunInUse, BenchmarkErrors, KeyError) as exc:
        print(f"error: {run}: {exc}", file=sys.stderr)
        return 1
    was, now = before.totals(), after.totals()
    if not now["answering calls"] and not now["background calls"]:
        print(f"{run.name}: no model call was recorded in this run: nothing to re-derive")
    for name in now:
        moved = f"{was[name]} → {now[name]}" if was[name] != now[name] else f"{now[name]} (unchanged)"
        print(f"  {name}: {moved}")
    print(f"traffic re-derived with today's rules; reports read it from now on; summary: {report}")
    return 0
