"""Running a marathon: one run = one persona × one agent × one benchmark, driven to its end.

    config.py    config.jsonc: runs, matrices, experiments (with file:line errors)
    agents.py    opening an agent: adapter, lifecycle, the LLM-traffic recorder
    personas.py  building the persona driver a run asks for
    runner.py    the `Run`: its loop, its termination, its report
    resume.py    reading a log back into the conversation a resumed run continues
    traffic_state.py  the recorder's view of the run (phase, question, canaries), rebuilt on resume
    replay.py    the replay driver: a recorded run's persona side, word for word
    progress.py  per-run counters folded from events, and the terminal progress board
    chat.py      `marathon chat`: a person typing as the persona, recorded
    journal.py   where a run's log lives: its folder here, or the driver's through a relay
    placement.py `executor` (local or a Ray cluster) and the `resources` a run reserves

May import `gateway.log`, `gateway.traffic`, `gateway.report`, `persona` and `adapters`.
"""
