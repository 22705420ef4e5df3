from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.log.events import (
    Evaluation,
    Said,
)
from gateway.log.runlog import EVENTS_FILE, read_log
from gateway.log.vocabulary import TerminationReason
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.loader import load_benchmark
from persona.benchmark.longmemeval import ImportError_, import_longmemeval
from tests.marathon_cli import marathon

MINI = Path(__file__).parent / "fixtures" / "longmemeval-mini.json"


def test_each_instance_becomes_a_benchmark_of_sessions_and_a_question(tmp_path: Path) -> None:
    done = import_longmemeval(MINI, tmp_path)
    assert [(d.question_id, d.sessions, d.abstain) for d in done] == [
        ("mini_001", 2, False),
        ("mini_002_abs", 1, True),
    ]
    bench = load_benchmark(done[0].folder)
    assert [p.actions for p in bench.phases] == [("new_session",)] * 3
    assert [i.text for i in bench.phases[1].items] == [
        "My dog is a border collie and she needs a lot of exercise.",
        "She loves frisbee in the park.",
    ]
    (question,) = bench.questions
    assert (question.text, question.expected, question.tags) == (
        "What breed is my dog?",
        "a border collie",
        ("single-session-user",),
    )
    assert load_benchmark(done[1].folder).questions[0].abstain


def test_the_import_command_output_passes_check(tmp_path: Path) -> None:
    result = marathon("import", "longmemeval", str(MINI), str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 0 and "2 benchmarks written" in result.stdout
    for folder in (tmp_path / "out").iterdir():
        assert marathon("check", str(folder), cwd=tmp_path).returncode == 0


async def test_an_imported_instance_runs_against_the_reference_agent(tmp_path: Path) -> None:
    (folder, _) = [d.folder for d in import_longmemeval(MINI, tmp_path / "bench")]
    outcome = await run_spec(RunSpec("lme", folder, {"adapter": "reference"}), tmp_path / "rec")
    assert outcome.reason == TerminationReason.COMPLETED
    log = read_log(tmp_path / "rec" / "lme" / EVENTS_FILE)
    assert next(e.text for e in log.events if isinstance(e, Said)).startswith("I'm planning meals")
    (evaluation,) = [e for e in log.events if isinstance(e, Evaluation)]
    assert evaluation.score == 10  # the reference agent found "border collie" in its memory


def test_a_file_of_another_shape_is_refused_with_where(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"question_id": "x", "question": "q"}]))
    with pytest.raises(ImportError_, match="instance #0: missing 'answer'"):
        import_longmemeval(bad, tmp_path / "out")


@pytest.mark.parametrize(
    ("ids", "problem"),
    [
        (["..", "ok"], None),  # `..` stays inside OUT_DIR
        (["a/b", "a b"], "would both be written to"),
        (["x", "x"], "would both be written to"),
    ],
)
def test_question_ids_become_safe_unique_folders_inside_out_dir(
    tmp_path: Path, ids: list[str], problem: str | None
) -> None:
    one = json.loads(MINI.read_text())[0]
    source = tmp_path / "in.json"
    source.write_text(json.dumps([{**one, "question_id": qid} for qid in ids]))
    out = tmp_path / "deep" / "out"
    (tmp_path / "deep").mkdir()
    if problem is None:
        done = import_longmemeval(source, out)
        assert all(d.folder.parent == out for d in done) and len({d.folder for d in done}) == len(ids)
    else:
        with pytest.raises(ImportError_, match=problem):
            import_longmemeval(source, out)
        assert not out.exists()  # nothing written when a name collides
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == (["out"] if problem is None else [])
