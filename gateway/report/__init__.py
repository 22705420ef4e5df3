"""Analysis and reports of logged runs: functions of run logs, never of a live run.

    recordings.py   a recordings folder's runs, loaded with their benchmark (`RecordedRun`)
    summary.py      one run's summary: every figure its reports show (`summarize`)
    markdown.py     a run's report.md and its entry in recordings/report.md
    run_line.py     the typed run line and question outcome the cross-run reports read
    cost.py         tokens and cost per role, from prices.json5
    budget.py       the scale ladder's budget metrics (Pass@B, P90, onset)
    comparison.py   the paired A/B protocol: building run lines (.runs.jsonl/.csv), wins, clustered intervals
    stale_facts.py  answers that use an old value of an updated fact
    matrix.py       the cross-run report of a matrix (matrix.md, .runs.jsonl)
    html.py         the self-contained HTML report with charts (templates/)
    rescore.py      re-grading a logged exam blind (rescore-*.json); the judge's calibration check

May import `gateway.log`, `gateway.traffic`, `persona` and `adapters`; never `gateway.run`,
so a report can always be rebuilt from recordings alone.
"""
