"""The gateway: everything between the persona and the agent, and what is made of it after.

Its sub-packages stand in dependency order — each imports only those before it
(tests/test_architecture.py holds the house to this); a run writes the log, the log is
analysed and reported:

    log/      the run log: its typed events, writer, reader, migrations, redaction
    traffic/  the LLM-traffic recorder: embedded mitmproxy, wire parsers, traffic analysis
    report/   analysis and reports of logged runs: metrics, budgets, A/B, rescore, cost, Markdown/HTML
    run/      running a marathon: config, agents, persona drivers, the runner, resume, replay
    viewer/   `marathon view`: the live web viewer over a recordings folder
    cli/      the `marathon` command

All of it may import `persona` and `adapters`; neither of those ever imports the gateway.
"""

__version__ = "0.1.0"
