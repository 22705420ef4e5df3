"""The `marathon` entry point: Ctrl-C while the command's modules still import (its first
second on a busy machine) ends as a later Ctrl-C does — the command's message, exit 130 —
never a `KeyboardInterrupt` traceback with exit −2."""

from __future__ import annotations

import builtins
import sys
from typing import Any

import pytest

from gateway.cli import entry


def _interrupt_importing(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """Ctrl-C arriving while `module` is imported (the signal's timing, made exact)."""
    real = builtins.__import__

    def importing(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == module:
            raise KeyboardInterrupt
        return real(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setattr(builtins, "__import__", importing)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["report", "recordings"], "interrupted; the run logs are untouched and no report was half-written"),
        (["demo", "--fresh"], "interrupted; the run log is intact — run it again without --fresh to resume"),
        (["run", "config.jsonc"], "interrupted; the run log is intact — run the same command again to resume"),
        (["inspect", "x"], "interrupted"),
    ],
)
def test_ctrl_c_while_importing_says_what_the_command_left(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    _interrupt_importing(monkeypatch, "gateway.cli.main")
    assert entry.main(argv) == 130
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
