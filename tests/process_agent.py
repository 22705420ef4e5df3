"""An HTTP chat agent run as a process of its own, for tests of agents we start: it remembers
statements and answers questions from them (`POST /chat`, `{"message"}` → `{"reply"}`).

Its environment steers it: DIE_AFTER=N exits (code 3) on the Nth message after printing why;
DELAY=S waits S seconds a message (so a test can act while runs are under way); PIDS=DIR gets
a file named by its pid (so a test can check it is gone); NOTES=FILE keeps what it was told in
that file (its state on disk: read at start, appended to); START_FAILS=FILE exits (code 4) at
start while that file exists; NOTES_NAME=HEX names the notes file by these bytes instead (in
NOTES's folder: a name that need not be UTF-8); WORKER=FILE starts a detached worker (its own
session, its parent gone: not in the agent's process group) that appends to FILE until killed,
writing its pid first. It prints "agent pid N" at start.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

AGENT = textwrap.dedent(
    """
    import json, os, sys, time, http.server
    notes, count = [], 0
    if os.environ.get("START_FAILS") and os.path.exists(os.environ["START_FAILS"]):
        print("fatal: the licence file is locked", flush=True)
        sys.exit(4)
    store = os.environ.get("NOTES")
    if store and os.environ.get("NOTES_NAME"):
        store = os.path.join(os.path.dirname(store), os.fsdecode(bytes.fromhex(os.environ["NOTES_NAME"])))
    if store:
        os.makedirs(os.path.dirname(store), exist_ok=True)
    if os.environ.get("WORKER") and os.fork() == 0:  # a daemon's double fork: setsid, then leave
        os.setsid()
        if os.fork() == 0:
            with open(os.environ["WORKER"], "a") as w:
                w.write(f"worker {os.getpid()}\\n")
                while True:
                    w.write("x" * 64); w.flush(); time.sleep(0.005)
        os._exit(0)
    if store and os.path.exists(store):
        notes = [l for l in open(store).read().splitlines() if l]
    if os.environ.get("PIDS"):
        open(os.path.join(os.environ["PIDS"], str(os.getpid())), "w").close()
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
        def do_POST(self):
            global count
            count += 1
            if count == int(os.environ.get("DIE_AFTER", "0")):
                print("fatal: the agent's database is gone", flush=True)
                os._exit(3)
            time.sleep(float(os.environ.get("DELAY", "0")))
            text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["message"]
            if text.rstrip().endswith("?"):
                words = {w.lower().strip("?.,") for w in text.split() if len(w) > 3}
                reply = max(notes, key=lambda n: len(words & set(n.lower().split())), default="never told")
            else:
                told = [l.strip("- ") for l in text.splitlines() if l.strip()]
                notes.extend(told)
                if store:
                    with open(store, "a") as f:
                        f.write("".join(t + "\\n" for t in told))
                reply = "Noted."
            body = json.dumps({"reply": reply}).encode()
            self.send_response(200); self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        def log_message(self, *a): pass
    print("agent pid", os.getpid(), flush=True)
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


def http_process_agent(tmp_path: Path, port: int | None = None, **env: str) -> dict[str, object]:
    """Agent settings that start AGENT as a process of the run's (HTTP on `port`; None: a free
    port each start, `port: "auto"`)."""
    script = tmp_path / "agent_server.py"
    script.write_text(AGENT)
    at = "${PORT}" if port is None else str(port)
    return {
        "adapter": "http",
        **({"port": "auto"} if port is None else {}),
        "url": f"http://127.0.0.1:{at}/chat",
        "timeout": 30,
        "process": {
            "command": [sys.executable, str(script), at],
            "env": env,
            "health": {"url": f"http://127.0.0.1:{at}/health"},
            "ready_timeout": 30,
            "stop_timeout": 2,
        },
    }
