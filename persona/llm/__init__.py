"""LLM clients for the persona and the judge, behind one protocol (`LLMClient`)."""
