"""The persona engine: the benchmark format, the simulated person, and grading.

Its sub-packages, each importing only those before it (tests/test_architecture.py checks):

    terms.py, phrases.py  leaf modules: text normalisation; the persona's fixed phrases (data)
    llm/        LLM clients behind one `LLMClient` protocol (Anthropic SDK, OpenAI-compatible)
    benchmark/  the format: load and validate with file:line errors, directives, facts, the
                `scale` settings and ladder, distractor pools, importers (LongMemEval)
    grading/    the `Grader` protocol and the exact grader; the blind LLM judge (`Judge`); never-told detection
    drivers/    the `PersonaDriver` protocol: the scripted and the LLM persona, the ladder driver

The persona knows no transport and no log format: the runner (`gateway.run`) hands it the
agent's replies and logs the actions it returns. It never imports `gateway` or `adapters`.
"""
