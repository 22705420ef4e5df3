"""Persona drivers (design §4): given the agent's last reply, the persona's next action.

    actions.py     the vocabulary a driver speaks (`Say`, `Ask`, `Evaluate`, …), plain data
    protocol.py    the `PersonaDriver` protocol
    live_facts.py  the persona's editable copies of the facts (the benchmark files never change)
    scripted.py    the scripted persona: no LLM, every word from the benchmark
    tools.py       the LLM persona's tools (facts_read, next_phase, …)
    llm.py         the LLM persona; its system prompt is data in prompts/
    ladder.py      a rung played with an evidence-only driver: distractors scripted

The replay driver lives in `gateway.run.replay`: it reads a run log, which the persona never
does. May import every other part of `persona`.
"""
