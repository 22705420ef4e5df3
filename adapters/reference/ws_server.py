"""The reference agent over a WebSocket: one JSON frame in per message, streamed deltas out.

In:  `{"type": "message", "session": S, "text": T}`
Out: `{"type": "delta", "session": S, "text": PIECE}` … then `{"type": "done", "session": S}`;
a frame it can't read gets `{"type": "error", "error": ...}`.
"""

from __future__ import annotations

import json

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from adapters.reference.agent import ReferenceAgent


async def serve_websocket(
    agent: ReferenceAgent, host: str = "127.0.0.1", port: int = 0
) -> tuple[Server, str]:
    async def handler(connection: ServerConnection) -> None:
        try:
            async for raw in connection:
                try:
                    frame = json.loads(raw)
                    session, text = str(frame["session"]), str(frame["text"])
                except (ValueError, KeyError, TypeError):
                    await connection.send(
                        json.dumps({"type": "error", "error": "expected {type, session, text}"})
                    )
                    continue
                reply = await agent.chat(session, text)
                for i in range(0, len(reply), 20):
                    await connection.send(
                        json.dumps({"type": "delta", "session": session, "text": reply[i : i + 20]})
                    )
                await connection.send(json.dumps({"type": "done", "session": session}))
        except ConnectionClosed:
            return

    server = await serve(handler, host, port)
    bound = next(iter(server.sockets)).getsockname()[1]
    return server, f"ws://{host}:{bound}"
