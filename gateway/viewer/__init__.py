"""`marathon view`: a live, read-only web viewer over a recordings folder.

    watch.py   one run's log followed incrementally into transcript items, status and series
    index.py   the runs of a recordings folder, with a bound on how many stay detailed in memory
    app.py     the aiohttp app and its JSON/SSE API; the page itself is in assets/

May import `gateway.log`, `gateway.traffic`, `gateway.report` and `gateway.run` (progress
counters); it never writes a log and never takes a run's lock.
"""
