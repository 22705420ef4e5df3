"""Loopback fakes shared by the tests and `bench/`: real servers and real providers on
127.0.0.1, never mocks of our own code.

    persona_model.py  a scripted persona model behind the Anthropic and OpenAI wire formats
    llm_provider.py   an OpenAI-compatible LLM provider (chat completions and responses, streamed)
    agents.py         fake agents: an HTTP chat agent with fault hooks, OpenClaw's gateway protocol

Like `mitmproxy.test`, this ships with the code it fakes for, so `bench/` scripts import it
as tests do. It may import `gateway`, `persona` and `adapters`; none of them import it.
"""
