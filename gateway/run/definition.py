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
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from adapters.lifecycle import binary_for, with_agent_path
from adapters.profiles import resolve
from gateway import __version__
from gateway.report.run_line import CORRECT_RULE
from persona.grading.identity import grader_identity


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
        # the exact grader's identity: its rules, tables and language libraries (issue 61)
        "grader": grader_identity().as_dict() | {"version": __version__},
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
    env = process.get("env") if isinstance(process, dict) else None
    settings_env = tuple(sorted((str(k), str(v)) for k, v in env.items())) if isinstance(env, dict) else ()
    return _version_of(binary_for(str(command[0])), settings_env)


def _scratch_env(settings_env: tuple[tuple[str, str], ...], scratch: str) -> dict[str, str]:
    """The agent's own environment settings with its state folder in `scratch` — HOME too, always:
    `hermes --version` writes `~/.hermes/logs` and an update check where HOME points. A setting
    naming a placeholder only a run fills (its port, the recorder's URL) is left out."""
    env = {"HOME": scratch}
    for key, value in settings_env:
        value = value.replace("${STATE_DIR}", scratch).replace("${RUN_DIR}", scratch)
        if "${" not in value:
            env[key] = value
    return env


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
def _version_of(program: str, settings_env: tuple[tuple[str, str], ...] = ()) -> str:
    """`PROGRAM --version` as the run starts the agent: its PATH, its environment settings, and
    its state folder and HOME in a scratch folder deleted after (never the user's own)."""
    try:
        with tempfile.TemporaryDirectory(prefix="marathon-version-") as scratch:
            done = subprocess.run(
                [program, "--version"],
                capture_output=True,
                text=True,
                timeout=VERSION_TIMEOUT,
                stdin=subprocess.DEVNULL,
                cwd=scratch,
                env=with_agent_path(dict(os.environ)) | _scratch_env(settings_env, scratch),
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({program} --version: {type(exc).__name__})"
    first = next((line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()), "")
    if done.returncode != 0 or not first:
        return f"unknown ({program} --version exited {done.returncode})"
    return first[:200]
