"""What each shipped profile was verified with — the one source `marathon profiles` and
docs/agents.md read (`verified.json5`).

Each entry names the agent, its version and the date, the probe's checklist as `marathon probe`
printed it (check → ✓, ✗, – or ?), the walkthrough's result and how it was run. The opt-in
test `tests/adapters/test_real_agents.py::test_each_profiles_probe_is_what_it_claims` probes
each installed agent and compares: a profile's claims are what its probe says today, never a
sentence that drifted from it (openclaw-telegram said "probe all ✓" while a fresh install's
probe exited 1, and docs/agents.md said its channel "was not run here").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import json5

VERIFIED_FILE = Path(__file__).parent / "verified.json5"
MARKS = ("✓", "✗", "–", "?")


@dataclass(frozen=True)
class Verification:
    profile: str
    agent: str
    version: str
    on: str  # the date it was verified
    probe: dict[str, str]  # the probe's check → its mark, as printed
    run: str  # the walkthrough's result
    how: str

    def probe_text(self) -> str:
        if not self.probe:
            return "not probed"
        passed = sum(mark == "✓" for mark in self.probe.values())
        if passed == len(self.probe):
            return f"probe all ✓ ({passed} checks)"
        others = ", ".join(f"{mark} {name}" for name, mark in self.probe.items() if mark != "✓")
        return f"probe ✓ {passed} of {len(self.probe)} checks, {others}"

    def line(self) -> str:
        return f"{self.agent} {self.version} ({self.on}): {self.probe_text()}; {self.run}; {self.how}"


def verifications() -> dict[str, Verification]:
    """Every profile's entry. Raises ValueError naming the entry when one is malformed."""
    data: dict[str, Any] = json5.loads(VERIFIED_FILE.read_text(encoding="utf-8"))
    out = {}
    for profile, entry in data.items():
        probe = entry.get("probe", {})
        bad = [f"{name}: {mark!r}" for name, mark in probe.items() if mark not in MARKS]
        if bad:
            raise ValueError(f"{VERIFIED_FILE.name}: {profile}: probe marks must be one of {MARKS}: {', '.join(bad)}")
        out[profile] = Verification(
            profile, str(entry["agent"]), str(entry["version"]), str(entry["on"]), dict(probe), str(entry["run"]),
            str(entry["how"]),
        )  # fmt: skip
    return out


def verified_table() -> str:
    """The table docs/agents.md holds (a test keeps the two the same)."""
    rows = ["| profile | agent, version | verified on | probe | walkthrough |", "|---|---|---|---|---|"]
    for name, v in sorted(verifications().items()):
        rows.append(f"| `{name}` | {v.agent} {v.version} | {v.on} | {v.probe_text()} | {v.run} |")
    return "\n".join(rows)
