"""The reference agent's fault switches are settings like any other: a misspelt one or a wrong
type is refused, naming it, before a run starts."""

from __future__ import annotations

import pytest

from adapters.base import AdapterConfigError
from gateway.run.agents import check_agent_settings


@pytest.mark.parametrize(
    ("faults", "said"),
    [
        ({"refuse_write": ["x"]}, "unknown key 'refuse_write'"),
        ({"refuse_writes": "Pixel"}, "`faults.refuse_writes` must be a list of non-empty strings"),
        ({"no_search": "yes"}, "`faults.no_search` must be true or false"),
        (["no_search"], "`faults` must be an object"),
    ],
)
def test_a_wrong_fault_switch_is_refused_before_the_run(faults: object, said: str) -> None:
    with pytest.raises(AdapterConfigError, match=said.replace("(", r"\(")):
        check_agent_settings({"adapter": "reference", "faults": faults})


def test_the_switches_as_documented_are_accepted() -> None:
    faults = {"refuse_writes": ["Pixel"], "lose": ["LH1173"], "no_search": False, "ignore_results": True}
    check_agent_settings({"adapter": "reference", "faults": faults})
