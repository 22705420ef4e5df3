"""Opt-in (`pytest -m localmodel`): a real, tiny model as the LLM persona — SmolLM2-135M-Instruct
served by llama.cpp's OpenAI-compatible server, set up by `scripts/local-model.sh` outside the
repo. It can't play the persona (it never calls a tool); the run must say so and stop within
minutes, never loop for long or end in a traceback (it looped 7.5 minutes, then crashed on the
model's context length)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.marathon_cli import MARATHON_ENV

pytestmark = pytest.mark.localmodel

MODEL_DIR = Path(os.environ.get("MARATHON_LOCAL_MODEL_DIR") or Path.home() / ".cache/marathonbench/local-model")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_tiny_real_model_as_persona_is_stopped_with_a_reason(tmp_path: Path) -> None:
    if not (MODEL_DIR / "venv" / "bin" / "python").exists():
        pytest.skip(f"no local model in {MODEL_DIR}: run scripts/local-model.sh first (about 15 minutes)")
    port = _free_port()
    server = subprocess.Popen(
        [str(REPO / "scripts" / "local-model.sh"), "serve", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "the model server did not come up"
                time.sleep(1)
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "demo", "--persona", f"openai:http://127.0.0.1:{port}/v1#smollm2"],
            cwd=tmp_path, env=MARATHON_ENV, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        took = time.monotonic() - started
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
    print(f"local-model demo: {took:.0f} s, exit {done.returncode}")
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out[-3000:]
    assert done.returncode != 0 and "persona_failed" in out, out[-3000:]
    assert "[demo] why: the persona model" in out
    assert took < 600
