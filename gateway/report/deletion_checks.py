"""Where a run checked that what was deleted stayed gone (a run line's `deletion_checks`): the
`[deleted]` questions, the revoked canaries at the model input, and the declared
`deletion_scope` in the agent's state folder (gateway/report/deletion_scope.py)."""

from __future__ import annotations

from typing import Any

from gateway.log.events import Asked, FactEdited
from gateway.report.deletion_scope import check_scope, state_folder
from gateway.report.recordings import RecordedRun
from persona.benchmark.model import DELETED_MARKERS
from persona.outcome import is_full


def deleted_before(run: RecordedRun, question_ids: set[str]) -> dict[str, list[str]]:
    """For each `[deleted]` question: the texts of the facts deleted before it was asked."""
    out: dict[str, list[str]] = {}
    gone: list[str] = []
    for event in run.log.events:
        if isinstance(event, FactEdited) and event.new.strip() in DELETED_MARKERS and event.old:
            gone.append(event.old)
        elif isinstance(event, Asked) and event.question_id in question_ids:
            out.setdefault(event.question_id, list(gone))
    return out


def deletion_checks(run: RecordedRun) -> list[dict[str, Any]]:
    """Where the run checked that a deleted fact stayed gone, and when: each `[deleted]`
    question (asked at, passed), and each revoked canary marker (watched at the model input
    from, hits)."""
    checks: list[dict[str, Any]] = []
    asked = {e.question_id: e.ts for e in run.log.events if isinstance(e, Asked)}
    for q in run.summary.planned:
        if "deleted" in q.tags and q.id in run.summary.evaluations:
            ev = run.summary.evaluations[q.id]
            checks.append({"place": "question", "id": q.id, "at": asked.get(q.id), "passed": is_full(ev.score)})
    for marker in run.benchmark.settings.get("canaries", []) or []:
        hits = [h for h in run.summary.canary_hits if h.marker == marker]
        checks.append({"place": "model input", "marker": marker, "hits": len(hits), "observed": run.observed})
    scoped = check_scope(run.benchmark, run.log.events, state_folder(run.header.agent, run.run_dir))
    if scoped is not None:  # the declared `deletion_scope`, searched in the agent's state folder
        checks.append(scoped.to_json())
    return checks
