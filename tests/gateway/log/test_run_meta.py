"""A header's `meta`, typed: defaults decided once, a crafted value never fails a report."""

from __future__ import annotations

from gateway.log.events import Header
from gateway.log.run_meta import RunMeta


def test_meta_reads_typed_with_its_defaults() -> None:
    meta = Header(meta={"experiment": "ab", "task": "t1", "pair": "ab.t1.r2", "repeat": 2, "variant": "B",
                        "position": "2", "exam_forks": ["q1"]}).run_meta  # fmt: skip
    assert (meta.experiment, meta.task, meta.repeat, meta.variant, meta.position) == ("ab", "t1", 2, "B", 2)
    assert (meta.group, meta.split, meta.cluster_id) == ("all", "heldout", "t1")  # the defaults, once
    assert meta.extra == {"exam_forks": ["q1"]}  # a key this version does not know: kept


def test_a_crafted_value_takes_its_default() -> None:
    meta = RunMeta.of({"repeat": "many", "position": True, "split": ["x"], "id": 7})
    assert (meta.repeat, meta.position, meta.split, meta.id) == (1, 0, "heldout", "7")


def test_two_forks_of_one_teacher_differ_in_identity() -> None:
    a = RunMeta.of({"id": "lad", "fork_of": "lad", "exam": "isolated", "rollout": 1, "question": "q1"})
    b = RunMeta.of({"id": "lad", "fork_of": "lad", "exam": "isolated", "rollout": 1, "question": "q2"})
    assert a.identity != b.identity and a.identity == RunMeta.of(dict(id="lad", fork_of="lad", exam="isolated",
                                                                      rollout=1, question="q1")).identity  # fmt: skip
