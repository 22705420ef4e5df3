"""Grading (design §4): question, expected answer, agent's answer → a 0–10 score with a reason.

    never_told.py  does an answer say the agent was never told? (drives the retry rule)
    exact.py       the `Grader` protocol and the offline exact grader (where a question is graded)
    judge.py       the blind LLM judge; its rubrics are data in rubrics/

May import `persona.benchmark`, `persona.llm` and `persona.terms`; never the drivers.
"""
