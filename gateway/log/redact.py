"""Redaction of secrets before anything is written (design §5).

Applied to every settings object that reaches a log header or a report: values under keys
that name a secret, authorization-like header values, bot tokens inside URLs, and bare bot
tokens and `sk-` API keys in free text (an error message quoting an agent's log). `${ENV}`
references are kept — they name where a secret lives, not the secret.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit

E = TypeVar("E")

REDACTED = "«redacted»"
# settings and headers: any key naming a secret (`x-custom-auth`, `X-Auth`, `api_key`, …)
_SECRET_KEY = re.compile(
    r"(key|token|secret|password|passwd|authorization|cookie|credential|auth(?!or\b))", re.IGNORECASE
)
# fields of a JSON body: only names that are secrets by themselves (`max_tokens` is not)
BODY_SECRET_FIELDS = frozenset(
    {"api_key", "apikey", "api-key", "x-api-key", "access_token", "refresh_token", "auth_token", "id_token",
     "client_secret", "secret", "secret_key", "password", "private_key", "authorization", "token"}
)  # fmt: skip
_BOT_TOKEN = re.compile(r"bot\d+:[A-Za-z0-9_-]{20,}")
# a bare bot token or API key in free text (an agent's log line quoting the token it was refused)
_BARE_SECRET = re.compile(
    r"(?<![\w-])(?:\d{5,}:[A-Za-z0-9_-]{30,}"  # a bot token
    r"|sk-(?:ant-)?[A-Za-z0-9_-]{16,}"  # OpenAI / Anthropic keys
    r"|AIza[0-9A-Za-z_-]{30,}"  # Google API keys
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"  # a JWT (bearer tokens)
)
# a URL's query parameter that names a secret: ?key=…, &api_key=…, &access_token=…
_QUERY_SECRET = re.compile(
    r"([?&](?:[A-Za-z0-9_.-]*(?:key|token|secret|password|auth|signature|sig)[A-Za-z0-9_.-]*)=)[^&#\s\"']+",
    re.IGNORECASE,
)
_BEARER = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
# a URL's userinfo password: http://bob:PASS@host
_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)[^@/\s]+@", re.IGNORECASE)
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# what every secret shape above needs, one of them at least: a text with none holds no secret
# by shape and is spared the regex passes (a plain `in` is ~5× faster than a case-blind regex)
_SHAPE_HINTS = ("bot", "bearer", "basic", "sk-", "aiza", "eyj", "://", "?", "&")
_BOT_TOKEN_HINT = re.compile(r"\d{5}:")


def _maybe_secret(text: str) -> bool:
    lowered = text.lower()
    return any(h in lowered for h in _SHAPE_HINTS) or (":" in text and bool(_BOT_TOKEN_HINT.search(text)))


MIN_SECRET_LENGTH = 8  # a shorter configured "secret" would blank ordinary words everywhere
# a value that only names where its secret is (`${API_SERVER_KEY}`, `Bearer ${API_SERVER_KEY}`):
# logged as written — it holds no secret, and a fork of the run reads the environment again
_ENV_ONLY = re.compile(r"^(?:(?:Bearer|Basic|Token)\s+)?\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


def _names_pattern(names: frozenset[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    alternatives = "|".join(re.escape(n) for n in sorted(names))
    return re.compile(rf"([?&](?:{alternatives})=)[^&#\s\"']+", re.IGNORECASE)


class Redactor:
    """Secrets by name and by shape, with the names a run adds (`llm.secret_names`: a
    custom header, body field or query parameter that holds a secret). What a caller may
    rely on: every method returns a copy with each secret replaced by `«redacted»`, and
    `${ENV}` references are kept — they name where a secret lives, not the secret."""

    def __init__(self, extra_names: frozenset[str] = frozenset(), values: Iterable[str] = ()) -> None:
        self.extra = frozenset(n.lower() for n in extra_names)
        self._body_names = BODY_SECRET_FIELDS | self.extra
        self._query = _names_pattern(self.extra)
        # the run's own secret values (`secret_values`), longest first: wherever they appear —
        # echoed by an upstream, repeated by the agent, inside a recorded body
        self.values = tuple(sorted({v for v in values if len(v) >= MIN_SECRET_LENGTH}, key=len, reverse=True))
        self._byte_values = tuple(v.encode() for v in self.values)

    def text(self, text: str) -> str:
        """The run's secret values wherever they are, and secrets by shape in free text: bot
        tokens, bearer values, `sk-`/`sk-ant-`/`AIza` keys, JWTs, a URL's userinfo password and
        the values of secret-named query parameters."""
        for v in self.values:
            if v in text:
                text = text.replace(v, REDACTED)
        if not _maybe_secret(text):
            return text  # the common case: nothing shaped like a secret, no regex pass
        text = _USERINFO.sub(lambda m: m.group(1) + REDACTED + "@", text)
        text = _BOT_TOKEN.sub(f"bot{REDACTED}", text)
        text = _QUERY_SECRET.sub(lambda m: m.group(1) + REDACTED, text)
        if self._query is not None:
            text = self._query.sub(lambda m: m.group(1) + REDACTED, text)
        return _BARE_SECRET.sub(REDACTED, _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text))

    def body(self, value: Any) -> Any:
        """A JSON body with secrets removed: the values of fields named as secrets
        (`BODY_SECRET_FIELDS` and the run's names) and secrets by shape in every string."""
        if isinstance(value, dict):
            return {
                k: REDACTED
                if isinstance(k, str) and k.lower() in self._body_names and v not in (None, "")
                else self.body(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self.body(v) for v in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    def bytes(self, data: bytes) -> bytes:
        """A recorded body (JSON, server-sent events or text) with its secrets removed; bytes
        that are no text are kept as they are (but for the run's secret values)."""
        data = self.raw(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data
        try:
            parsed = json.loads(text)
        except ValueError:
            cleaned = self.text(text)
        else:
            if not isinstance(parsed, (dict, list)):
                return data
            redacted = self.body(parsed)
            if redacted == parsed:
                return data  # unchanged: keep the bytes exactly as they came
            cleaned = json.dumps(redacted, ensure_ascii=False)
        return data if cleaned == text else cleaned.encode("utf-8")

    def raw(self, data: builtins.bytes) -> builtins.bytes:
        """Bytes with the run's secret values replaced, and nothing else touched."""
        for v in self._byte_values:
            if v in data:
                data = data.replace(v, REDACTED.encode())
        return data

    def strings(self, value: Any) -> Any:
        """Every string inside `value` through `text`, bytes through `bytes`; other values kept."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (builtins.bytes, bytearray)):
            return self.bytes(builtins.bytes(value))  # a recorded body: by field name, shape and value
        if isinstance(value, dict):
            return {k: self.strings(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.strings(v) for v in value]
        return value

    def event(self, event: E) -> E:
        """A log event with every field through `strings`: the one path every text takes into
        a log (the run log's writer applies it to each event it writes)."""
        if not dataclasses.is_dataclass(event) or isinstance(event, type):
            return event
        changes = {}
        for f in dataclasses.fields(event):
            if f.name in ("seq", "ts"):
                continue
            before = getattr(event, f.name)
            after = self.strings(before)
            if after != before:
                changes[f.name] = after
        return dataclasses.replace(event, **changes) if changes else event

    def value(self, value: Any, key: str = "") -> Any:
        """Settings or headers: values under keys naming a secret, and secrets by shape."""
        if isinstance(value, dict):
            return {k: self.value(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        if isinstance(value, str):
            named = key and (_SECRET_KEY.search(key) or key.lower() in self.extra)
            if named and value and not _ENV_ONLY.match(value):
                return REDACTED
            return self.text(value)
        return value


DEFAULT = Redactor()


def redact_text(text: str) -> str:
    return DEFAULT.text(text)


def redact_body(value: Any) -> Any:
    return DEFAULT.body(value)


def redact_bytes(data: bytes) -> bytes:
    return DEFAULT.bytes(data)


def redact(value: Any, key: str = "") -> Any:
    """A deep copy of `value` with secrets replaced by `«redacted»` (the built-in names)."""
    return DEFAULT.value(value, key)


# keys read from the environment by default (an LLM persona, a judge, the agent's provider):
# as `${NAME}` references, so `secret_values` takes their values
DEFAULT_SECRET_ENV = ["${ANTHROPIC_API_KEY}", "${OPENAI_API_KEY}"]


def secret_values(settings: Any, env: Mapping[str, str] | None = None) -> frozenset[str]:
    """The secret values a run's settings hold or point at: values under secret-named keys (a
    `${NAME}` there: that variable's value), variables named like a secret that any setting
    references (`Bearer ${OPENCLAW_GATEWAY_TOKEN}`, `api_key_env: "JUDGE_KEY"`), and URL
    userinfo passwords. Redacted wherever they appear (`Redactor(values=…)`)."""
    env = os.environ if env is None else env
    found: set[str] = set()

    def from_env(text: str) -> None:
        for name in _ENV_REF.findall(text):
            if _SECRET_KEY.search(name) and env.get(name):
                found.add(env[name])

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            from_env(value)
            if key.endswith("_env") and _SECRET_KEY.search(key) and env.get(value):
                found.add(env[value])  # api_key_env: "ANTHROPIC_API_KEY"
            elif _SECRET_KEY.search(key) and value and not _ENV_REF.search(value):
                found.add(value.split()[-1])  # "Bearer abc…": the token itself
            if "://" in value:
                try:
                    password = urlsplit(value).password
                except ValueError:
                    password = None
                if password:
                    found.add(password)

    walk(settings)
    return frozenset(v for v in found if len(v) >= MIN_SECRET_LENGTH)
