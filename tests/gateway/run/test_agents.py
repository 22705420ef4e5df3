"""Opening an agent for a run: `llm.upstream: "standin"` — a real agent's setup rehearsed
offline, its model calls going through the recorder to the stand-in, and every output saying so."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from gateway.log.events import (
    Evaluation,
    LLMExchange,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from tests.conftest import BenchFactory

# an HTTP chat agent as a process whose model is wherever LLM_URL says, spoken to in the
# Anthropic Messages format with the whole conversation each turn (no memory of its own)
AGENT = textwrap.dedent(
    """
    import json, os, sys, http.server, urllib.request
    history = []
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers()
        def do_POST(self):
            text = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["message"]
            history.append({"role": "user", "content": text})
            request = urllib.request.Request(
                os.environ["LLM_URL"] + "/v1/messages",
                data=json.dumps({"model": "claude-x", "max_tokens": 512, "messages": history}).encode(),
                headers={"content-type": "application/json", "x-api-key": "none", "anthropic-version": "2023-06-01"},
            )
            answer = json.loads(urllib.request.urlopen(request, timeout=30).read())
            reply = "".join(b.get("text", "") for b in answer["content"])
            history.append({"role": "assistant", "content": reply})
            body = json.dumps({"reply": reply}).encode()
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a): pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
    """
)


async def test_a_real_agent_rehearsed_on_the_stand_in_is_recorded_and_named_so(
    make_benchmark: BenchFactory, tmp_path: Path
) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    agent = {
        "adapter": "http",
        "port": "auto",
        "url": "http://127.0.0.1:${PORT}/chat",
        "llm": {"upstream": "standin", "port": "auto"},
        "process": {
            "command": [sys.executable, str(script), "${PORT}"],
            "env": {"LLM_URL": "${LLM_URL}"},
            "health": {"tcp": "127.0.0.1:${PORT}"},
        },
    }
    outcome = await run_spec(RunSpec("rehearsal", make_benchmark(), agent), tmp_path / "rec")
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "rec" / "rehearsal" / EVENTS_FILE)
    assert log.header.agent["offline_stand_in"] is True
    assert "stand-in" in log.header.agent["model"]
    calls = [e for e in log.events if isinstance(e, LLMExchange)]
    assert calls and all(c.status == 200 for c in calls)  # every model call went through the recorder
    assert len([e for e in log.events if isinstance(e, Evaluation)]) == 3
    report = (tmp_path / "rec" / "rehearsal" / "report.md").read_text()
    assert "stand-in" in report
