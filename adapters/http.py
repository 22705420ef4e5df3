"""HTTP chat surfaces: a generic JSON endpoint and OpenAI-compatible chat completions.

Generic mode posts a JSON body built from a template in which the strings `{message}` and
`{session}` are filled in, and finds the reply by a dotted path (`reply`, `data.text`,
`choices.0.message.content`). OpenAI mode posts to `<base_url>/chat/completions`, either
stateless (the whole history every time) or stateful (the last message plus a session key in a
header or in `user`). A new session is a new session id; nothing is sent to the agent for it.

Connection errors and 5xx answers are retried with exponential backoff; a timeout is not
retried (the agent may still be working on the message, and a second copy would be a second
turn in its memory).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from adapters.base import (
    AdapterConfigError,
    AgentAuthError,
    AgentConnectionError,
    AgentHTTPError,
    AgentProtocolError,
    AgentReplyTooLarge,
    AgentTimeout,
    SessionState,
    compact_commands,
    max_reply_bytes,
    number_setting,
)

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_env(value: str) -> str:
    """`${NAME}` → the environment variable, so secrets live in the environment, not in config."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in os.environ:
            raise AdapterConfigError(f"environment variable {name} is not set (referenced in agent settings)")
        return os.environ[name]

    return _ENV_REF.sub(sub, value)


def fill_template(template: Any, values: dict[str, str]) -> Any:
    """Fill `{name}` placeholders in every string of a JSON-like template."""
    if isinstance(template, str):
        for name, value in values.items():
            if template == "{" + name + "}":
                return value
        out = template
        for name, value in values.items():
            out = out.replace("{" + name + "}", value)
        return out
    if isinstance(template, dict):
        return {k: fill_template(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill_template(v, values) for v in template]
    return template


def find_path(data: Any, path: str) -> Any:
    """Follow a dotted path (`choices.0.message.content`) into JSON; KeyError if it isn't there."""
    node = data
    for part in path.split(".") if path else []:
        if isinstance(node, list) and part.lstrip("-").isdigit():
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise KeyError(part)
    return node


class HttpAdapter:
    """Chat over HTTP. Settings (all but `url` optional):

    mode: "json" | "openai"; url; headers (values may use `${ENV}`); timeout (s, default 120);
    retries (default 3); backoff (s, default 0.5); session_prefix.
    json mode: body (template, default `{"message": "{message}", "session_id": "{session}"}`),
    reply_path (default "reply").
    openai mode: model, stateful (default false), session_header (else the `user` field).
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self.compact_commands = compact_commands(settings)
        self.mode = settings.get("mode", "json")
        if self.mode not in ("json", "openai"):
            raise AdapterConfigError(f"http adapter mode must be 'json' or 'openai', not {self.mode!r}")
        url = settings.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise AdapterConfigError("http adapter needs `url`: an http:// or https:// address")
        url = expand_env(url)
        self.url = url.rstrip("/") + "/chat/completions" if self.mode == "openai" else url
        self.headers = {str(k): expand_env(str(v)) for k, v in dict(settings.get("headers", {})).items()}
        if urlsplit(url).username is not None and any(k.lower() == "authorization" for k in self.headers):
            raise AdapterConfigError(
                "the agent's `url` holds a user name and password (user:pass@host) and `headers` an "
                "Authorization header: the request can carry only one — keep one of them"
            )
        self.timeout = number_setting(settings, "timeout", 120)
        self.retries = int(number_setting(settings, "retries", 3, whole=True))
        self.backoff = number_setting(settings, "backoff", 0.5)
        self.session_prefix = str(settings.get("session_prefix", "marathon"))
        self.body = settings.get("body", {"message": "{message}", "session_id": "{session}"})
        self.reply_path = str(settings.get("reply_path", "reply"))
        self.max_reply_bytes = max_reply_bytes(settings)
        self.model = str(settings.get("model", "default"))
        self.stateful = bool(settings.get("stateful", False))
        self.session_header = settings.get("session_header")
        self.session = SessionState(self._new_id())
        self._http: aiohttp.ClientSession | None = None
        # told about each failed attempt that will be retried (the runner logs it)
        self.on_retry: Callable[[str], None] | None = None

    def _new_id(self) -> str:
        return f"{self.session_prefix}-{uuid.uuid4().hex[:12]}"

    async def open(self, resume: SessionState | None = None) -> str:
        if self._http is None:
            self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout))
        if resume is not None:
            self.session = SessionState(resume.id, list(resume.turns))
        return self.session.id

    async def new_session(self) -> str:
        self.session = SessionState(self._new_id())
        return self.session.id

    async def compact(self) -> str:
        """Send the agent's compaction commands; returns what it answered the last."""
        replies = [await self.send(command) for command in self.compact_commands]
        return replies[-1] if replies else ""

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def send(self, text: str) -> str:
        headers, body = self._request(text)
        data = await self._post(headers, body)
        reply = self._reply(data)
        self.session.turns.append((text, reply))
        return reply

    def _request(self, text: str) -> tuple[dict[str, str], Any]:
        headers = dict(self.headers)
        if self.mode == "json":
            return headers, fill_template(self.body, {"message": text, "session": self.session.id})
        messages: list[dict[str, str]] = []
        if not self.stateful:
            for user, assistant in self.session.turns:
                messages += [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        messages.append({"role": "user", "content": text})
        body: dict[str, Any] = {"model": self.model, "messages": messages, "stream": False}
        if self.stateful:
            if self.session_header:
                headers[str(self.session_header)] = self.session.id
            else:
                body["user"] = self.session.id
        return headers, body

    def _reply(self, data: Any) -> str:
        path = "choices.0.message.content" if self.mode == "openai" else self.reply_path
        try:
            reply = find_path(data, path)
        except (KeyError, IndexError, TypeError):
            raise AgentProtocolError(f"reply has no {path!r}: {json.dumps(data)[:200]}") from None
        if not isinstance(reply, str):
            raise AgentProtocolError(f"reply at {path!r} is {type(reply).__name__}, not text")
        return reply

    def _retrying(self, failure: Exception, attempt: int) -> None:
        if self.on_retry is not None and attempt < self.retries:
            self.on_retry(f"{failure}; retrying ({attempt + 1} of {self.retries})")

    async def _post(
        self, headers: dict[str, str], body: Any, url: str | None = None, method: str = "POST"
    ) -> Any:
        """`method` `body` to `url` (default: the chat URL), with the retries; the JSON reply."""
        if self._http is None:
            await HttpAdapter.open(self)
        assert self._http is not None
        url = url or self.url
        failure: Exception = AgentConnectionError(f"no attempt made to reach {url}")
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                async with self._http.request(method, url, json=body, headers=headers) as resp:
                    status, raw = resp.status, await self._bounded(resp)
            except TimeoutError:
                raise AgentTimeout(f"no reply from {url} within {self.timeout:g} s") from None
            except aiohttp.ClientError as exc:
                failure = AgentConnectionError(f"can't reach {url}: {exc}")
                self._retrying(failure, attempt)
                continue
            if status >= 400:
                text = raw[:200].decode("utf-8", "replace")
                if status in (401, 403):
                    raise AgentAuthError(status, text)
                failure = AgentHTTPError(status, text)
                if status < 500:
                    raise failure
                self._retrying(failure, attempt)
                continue
            try:
                return json.loads(raw)
            except ValueError:
                raise AgentProtocolError(f"reply is not JSON: {raw[:120]!r}") from None
            except RecursionError:  # a hostile body nested past Python's stack
                raise AgentProtocolError("reply is JSON nested too deeply to read") from None
        raise failure

    async def _bounded(self, resp: aiohttp.ClientResponse) -> bytes:
        """The body, read up to `max_reply_bytes`: past it, reading stops (the connection is
        dropped) and `AgentReplyTooLarge` says how much came — never the whole of an endless body."""
        limit = self.max_reply_bytes
        if resp.content_length is not None and resp.content_length > limit:
            resp.close()
            raise AgentReplyTooLarge(resp.content_length, limit)
        chunks: list[bytes] = []
        size = 0
        async for chunk in resp.content.iter_chunked(64 * 1024):
            size += len(chunk)
            if size > limit:
                resp.close()
                raise AgentReplyTooLarge(size, limit)
            chunks.append(chunk)
        return b"".join(chunks)
