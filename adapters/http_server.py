"""Serving an aiohttp app on loopback, on a free port unless one is given."""

from __future__ import annotations

import logging
import socket
import sys
from dataclasses import dataclass

from aiohttp import web


@dataclass
class ServedApp:
    runner: web.AppRunner
    url: str

    async def stop(self) -> None:
        await self.runner.cleanup()


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def warn_if_exposed(host: str, what: str) -> None:
    """Loudly, on stderr: a server of ours reachable from other machines."""
    if host not in LOOPBACK:
        message = (
            f"WARNING: {what} listens on {host}, not loopback: anyone who can reach this machine can use it"
        )
        logging.getLogger("marathonbench.security").warning(message)
        print(message, file=sys.stderr, flush=True)


async def serve(app: web.Application, host: str = "127.0.0.1", port: int = 0) -> ServedApp:
    """Start `app` (loopback unless told otherwise, with a warning); the URL carries the bound port."""
    warn_if_exposed(host, "a marathonbench server")
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    bound = sockets[0].getsockname()[1] if sockets else port
    return ServedApp(runner, f"http://{host}:{bound}")


def free_port(host: str = "127.0.0.1") -> int:
    """A port free on `host` right now (the OS picks it), for a listener we or an agent open."""
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port
