"""Prompt caching as the providers document it, so the fake providers report the cache reads
and writes a user would be billed for — the fake persona model reported `cache_read =
min(size, 1000)` whatever the request, which hid that the persona's conversation was never
cached.

Anthropic (explicit): a prefix is cached only at a `cache_control` breakpoint, when it holds at
least the model's minimum (`persona.llm.cache_breakpoints.min_cacheable_tokens`: 1,024, 2,048
or 4,096 by model — the fake billed every model by 1,024 and so over-reported cache reads); a
request reads the longest cached prefix ending at one of its breakpoints or up to `LOOKBACK`
blocks before one; it writes a cache entry at each breakpoint.
Blocks are in the order the API caches them: tools, system, messages.
OpenAI (automatic): a prompt of at least `OPENAI_MIN_TOKENS` reads the longest prefix it shares
with an earlier request, counted in `OPENAI_STEP`-token steps.
Tokens are estimated as JSON characters / 4, as everywhere in the fakes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from persona.llm.cache_breakpoints import min_cacheable_tokens

LOOKBACK = 20
OPENAI_MIN_TOKENS = 1024
OPENAI_STEP = 128


def _tokens(text: str) -> int:
    return len(text) // 4


def anthropic_blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """(the block's JSON, a breakpoint?) for each block, in cache order."""
    blocks: list[dict[str, Any]] = [*body.get("tools", [])]
    system = body.get("system") or []
    blocks += [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
    for message in body.get("messages", []):
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
        blocks += [{"role": message.get("role"), **part} for part in parts]
    out = []
    for block in blocks:
        marked = "cache_control" in block
        plain = {k: v for k, v in block.items() if k != "cache_control"}
        out.append((json.dumps(plain, sort_keys=True, ensure_ascii=False), marked))
    return out


@dataclass
class AnthropicCache:
    entries: set[str] = field(default_factory=set)

    def usage(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(input_tokens, cache_read_input_tokens, cache_creation_input_tokens) of a request."""
        blocks = anthropic_blocks(body)
        minimum = min_cacheable_tokens(str(body.get("model", "")))
        digests, ends = [], []
        digest, total = hashlib.sha256(), 0
        for text, _ in blocks:
            digest.update(text.encode())
            digests.append(digest.hexdigest())
            total += _tokens(text)
            ends.append(total)
        breakpoints = [i for i, (_, marked) in enumerate(blocks) if marked]
        read_to = -1  # index of the last block read from the cache
        for b in breakpoints:
            for j in range(b, max(-1, b - LOOKBACK - 1), -1):
                if digests[j] in self.entries:
                    read_to = max(read_to, j)
                    break
        written_to = -1
        for b in breakpoints:
            if ends[b] >= minimum:
                self.entries.add(digests[b])
                written_to = b
        read = ends[read_to] if read_to >= 0 else 0
        write = ends[written_to] - read if written_to > read_to else 0
        return total - read - write, read, write


@dataclass
class OpenAICache:
    prompts: list[str] = field(default_factory=list)
    keep: int = 64

    def usage(self, body: dict[str, Any]) -> tuple[int, int]:
        """(prompt_tokens, cached_tokens) of a request."""
        text = json.dumps([body.get("tools"), body.get("messages")], ensure_ascii=False)
        total = _tokens(text)
        shared = max((_common_prefix(text, p) for p in self.prompts), default=0)
        self.prompts = [*self.prompts[-(self.keep - 1) :], text]
        cached = _tokens(text[:shared]) // OPENAI_STEP * OPENAI_STEP
        return total, cached if total >= OPENAI_MIN_TOKENS and cached >= OPENAI_MIN_TOKENS else 0


def _common_prefix(a: str, b: str) -> int:
    low, high = 0, min(len(a), len(b))
    while low < high:  # the longest m with a[:m] == b[:m], by halving (slices compare in C)
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low
