"""A run's grades as the reports read them: with a stored `rescore --grader exact` in place.

`marathon rescore RUN --grader exact` grades a run's exam again with today's exact grader and
stores the grades beside the log (`rescore-exact.json`), with the grader's identity and the
digest of the log they were made from. `run_log` (gateway/report/traffic_overlay.py) puts them
in place of the recorded evaluations, and the header's `defines.grader` becomes the identity
that graded them — so a run graded before a rule changed is compared with one graded after only
once both are graded by one grader (issue 61: a rule change read as an agent's regression).

What a caller may rely on: a stored rescore applies only to the log it was made from (once the
log grows or changes it is ignored, and `log.notes` says so); a rescore by an LLM judge, or one
written before rescores recorded an identity, never replaces a grade.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from gateway.log.events import Evaluation
from gateway.log.runlog import EVENTS_FILE, RunLog

REGRADED_FILE = "rescore-exact.json"


def apply_regrading(run_dir: Path, log: RunLog) -> str:
    """Put the run's stored exact re-grading in place in `log`; returns why one that exists could
    not be used ("" otherwise)."""
    path = run_dir / REGRADED_FILE
    if not path.is_file():
        return ""
    try:
        stored: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        problem = f"{REGRADED_FILE} can't be read ({exc}): the grades are the recorded ones"
        log.notes.append(problem)
        return problem
    grader = stored.get("grader_identity") if isinstance(stored, dict) else None
    made_from = stored.get("log") if isinstance(stored, dict) else None
    if not isinstance(grader, dict) or not isinstance(made_from, dict):
        return ""  # written before rescores recorded what graded them: a side file, as it was
    if [made_from.get("bytes"), made_from.get("sha256")] != list(log_digest(run_dir / EVENTS_FILE)):
        problem = (
            f"{REGRADED_FILE} was graded from another state of the log (it grew or changed since): the grades are "
            "the recorded ones — run `marathon rescore RUN --grader exact` again"
        )
        log.notes.append(problem)
        return problem
    items = {str(i.get("question_id")): i for i in stored.get("items", []) if isinstance(i, dict)}
    identity = str(grader.get("identity", ""))
    log.events = [_regraded(e, items[e.question_id], identity) if isinstance(e, Evaluation)
                  and e.question_id in items else e for e in log.events]  # fmt: skip
    log.header.defines = {**log.header.defines, "grader": {**grader, "regraded": True}}
    log.notes.append(f"grades re-graded by `marathon rescore RUN --grader exact` (grader {identity}), not as recorded")
    return ""


def log_digest(path: Path) -> tuple[int, str]:
    """A log's size and sha256: what a stored re-reading (of grades, of traffic) was made from."""
    data = path.read_bytes()
    return len(data), hashlib.sha256(data).hexdigest()


def _regraded(event: Evaluation, item: dict[str, Any], identity: str) -> Evaluation:
    score = item.get("judge_score")
    certain = bool(item.get("certain", True)) and isinstance(score, (int, float))
    return replace(
        event,
        score=float(score) if isinstance(score, (int, float)) else event.score,
        certain=certain,
        attempts=int(item.get("attempts", event.attempts) or event.attempts),
        reason=f"re-graded by {identity}: {item.get('reason', '')}",
        grader="exact",
        low=None,
        high=None,
        decided_by=str(item.get("decided_by", "")),
        rewrites=[],
    )
