"""The reference agent: a small real agent with a Markdown memory folder, memory tools and
context compaction (`agent.py`, `memory.py`), served over HTTP, WebSocket (`ws_server.py`) or
as a Telegram bot (`telegram_bot.py`), and its offline rule-based model stand-in
(`standin.py`, which speaks the Anthropic Messages wire format; not an LLM).

It is an agent under test like any other: it imports nothing of marathonbench outside this
folder, so what it can do any agent can.
"""
