"""Redaction of secrets before anything is written (design §5).

Applied to every settings object that reaches a log header or a report: values under keys
that name a secret, authorization-like header values, bot tokens inside URLs, and bare bot
tokens and `sk-` API keys in free text (an error message quoting an agent's log). `${ENV}`
references are kept — they name where a secret lives, not the secret.
"""

from __future__ import annotations

import json
import re
from typing import Any

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
_ENV_ONLY = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


def redact_text(text: str) -> str:
    """Secrets by shape in free text: bot tokens, bearer values, `sk-`/`sk-ant-`/`AIza` keys,
    JWTs, and the values of secret-named query parameters."""
    text = _BOT_TOKEN.sub(f"bot{REDACTED}", text)
    text = _QUERY_SECRET.sub(lambda m: m.group(1) + REDACTED, text)
    return _BARE_SECRET.sub(REDACTED, _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text))


def redact_body(value: Any) -> Any:
    """A JSON body with secrets removed: the values of fields named as secrets
    (`BODY_SECRET_FIELDS`, plus `extra` names) and secrets by shape in every string."""
    return _redact_body(value, BODY_SECRET_FIELDS)


def _redact_body(value: Any, names: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {
            k: REDACTED if isinstance(k, str) and k.lower() in names and v not in (None, "") else _redact_body(v, names)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_redact_body(v, names) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def redact_bytes(data: bytes) -> bytes:
    """A recorded body (JSON, server-sent events or text) with its secrets removed; bytes that
    are no text are kept as they are."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    try:
        parsed = json.loads(text)
    except ValueError:
        cleaned = redact_text(text)
    else:
        if not isinstance(parsed, (dict, list)):
            return data
        redacted = redact_body(parsed)
        if redacted == parsed:
            return data  # unchanged: keep the bytes exactly as they came
        cleaned = json.dumps(redacted, ensure_ascii=False)
    return data if cleaned == text else cleaned.encode("utf-8")


def redact(value: Any, key: str = "") -> Any:
    """A deep copy of `value` with secrets replaced by `«redacted»`."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        if key and _SECRET_KEY.search(key) and value and not _ENV_ONLY.match(value):
            return REDACTED
        return redact_text(value)
    return value
