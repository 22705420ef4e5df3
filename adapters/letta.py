"""A Letta agent over its REST API (verified against Letta 0.11.7's server; docs/agents.md).

Settings: `url` (the server, e.g. `http://127.0.0.1:8283`), `agent_id` (an agent you created)
or `agent` (the body of `POST /v1/agents/` — memory blocks, `llm_config`, `embedding_config` —
to create one when the run starts), `headers`, `timeout`, `retries`, `compact_commands`.

What a caller may rely on:
- a message is `POST /v1/agents/{id}/messages`; the reply is the text of the turn's
  `assistant_message`s (what the agent's `send_message` said), joined; a turn that ended
  without one (Letta's `max_steps`) is an empty reply, not an error;
- a new session is `PATCH /v1/agents/{id}/reset-messages`: the agent's conversation is
  cleared (Letta deletes it: its `conversation_search` no longer finds it) while its memory
  blocks stay — Letta's own notion of starting over with what it remembers;
- the session id is `<agent id>#<n>` (n counts the resets), so a resumed run talks to the
  same agent.
"""

from __future__ import annotations

from typing import Any

from adapters.base import AdapterConfigError, AgentProtocolError, SessionState
from adapters.http import HttpAdapter, expand_env


class LettaAdapter(HttpAdapter):
    def __init__(self, settings: dict[str, Any]) -> None:
        base = settings.get("url")
        if not isinstance(base, str) or not base.startswith(("http://", "https://")):
            raise AdapterConfigError(
                "letta adapter needs `url`: the Letta server, e.g. http://127.0.0.1:8283"
            )
        super().__init__({**settings, "url": base, "mode": "json"})
        self.base = expand_env(base).rstrip("/")
        agent_id = settings.get("agent_id")
        self.agent_id = expand_env(str(agent_id)) if agent_id else ""
        self.create = settings.get("agent")
        if not self.agent_id and not isinstance(self.create, dict):
            raise AdapterConfigError(
                "letta adapter needs `agent_id` (an agent you created) or `agent` (the body of "
                "POST /v1/agents/ to create one per run)"
            )
        self.resets = 0

    @property
    def session_id(self) -> str:
        return f"{self.agent_id}#{self.resets}"

    async def open(self, resume: SessionState | None = None) -> str:
        await HttpAdapter.open(self)
        if resume is not None and "#" in resume.id:
            agent_id, _, resets = resume.id.rpartition("#")
            self.agent_id, self.resets = agent_id, int(resets) if resets.isdigit() else 0
        elif not self.agent_id:
            self.agent_id = await self._create()
        self.session = SessionState(self.session_id)
        return self.session_id

    async def _create(self) -> str:
        created = await self._post(dict(self.headers), self.create, f"{self.base}/v1/agents/")
        agent_id = created.get("id") if isinstance(created, dict) else None
        if not isinstance(agent_id, str) or not agent_id:
            raise AgentProtocolError(f"Letta created no agent id: {str(created)[:200]}")
        return agent_id

    async def new_session(self) -> str:
        await self._post(
            dict(self.headers), None, f"{self.base}/v1/agents/{self.agent_id}/reset-messages", "PATCH"
        )
        self.resets += 1
        self.session = SessionState(self.session_id)
        return self.session_id

    async def send(self, text: str) -> str:
        body = {"messages": [{"role": "user", "content": text}]}
        data = await self._post(dict(self.headers), body, f"{self.base}/v1/agents/{self.agent_id}/messages")
        messages = data.get("messages") if isinstance(data, dict) else None
        if not isinstance(messages, list):
            raise AgentProtocolError(f"Letta's reply has no `messages`: {str(data)[:200]}")
        said = [
            _text(m.get("content"))
            for m in messages
            if isinstance(m, dict) and m.get("message_type") == "assistant_message"
        ]
        reply = "\n".join(t for t in said if t)
        self.session.turns.append((text, reply))
        return reply


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
