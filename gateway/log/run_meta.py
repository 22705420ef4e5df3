"""Where a run sits in a matrix, typed: the header's `meta` as the reports read it.

On disk `meta` stays a map (`Header.meta`, written by the config and the fork planner), so a
log from any version reads; `RunMeta.of` is the one place a key's default is decided — a
report reads `run.run_meta.split`, never `meta.get("split", "heldout")` of its own. Keys this
version does not know are kept in `extra`.

What a caller may rely on: every field has its default when the key is absent or of another
type (a crafted log never makes a report fail here); `identity` is what tells two runs of one
matrix apart — its config run id, repeat, rung, experiment pair and variant, exam fork, rollout
and question.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class RunMeta:
    id: str = ""  # the config's run id (a matrix entry: its repeats and rungs share it)
    repeat: int = 1
    rung: str = ""  # a scale ladder's rung
    # an experiment's run (protocol 001)
    experiment: str = ""
    task: str = ""
    cluster: str = ""  # "" → its task's: what the bootstrap resamples
    group: str = "all"
    split: str = "heldout"
    pair: str = ""
    variant: str = ""  # A | B
    variant_name: str = ""
    position: int = 0  # 1 or 2: which side of its pair ran first
    step: int = 0  # `memory: "accumulating"`: the task's place in its sequence
    memory: str = ""
    prepares: str = ""  # the experiment whose memory this run prepares
    # a fork of an exam (gateway/run/fork_plan.py)
    fork_of: str = ""
    exam: str = ""  # sequential | isolated | direct
    rollout: int = 0
    question: str = ""
    teaches: str = ""  # "ladder": the teaching a scale ladder's rungs fork from
    replay_of: str = ""  # `marathon replay`: the recorded run it replays
    extra: dict[str, Any] = field(default_factory=dict)  # keys this version does not know

    @classmethod
    def of(cls, meta: Mapping[str, Any]) -> RunMeta:
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in meta.items():
            default = _DEFAULTS.get(key)
            if key not in _DEFAULTS:
                extra[key] = value
            elif isinstance(default, int) and isinstance(value, int | str) and not isinstance(value, bool):
                try:
                    values[key] = int(value)
                except ValueError:
                    continue  # not a number: its default
            elif isinstance(default, str) and isinstance(value, str | int) and not isinstance(value, bool):
                values[key] = str(value)
        return cls(**values, extra=extra)

    @property
    def cluster_id(self) -> str:
        return self.cluster or self.task

    @property
    def identity(self) -> tuple[str | int, ...]:
        """What tells two runs of one matrix apart (never merged by a report)."""
        return (self.id, self.repeat, self.rung, self.pair, self.variant, self.fork_of, self.exam, self.rollout,
                self.question)  # fmt: skip


_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(RunMeta) if f.name != "extra"}
