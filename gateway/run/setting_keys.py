"""The keys each settings block knows. A misspelt key would silently change what runs —
`persona: {drvier: …}` ran the scripted persona, `context_token` the default window,
`timout` the default timeout — so an unknown key is refused, naming the nearest known one.

The agent block is open to every adapter's keys (a key one adapter reads is accepted for all:
the check is for typos, not for which adapter reads what); the persona block's keys depend on
its driver. `config.py` refuses them at their file:line; `marathon probe --set` and a chat's
settings through `check_agent_settings`.

What a caller may rely on: `unknown_keys` never raises; each problem is (the key's path, the
sentence to print).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Any

# every adapter's keys (adapters/*.py, gateway/run/agents.py; docs/agents.md lists them)
AGENT_KEYS = frozenset(
    """adapter profile description forkable url port timeout retries backoff max_reply_bytes
    headers mode model body reply_path session_prefix session_header stateful compact_commands
    llm process new_session quiet grace api_port token user_id host ignore initiated
    new_session_commands surface memory context_tokens keep_turns stream model_base_url
    api_key_env llm_timeout record_llm agent agent_id cumulative done_when error_path error_when
    match text_path text_when faults memory_files memory_store""".split()
)
PROCESS_KEYS = frozenset(
    """command cwd env fill health snapshot state_dir ready_timeout stop_timeout not_state
    links_into version_package""".split()
)
HEALTH_KEYS = frozenset({"url", "tcp"})
# the recorder's: where the agent's model is, and the traffic profile's patterns it adds
LLM_KEYS = frozenset(
    """upstream port profile memory_tools file_tools wrapper_tools memory_paths summary flush
    replay cleared context_noise background secret_names""".split()
)
GRADING_KEYS = frozenset({"judge", "base_url", "api_key_env"})  # the judge and its model's settings
# the persona's, by driver ("llm": anthropic:… and openai:…); `grading` is the run's, copied in
PERSONA_KEYS = {
    "scripted": frozenset({"driver", "facts_per_message", "grading"}),
    "replay": frozenset({"driver", "from", "grading"}),
    "llm": frozenset(
        {"driver", "base_url", "api_key_env", "temperature", "compaction", "context_tokens", "give_up", "grading"}
    ),
}


def persona_takes(persona: dict[str, Any], key: str) -> bool:
    """Whether the persona's driver takes `key`: a default handed down from the config's top
    (`compaction`) goes only where it is taken — a default is not the user's typo (issue 62)."""
    driver = str(persona.get("driver", "scripted"))
    kind = "llm" if ":" in driver else driver
    return key in PERSONA_KEYS.get(kind, frozenset())


def unknown_key(key: str, known: frozenset[str], block: str) -> str:
    """The sentence for an unknown `key` of `block`, with the nearest known name."""
    near = difflib.get_close_matches(key, sorted(known), n=1)
    hint = f"did you mean `{near[0]}`? " if near else ""
    return f"{block}: unknown key `{key}` ({hint}known: {', '.join(sorted(known))})"


def agent_key_problems(agent: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], str]]:
    """Unknown keys of an agent block, its `llm`, `process` and `process.health` blocks."""
    yield from _unknown(agent, AGENT_KEYS, (), "agent")
    for name, known in (("llm", LLM_KEYS), ("process", PROCESS_KEYS)):
        block = agent.get(name)
        if isinstance(block, dict):
            yield from _unknown(block, known, (name,), f"agent.{name}")
    process = agent.get("process")
    health = process.get("health") if isinstance(process, dict) else None
    if isinstance(health, dict):
        yield from _unknown(health, HEALTH_KEYS, ("process", "health"), "agent.process.health")


def persona_key_problems(persona: dict[str, Any]) -> Iterator[tuple[tuple[str, ...], str]]:
    """Unknown keys of a persona block, by its driver."""
    driver = str(persona.get("driver", "scripted"))
    kind = "llm" if ":" in driver else driver if driver in PERSONA_KEYS else None
    if kind is None:
        return  # an unknown driver is named where the driver is read
    yield from _unknown(persona, PERSONA_KEYS[kind], (), f"persona ({driver})")


def _unknown(
    data: dict[str, Any], known: frozenset[str], where: tuple[str, ...], block: str
) -> Iterator[tuple[tuple[str, ...], str]]:
    for key in data:
        if str(key) not in known:
            yield (*where, str(key)), unknown_key(str(key), known, block)
