"""Property test: whatever a bot sends to the emulated Bot API, the answer is JSON with `ok`
— a clean refusal, never a server error."""

from __future__ import annotations

import asyncio

import aiohttp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.telegram import TelegramAdapter

METHODS = [
    "getMe",
    "getUpdates",
    "sendMessage",
    "editMessageText",
    "deleteMessage",
    "sendChatAction",
    "setMyCommands",
    "setWebhook",
    "nope",
]
values = st.one_of(
    st.text(max_size=30),
    st.integers(),
    st.none(),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=st.sampled_from(METHODS),
    params=st.dictionaries(
        st.sampled_from(
            ["chat_id", "text", "message_id", "offset", "limit", "timeout", "commands", "url", "action"]
        ),
        values,
        max_size=5,
    ),
    how=st.sampled_from(["json", "form", "raw"]),
    raw=st.binary(max_size=60),
)
def test_any_request_gets_a_clean_bot_api_answer(
    method: str, params: dict[str, object], how: str, raw: bytes
) -> None:
    async def go() -> None:
        adapter = TelegramAdapter({})
        await adapter.start()
        url = f"{adapter.api_root}/bot{adapter.emulator.token}/{method}"
        if "timeout" in params:
            params["timeout"] = 0
        try:
            async with aiohttp.ClientSession() as http:
                if how == "json":
                    request = http.post(url, json=params)
                elif how == "form":
                    request = http.post(url, data={k: str(v) for k, v in params.items()})
                else:
                    request = http.post(url, data=raw, headers={"Content-Type": "application/json"})
                async with request as response:
                    assert response.status < 500, await response.text()
                    body = await response.json()
                    assert isinstance(body.get("ok"), bool)
        finally:
            await adapter.close()

    asyncio.run(go())
