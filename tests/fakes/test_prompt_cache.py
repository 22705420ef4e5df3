"""The fake providers bill cache reads and writes by the documented rules, so a cost report
measured against them says what a user would pay."""

from __future__ import annotations

from typing import Any

from fakes.prompt_cache import AnthropicCache, OpenAICache
from persona.llm.cache_breakpoints import DEFAULT_MINIMUM as ANTHROPIC_MIN_TOKENS

MARK = {"type": "ephemeral"}
BIG = "x" * (ANTHROPIC_MIN_TOKENS * 4 + 400)  # one block past the minimum cacheable prefix


def body(system: str, messages: list[str], marked: tuple[int, ...] = (-1,)) -> dict[str, Any]:
    out = []
    for n, text in enumerate(messages):
        block: dict[str, Any] = {"type": "text", "text": text}
        if n in marked or n - len(messages) in marked:
            block["cache_control"] = MARK
        out.append({"role": "user" if n % 2 == 0 else "assistant", "content": [block]})
    return {"system": [{"type": "text", "text": system, "cache_control": MARK}], "messages": out}


def test_anthropic_reads_what_an_earlier_breakpoint_wrote_and_writes_the_rest() -> None:
    cache = AnthropicCache()
    uncached, read, written = cache.usage(body(BIG, ["hello"]))
    assert read == 0 and written > ANTHROPIC_MIN_TOKENS and uncached == 0  # all up to the last breakpoint written
    uncached, read, written = cache.usage(body(BIG, ["hello", "hi there", "more"]))
    assert read > ANTHROPIC_MIN_TOKENS and written > 0 and uncached == 0  # the old prefix read, the new part written
    _, read, _ = cache.usage(body(BIG + "!", ["hello", "hi there", "more"]))
    assert read == 0  # a changed system part: nothing after it is a hit


def test_anthropic_caches_nothing_below_the_minimum_and_looks_back_twenty_blocks() -> None:
    cache = AnthropicCache()
    assert cache.usage(body("short", ["hello"]))[1:] == (0, 0)
    assert cache.usage(body("short", ["hello"]))[1:] == (0, 0)  # never written: never read
    talk = [f"message {n}" for n in range(40)]
    reads = {}
    for later in (15, 25):  # the last message's breakpoint 14 and 24 blocks past the entry
        cache = AnthropicCache()
        cache.usage(body(BIG, talk[:1]))  # entries at the system part and at message 0
        reads[later] = cache.usage(body(BIG, talk[:later]))[1]
    cache = AnthropicCache()
    cache.usage(body(BIG, [], marked=()))
    system_only = cache.usage(body(BIG, [], marked=()))[1]
    assert reads[15] > reads[25] == system_only  # past the lookback only the system part's entry is found


def test_openai_caches_a_shared_prefix_in_steps_from_1024_tokens() -> None:
    cache = OpenAICache()
    small = {"messages": [{"role": "user", "content": "hi"}]}
    assert cache.usage(small)[1] == 0 and cache.usage(small)[1] == 0  # under 1,024 tokens: never
    long = {"messages": [{"role": "system", "content": BIG}, {"role": "user", "content": "one"}]}
    assert cache.usage(long)[1] == 0  # the first time: nothing to share
    longer = {"messages": [*long["messages"], {"role": "user", "content": "two"}]}
    total, cached = cache.usage(longer)
    assert cached % 128 == 0 and 1024 <= cached <= total


def test_anthropic_bills_each_model_by_its_own_minimum() -> None:
    """A 2,000-token prefix caches on a 1,024-token model, not on a 2,048 or a 4,096 one (the
    fake billed every model by 1,024 and so over-reported cache reads)."""
    prefix = "x" * (2000 * 4)
    for model, caches in (("claude-sonnet-4-5", True), ("claude-3-5-haiku-20241022", False), ("claude-opus-4-5", False)):
        cache = AnthropicCache()
        request = {**body(prefix, ["hello"]), "model": model}
        cache.usage(request)
        assert (cache.usage(request)[1] > 0) is caches, model
