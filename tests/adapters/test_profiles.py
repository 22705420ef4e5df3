"""Agent profiles as `marathon profiles` describes them."""

from __future__ import annotations


def test_each_profile_says_what_it_needs_whether_it_was_verified_and_what_it_can_do() -> None:
    from adapters.profiles import describe_profile

    hermes = "\n".join(describe_profile("hermes-telegram"))
    assert "needs: binary hermes (PATH, or MARATHON_HERMES_BIN)" in hermes
    assert "verified: hermes-agent 0.19.0" in hermes and "compact by /compress" in hermes
    letta = "\n".join(describe_profile("letta"))
    assert "verified: letta 0.11.7" in letta and "new session = reset-messages" in letta
    assert "needs: binary letta (PATH, or MARATHON_LETTA_BIN)" in letta
    openclaw = "\n".join(describe_profile("openclaw-telegram"))
    assert "verified: openclaw 2026.9.6" in openclaw and "Node ≥ 24 (PATH, or MARATHON_NODE_DIR)" in openclaw
    generic = "\n".join(describe_profile("openai-generic"))
    assert "verified: not against the real agent" in generic
    from adapters.profiles import profile_names

    for name in profile_names():  # what every shipped profile can do is known
        assert "new session: ?" not in "\n".join(describe_profile(name)), name


def test_set_overrides_reach_nested_settings_and_bad_ones_say_why() -> None:
    import pytest

    from adapters.profiles import resolve, with_overrides

    settings = with_overrides(
        {"profile": "openclaw-ws"},
        ["url=ws://127.0.0.1:28789", "llm.port=28790", 'compact_commands=["/compact"]'],
    )
    resolved = resolve(settings)
    assert resolved["url"] == "ws://127.0.0.1:28789" and resolved["llm"]["port"] == 28790
    assert resolved["llm"]["upstream"] == "https://api.anthropic.com"  # the rest of the profile's `llm` stays
    assert resolved["compact_commands"] == ["/compact"]
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        with_overrides({}, ["llm.port"])


def test_what_was_verified_has_one_source_and_the_docs_table_is_it() -> None:
    """Issue 46 item 4: openclaw-telegram's profile said "probe all ✓" while docs/agents.md said
    its channel "was not run here". `verified.json5` is the one source: the profiles carry no
    claim of their own, and the docs' table is the one rendered from it."""
    import json5

    from adapters.profiles import HERE, profile_names
    from adapters.profiles.verification import verifications, verified_table
    from tests.conftest import REPO

    claims = verifications()
    assert set(claims) == set(profile_names()) - {"openai-generic"}  # every profile a real agent stands behind
    for name in profile_names():
        assert "verified" not in json5.loads((HERE / f"{name}.jsonc").read_text()), name
    docs = (REPO / "docs" / "agents.md").read_text()
    between = docs.split("<!-- verified:start -->\n", 1)[1].split("\n<!-- verified:end -->", 1)[0]
    assert between == verified_table()
    assert all(c.probe for c in claims.values()), "a profile claims no probe"
