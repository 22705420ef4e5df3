"""The fake persona model, served as a real provider on loopback, for the LLM persona's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.http_server import ServedApp, serve
from fakes.persona_model import FakePersonaModel


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[FakePersonaModel, ServedApp]]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = FakePersonaModel()
    served = await serve(model.app())
    yield model, served
    await served.stop()
