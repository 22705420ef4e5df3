"""Shared test world: a tiny benchmark written into a temp folder, file by file."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "benchmarks" / "demo-en"
ARTICLE_RU = REPO / "tests" / "persona" / "benchmark" / "fixtures" / "article-ru"

TINY = {
    "benchmark.json": '{\n  name: "tiny",\n  language: "en",\n  chapters: ["ch1.md", "ch2.md"],\n}\n',
    "profile.md": "# Me\n\n## 1. Basics\n1.1 My name is Ada and I am 36\n1.2 I live in Porto\n",
    "pets.md": "# Pets\n\n## 1. Cat\n1.1 My cat is called Miso\n1.2 Miso is 4 years old\n1.3 Miso eats tuna\n",
    "ch1.md": (
        '# One\n\n## Intro\n```js\nvars.require_all_facts = "profile";\n```\n> Hello!\n\n'
        '## Pets\n```js\nvars.require_all_facts = ["pets"]; // all of them\n```\n'
        "✎ pets 1.2 Miso turned 5 years old\n"
    ),
    "ch2.md": (
        "# Two\n\n## Exam\n```js\nawait bench.newSession();\n```\n"
        "❓ q1 What is my cat called? Correct answer: Miso\n"
        "❓ q2 [update] How old is Miso? Correct answer: 5\n"
        "❓ q3 [abstain] What is my dog called? Correct answer: [abstain]\n"
    ),
}

type BenchFactory = Callable[..., Path]


def pytest_configure(config: pytest.Config) -> None:
    """A pytest-xdist worker runs with SIGINT ignored, and a process it starts inherits that:
    the tests' Ctrl-C would never reach `marathon`. Python's own handler again, as in a shell."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own user cache (the viewer's list index lives there), never the machine's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))


@pytest.fixture
def pool_beside(tmp_path: Path) -> str:
    """A copy of the shipped English distractor pool beside `make_benchmark`'s folder, and
    the `scale.distractors` value that names it (a benchmark may only name a pool there)."""
    target = tmp_path / "distractors"
    if not target.exists():
        shutil.copytree(REPO / "benchmarks" / "distractors", target)
        # the shipped pool is screened against the shipped benchmarks, which are not beside the copy
        (target / "pool.json5").write_text('{language: "en", screen_against: []}')
    return '"../distractors"'


@pytest.fixture
def make_benchmark(tmp_path: Path) -> BenchFactory:
    """Write TINY (with overrides; a value of None removes the file) and return its folder."""

    def make(**files: str | None) -> Path:
        root = tmp_path / "bench"
        root.mkdir(exist_ok=True)
        for name, text in {**TINY, **{k.replace("__", "."): v for k, v in files.items()}}.items():
            path = root / name
            if text is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(text, encoding="utf-8")
        return root

    return make
