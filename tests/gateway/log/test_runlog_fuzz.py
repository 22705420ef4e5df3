"""Property tests for the run-log reader: random truncation and bit flips never crash it, and
every complete record before the damage comes back."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.log.events import Header, Said
from gateway.log.runlog import RunLogFormatError, RunLogWriter, read_log


def write(path: Path, n: int) -> list[int]:
    ends = []
    with RunLogWriter.create(path, Header(run_id="r")) as writer:
        ends.append(path.stat().st_size)
        for i in range(n):
            writer.append(Said(text=f"message {i} " + "x" * (i % 7)))
            ends.append(path.stat().st_size)
    return ends


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cut=st.floats(min_value=0, max_value=1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 7)), max_size=4),
)
def test_damage_never_crashes_and_keeps_every_record_before_it(
    tmp_path_factory: object, cut: float, flips: list[tuple[float, int]]
) -> None:
    path = Path(tmp_path_factory.mktemp("log")) / "events.msgpack"  # type: ignore[attr-defined]
    ends = write(path, 30)
    data = bytearray(path.read_bytes())
    data = data[: int(len(data) * cut)]
    first_damage = len(data)
    for where, bit in flips:
        if data:
            at = int(where * (len(data) - 1))
            data[at] ^= 1 << bit
            first_damage = min(first_damage, at)
    path.write_bytes(bytes(data))
    try:
        log = read_log(path)
    except RunLogFormatError:
        assert first_damage < ends[0]  # only a damaged header makes it "not a run log"
        return
    intact = sum(1 for end in ends[1:] if end <= first_damage)
    assert len(log.events) >= intact
    assert all(isinstance(e, Said) for e in log.events[:intact])
