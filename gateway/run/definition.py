"""What defines a run, beside its benchmark and agent: the limits, the correctness rule, the
persona (driver, model, the hash of its prompt) and the grader and judge (name, version, the hash
of the rubrics) — logged in the run's header (`Header.defines`), the experiment's plan and every
run line, so two runs that differ in any of them are never compared as if they were alike.

What a caller may rely on: the hashes are sha256 over the data files' relative paths and bytes,
the same on any machine for the same files.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from adapters.lifecycle import binary_for, with_agent_path
from adapters.profiles import resolve
from gateway import __version__
from gateway.report.run_line import CORRECT_RULE


def _root() -> Path:
    import persona

    return Path(persona.__file__).resolve().parent


@cache
def files_sha256(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run_definition(persona: dict[str, Any], limits: dict[str, float]) -> dict[str, Any]:
    """The header's `defines` for a run with these persona settings and limits."""
    root = _root()
    driver = str(persona.get("driver", "scripted"))
    grading = persona.get("grading") if isinstance(persona.get("grading"), dict) else {}
    judge = str((grading or {}).get("judge", "")) or (driver if ":" in driver else "")
    return {
        "limits": dict(limits),
        "correct_rule": CORRECT_RULE,
        "persona": {
            "driver": driver,
            "model": driver.split(":", 1)[1] if ":" in driver else "",
            "prompt_sha256": files_sha256(root / "drivers" / "prompts") if ":" in driver else "",
            "phrases_sha256": files_sha256(root / "languages"),
        },
        "grader": {"name": "exact", "version": __version__},
        "judge": {"name": judge, "rubrics_sha256": files_sha256(root / "grading" / "rubrics")}
        if judge
        else {},
    }


VERSION_TIMEOUT = 15.0  # s: `AGENT --version` of an agent we start


def agent_version(settings: dict[str, Any]) -> str:
    """The agent's version as its own program says it (`COMMAND --version`, the first line), for
    an agent we start; the reference agent's is ours; otherwise why it is not known."""
    settings = resolve(settings)
    if settings.get("adapter") == "reference":
        return f"reference agent of marathonbench {__version__}"
    process = settings.get("process")
    command = process.get("command") if isinstance(process, dict) else None
    if not isinstance(command, list) or not command or "${" in str(command[0]):
        return "unknown (an agent we don't start, or one started by a shell command)"
    package = process.get("version_package") if isinstance(process, dict) else None
    if isinstance(package, str) and package:
        return _package_version(binary_for(str(command[0])), package)
    return _version_of(binary_for(str(command[0])))


@cache
def _package_version(program: str, package: str) -> str:
    """An agent whose program says no version (Letta's `letta` has no --version): its Python
    package's, asked of the Python its program's first line names (a pip console script)."""
    found = program if "/" in program else shutil.which(program)
    try:
        first = Path(found).read_bytes()[:300].split(b"\n", 1)[0].decode() if found else ""
    except OSError as exc:
        return f"unknown ({program}: {type(exc).__name__})"
    python = first.removeprefix("#!").strip().split(" ")[0] if first.startswith("#!") else ""
    if not python:
        return f"unknown ({program} is not a Python program: no version of {package} to read)"
    try:
        done = subprocess.run(
            [python, "-c", f"import importlib.metadata as m; print(m.version({package!r}))"],
            capture_output=True, text=True, timeout=VERSION_TIMEOUT, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({python}: {type(exc).__name__})"
    version = done.stdout.strip()
    return f"{package} {version}" if done.returncode == 0 and version else f"unknown (no package {package} beside {program})"


@cache
def _version_of(program: str) -> str:
    try:
        done = subprocess.run(
            [program, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=with_agent_path(dict(os.environ)),  # as the agent's process gets it
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({program} --version: {type(exc).__name__})"
    first = next((line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()), "")
    if done.returncode != 0 or not first:
        return f"unknown ({program} --version exited {done.returncode})"
    return first[:200]
