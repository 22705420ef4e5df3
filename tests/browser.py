"""Headless Chromium for the browser tests: Debian's `chromium` driven by Playwright's Python
package (no browser download). `./run-tests` installs the Debian package when it is missing;
`MARATHON_CHROMIUM` points at another build. Screenshots go to `test-artifacts/`."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
# without the background-networking flags Chromium keeps dialling Google on a closed network
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    path = os.environ.get("MARATHON_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no chromium: ./run-tests installs Debian's package, or set MARATHON_CHROMIUM")
    return path


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as p:
        launched = await p.chromium.launch(executable_path=chromium_path(), args=FLAGS)
        try:
            yield launched
        finally:
            await launched.close()


def artifact(name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name
