"""Property tests: whatever a benchmark's files hold, loading ends in a benchmark or in clean
errors that each name a file (and a line when there is one) — never another exception."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.loader import load_benchmark
from persona.grading.exact import ExactGrader
from tests.conftest import TINY

PIECES = [
    "## 1. Cat\n",
    "1.1 Miso\n",
    "1.1 —\n",
    "❓ q1 Cat? Correct answer: Miso\n",
    "❓ q1 no marker\n",
    "```js\n",
    "```\n",
    'vars.require_all_facts = "pets";\n',
    "require('fs');\n",
    "await bench.newSession();\n",
    "> hello\n",
    "✎ pets 1.1 Mochi\n",
    "✎ nope 9.9 x\n",
    "## Phase\n",
    "# Title\n",
    "\n",
    "2.7 orphan\n",
    "{",
    "}",
]
text = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(PIECES), max_size=25).map("".join),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chapter=text, facts=text, config=st.one_of(st.just(TINY["benchmark.json"]), st.text(max_size=120)))
def test_any_benchmark_loads_or_fails_cleanly(
    tmp_path_factory: object, chapter: str, facts: str, config: str
) -> None:
    root = Path(tmp_path_factory.mktemp("b"))  # type: ignore[attr-defined]
    for name, body in {**TINY, "benchmark.json": config, "ch2.md": chapter, "pets.md": facts}.items():
        (root / name).write_text(body, encoding="utf-8")
    try:
        load_benchmark(root)
    except BenchmarkErrors as exc:
        assert exc.errors
        for error in exc.errors:
            assert (
                error.location.path == root or error.location.path.parent == root
            )  # a file of the benchmark
            assert str(error.location.path) in str(error) and error.message


@settings(max_examples=400, deadline=None)
@given(
    expected=st.text(max_size=60),
    answer=st.text(max_size=200),
    tags=st.lists(st.sampled_from(["abstain", "update", "x"]), max_size=2),
)
def test_the_exact_grader_never_raises_and_stays_in_range(
    expected: str, answer: str, tags: list[str]
) -> None:
    from persona.benchmark.model import Question

    grade = ExactGrader().grade(Question("q", "?", expected, tuple(tags), "c.md", 1), expected, answer)
    assert 0 <= grade.score <= 10 and grade.reason
