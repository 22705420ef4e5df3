"""The set-up scripts say what they do while they do it (issue 47: the first `./marathon demo`
built .venv for two minutes with one line, `./run-tests` installed chromium silently)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PIP_OUTPUT = """\
Obtaining file:///home/u/marathonbench
  Installing build dependencies: started
Collecting aiohttp>=3.9 (from marathonbench==0.1.0)
  Downloading aiohttp-3.12.0-cp313-cp313-manylinux_2_17_x86_64.whl (1.7 MB)
WARNING: Location 'file:///opt/pypi-more/simple/json5/' is ignored
""" + "".join(f"Collecting pkg{n}[extra]==1.{n}\n" for n in range(2, 13)) + """\
Building wheels for collected packages: marathonbench
  Building editable for marathonbench (pyproject.toml): started
Installing collected packages: a, b, c, d
ERROR: pip's dependency resolver does not currently take into account all the packages
Successfully installed a-1 b-2 c-3 d-4
"""

APT_OUTPUT = """\
Reading package lists...
0 upgraded, 12 newly installed, 0 to remove and 0 not upgraded.
""" + "".join(f"Get:{n} http://deb.debian.org/debian bookworm/main amd64 lib{n}\n" for n in range(1, 13)) + "".join(
    f"Setting up lib{n} (1.{n}) ...\n" for n in range(1, 13)
)


def sourced(script: str, command: str, stdin: str = "", cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail; source {REPO / 'scripts' / script}; {command}"],
        input=stdin, capture_output=True, text=True, cwd=cwd, timeout=300,
    )  # fmt: skip


def test_pips_output_becomes_a_count_of_packages_then_the_install_and_its_errors() -> None:
    shown = sourced("venv.sh", "pip_progress 0", PIP_OUTPUT).stderr.splitlines()
    assert shown == [
        "  fetching packages: 1 (aiohttp)",
        "  fetching packages: 10 (pkg10)",
        "  fetched 12 packages; building marathonbench (a few seconds)",
        "  installing 4 packages into .venv",
        "ERROR: pip's dependency resolver does not currently take into account all the packages",
        "  installed",
    ]


def test_on_a_terminal_the_count_is_redrawn_in_place() -> None:
    command = ["bash", "-c", f"source {REPO / 'scripts' / 'venv.sh'}; pip_progress 1"]
    shown = subprocess.run(command, input=PIP_OUTPUT.encode(), capture_output=True, timeout=60).stderr
    assert shown.count(b"\r\x1b[K  fetching packages: ") == 12  # every package, on one line
    assert b"(pkg12)\n  fetched 12 packages; building" in shown  # the build starts a line of its own


def test_a_failing_install_shows_the_end_of_pips_output_and_keeps_all_of_it(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / ".venv")], check=True, timeout=120)
    result = sourced("venv.sh", f"pip_install {tmp_path} {tmp_path / 'no-such-project'}", cwd=tmp_path)
    assert result.returncode == 1
    err = result.stderr
    assert "installing marathonbench and its packages into .venv" in err
    assert "pip failed; the end of its output (all of it: " in err and "no-such-project" in err, err
    kept = Path(err.split("(all of it: ", 1)[1].split(")", 1)[0])
    assert "no-such-project" in kept.read_text()


def test_apts_output_becomes_counts_and_an_error_fails() -> None:
    done = sourced("browser.sh", "apt_progress", APT_OUTPUT)
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        "  12 packages to install",
        "  downloaded 1/12",
        "  downloaded 10/12",
        "  set up 1/12 (lib1)",
        "  set up 10/12 (lib10)",
        "  chromium installed",
    ]
    failed = sourced("browser.sh", "apt_progress", "E: Unable to locate package chromium\n")
    assert failed.returncode == 1 and "E: Unable to locate package chromium" in failed.stderr
