"""Security properties a user relies on (see docs/security.md)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from aiohttp import web

from adapters.http_server import serve
from tests.marathon_cli import marathon


def test_recordings_are_private(tmp_path: Path) -> None:
    assert marathon("demo", cwd=tmp_path).returncode == 0
    recordings = tmp_path / "recordings"
    paths = [recordings, *recordings.rglob("*")]
    assert any(p.name == "events.msgpack" for p in paths) and any(p.name == "notes.md" for p in paths)
    for path in paths:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"  # files 0600, folders 0700


async def test_servers_bind_loopback_unless_told_and_then_warn(capsys: pytest.CaptureFixture[str]) -> None:
    served = await serve(web.Application())
    assert served.url.startswith("http://127.0.0.1:")
    await served.stop()
    assert "WARNING" not in capsys.readouterr().err
    exposed = await serve(web.Application(), host="0.0.0.0")
    await exposed.stop()
    assert "listens on 0.0.0.0, not loopback" in capsys.readouterr().err
