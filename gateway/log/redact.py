"""Redaction of secrets before anything is written (design §5).

Applied to every settings object that reaches a log header or a report: values under keys
that name a secret, authorization-like header values, bot tokens inside URLs, and bare bot
tokens and `sk-` API keys in free text (an error message quoting an agent's log). `${ENV}`
references are kept — they name where a secret lives, not the secret.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "«redacted»"
_SECRET_KEY = re.compile(r"(key|token|secret|password|passwd|authorization|cookie|credential)", re.IGNORECASE)
_BOT_TOKEN = re.compile(r"bot\d+:[A-Za-z0-9_-]{20,}")
# a bare bot token or API key in free text (an agent's log line quoting the token it was refused)
_BARE_SECRET = re.compile(r"(?<![\w-])(?:\d{5,}:[A-Za-z0-9_-]{30,}|sk-(?:ant-)?[A-Za-z0-9_-]{16,})")
_BEARER = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
_ENV_ONLY = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


def redact_text(text: str) -> str:
    text = _BOT_TOKEN.sub(f"bot{REDACTED}", text)
    return _BARE_SECRET.sub(REDACTED, _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text))


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
