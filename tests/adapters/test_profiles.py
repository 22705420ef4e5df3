"""Agent profiles as `marathon profiles` describes them."""

from __future__ import annotations


def test_each_profile_says_what_it_needs_whether_it_was_verified_and_what_it_can_do() -> None:
    from adapters.profiles import describe_profile

    hermes = "\n".join(describe_profile("hermes-telegram"))
    assert "needs: binary hermes (PATH, or MARATHON_HERMES_BIN)" in hermes
    assert "verified: hermes-agent 0.19.0" in hermes and "compact by /compress" in hermes
    letta = "\n".join(describe_profile("letta"))
    assert "verified: not against the real agent" in letta and "env LETTA_AGENT_ID" in letta
