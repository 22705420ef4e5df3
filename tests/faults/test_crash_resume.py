"""SIGKILL the runner at 6 random points of one scripted run, resuming after each: at the end
every question is graded exactly once, no persona message is lost or doubled, and every
message re-sent after a kill is flagged."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from gateway.log.events import Asked, ErrorEvent, Evaluation, Event, Replied, RunStart, Said
from gateway.log.runlog import EVENTS_FILE, iter_records, read_log
from tests.conftest import DEMO, REPO
from tests.run_logs import answered

KILLS = 6  # 20 took 80 s of CI's 20 minutes, 12 took 50; other tests kill at fixed points too


def records(path: Path) -> int:
    try:
        return sum(1 for _ in iter_records(path))
    except FileNotFoundError:
        return 0


def unanswered_then_resent(events: list[Event]) -> tuple[int, int]:
    """(messages left unanswered by a kill, of those re-sent with the `resent` flag)."""
    left = flagged = 0
    pending: Said | Asked | None = None
    for event in events:
        if isinstance(event, (Replied, ErrorEvent)):
            pending = None
        elif isinstance(event, RunStart):
            continue
        elif isinstance(event, (Said, Asked)):
            if pending is not None:
                left += 1
                flagged += event.resent and event.text == pending.text
            pending = event
    return left, flagged


def test_a_dozen_kills_and_resumes(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = (
        f"{{runs: [{{id: 'k', benchmark: '{DEMO}', agent: {{adapter: 'reference', context_tokens: 400}}}}]}}"
    )
    # an uninterrupted run, for the conversation the killed one must end up with
    clean_dir = tmp_path / "clean"
    clean_dir.mkdir()
    (clean_dir / "config.jsonc").write_text(run)
    clean = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "run", "config.jsonc"],
        cwd=clean_dir,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert clean.returncode == 0, clean.stderr
    reference = read_log(clean_dir / "recordings" / "k" / EVENTS_FILE)
    total = records(reference.path)

    (tmp_path / "config.jsonc").write_text(run)
    command = [sys.executable, "-m", "gateway.cli", "run", "config.jsonc"]
    log_path = tmp_path / "recordings" / "k" / EVENTS_FILE
    points = sorted(random.Random(20).sample(range(5, int(total * 0.9)), KILLS))
    kills = 0
    for point in points:
        proc = subprocess.Popen(
            command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
        )
        deadline = time.monotonic() + 60
        while records(log_path) < point and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.communicate()
    final = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert final.returncode == 0, final.stderr
    assert kills == KILLS

    log = read_log(log_path)
    assert Counter(e.question_id for e in log.events if isinstance(e, Evaluation)) == Counter(
        e.question_id for e in reference.events if isinstance(e, Evaluation)
    )
    assert set(Counter(e.question_id for e in log.events if isinstance(e, Evaluation)).values()) == {1}
    assert answered(log.events) == answered(reference.events)  # nothing lost, nothing doubled
    left, flagged = unanswered_then_resent(log.events)
    assert left == flagged
    starts = sum(isinstance(e, RunStart) for e in log.events)
    assert KILLS - 3 <= starts <= KILLS + 1  # a kill may land before a start wrote its record
