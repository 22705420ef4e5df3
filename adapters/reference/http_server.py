"""Serving an aiohttp app on loopback, on a free port unless one is given."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web


@dataclass
class ServedApp:
    runner: web.AppRunner
    url: str

    async def stop(self) -> None:
        await self.runner.cleanup()


async def serve(app: web.Application, host: str = "127.0.0.1", port: int = 0) -> ServedApp:
    """Start `app`; the returned URL carries the port actually bound."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    return ServedApp(runner, f"http://{host}:{bound}")
