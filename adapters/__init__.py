"""Chat surfaces behind one `AgentAdapter` protocol (`base.py`): what the runner speaks to an
agent through, whatever its chat is.

    base.py          the protocol, session state, and the error tree (`AgentTimeout(AdapterError, TimeoutError)`)
    http.py          a JSON-over-HTTP chat, or an OpenAI-compatible one (`mode: "openai"`)
    websocket.py     a WebSocket chat; openclaw.py: OpenClaw's gateway protocol on top of it
    telegram.py      a Telegram bot, through the Bot API server we play (telegram_api.py)
    lifecycle.py     starting, health-checking, resetting and stopping an agent's process
    profiles/        known agents' settings (data); http_server.py: loopback servers for all of the above
    reference/       the reference agent and its offline model stand-in: an agent under test
                     like any other, importing nothing but itself

Adapters know no benchmark and no recorder: they import nothing of `gateway` or `persona`.
"""
