"""Benchmark inputs that used to crash or hang `check`, and files read from outside the folder:
each is an error with its file and line, found before any run starts."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from persona.benchmark.cache import MAX_BENCHMARK_BYTES, MAX_FILE_BYTES
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.loader import load_benchmark
from tests.conftest import TINY, BenchFactory


def errors_of(root: Path) -> list[str]:
    with pytest.raises(BenchmarkErrors) as info:
        load_benchmark(root)
    return [f"{e.location.path.name}:{e.location.line}: {e.message}" for e in info.value.errors]


def directive(value: str) -> str:
    return f"# One\n\n## Intro\n```js\nvars.x = {value};\n```\n> Hello!\n"


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("1" * 5000, "a number of 5000 characters"),
        ("[" * 3000 + "]" * 3000, "nested more than 16 lists deep"),
    ],
)
def test_a_huge_or_deep_directive_value_is_an_error_at_its_line(
    make_benchmark: BenchFactory, value: str, says: str
) -> None:
    problems = errors_of(make_benchmark(ch1__md=directive(value)))
    assert any(p.startswith("ch1.md:5:") and says in p for p in problems), problems


def test_a_deeply_nested_benchmark_json_is_refused_at_once(make_benchmark: BenchFactory) -> None:
    started = time.monotonic()
    problems = errors_of(make_benchmark(benchmark__json="{x: " + "[" * 50_000 + "]" * 50_000 + "}"))
    assert time.monotonic() - started < 5
    assert problems == ["benchmark.json:1: objects and lists nested 50001 deep; at most 32"]


def test_a_nul_in_a_chapter_name_is_an_error(make_benchmark: BenchFactory) -> None:
    problems = errors_of(make_benchmark(benchmark__json='{chapters: ["ch1\\u0000.md"]}'))
    assert any("holds a NUL character" in p for p in problems), problems


@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_instructions_that_never_end_hang_or_flood_are_refused(
    make_benchmark: BenchFactory, kind: str
) -> None:
    root = make_benchmark()
    target = root / "instructions.md"
    if kind == "fifo":
        os.mkfifo(target)  # reading it would hang
    elif kind == "device":
        os.symlink("/dev/zero", target)  # never ends (and leads outside)
    else:
        with open(target, "wb") as f:
            f.truncate(MAX_FILE_BYTES + 1)
    problems = errors_of(root)
    expected = {
        "fifo": "not a regular file",
        "device": "leads outside the benchmark folder",
        "huge": f"a benchmark file may hold at most {MAX_FILE_BYTES:,}",
    }[kind]
    assert any(p.startswith("instructions.md:0:") and expected in p for p in problems), problems


@pytest.mark.parametrize("name", ["instructions.md", "benchmark.json"])
def test_a_file_linked_from_outside_the_folder_is_refused(
    make_benchmark: BenchFactory, tmp_path: Path, name: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(TINY["benchmark.json"] if name == "benchmark.json" else "the user's private notes")
    root = make_benchmark()
    (root / name).unlink(missing_ok=True)
    (root / name).symlink_to(secret)
    problems = errors_of(root)
    assert any(p.startswith(f"{name}:0:") and "leads outside the benchmark folder" in p for p in problems)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=400), st.sampled_from(["[", "{"]))
def test_any_nesting_of_benchmark_json_ends_in_a_load_or_a_clear_error(depth: int, bracket: str) -> None:
    import tempfile

    closing = "]" if bracket == "[" else "}"
    inner = ("[" * depth + "]" * depth) if bracket == "[" else ('{a: ' * depth + "1" + closing * depth)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, text in TINY.items():
            (root / name).write_text(text)
        (root / "benchmark.json").write_text(TINY["benchmark.json"].replace("name:", f"x: {inner},\n  name:"))
        try:
            load_benchmark(root)
        except BenchmarkErrors as exc:
            assert depth > 30 and "nested" in str(exc.errors[0].message)


def test_a_benchmark_past_the_total_cap_is_refused_before_anything_is_parsed(
    make_benchmark: BenchFactory,
) -> None:
    """Five chapters of 7 MiB: each under the per-file limit, 35 MiB in all. Refused at once
    with the cap named (40 chapters of 7.9 MB took 82 s and 5 GB to check before)."""
    names = [f"big{n}.md" for n in range(5)]
    root = make_benchmark(benchmark__json=f'{{name: "big", language: "en", chapters: {names!r}}}')
    for name in names:
        with open(root / name, "wb") as f:
            f.truncate(7 << 20)  # NUL bytes: never valid chapters, and never read
    started = time.monotonic()
    problems = errors_of(root)
    assert time.monotonic() - started < 5
    assert len(problems) == 1, problems
    said = re.fullmatch(
        r"benchmark\.json:1: the benchmark's files hold ([\d,]+) bytes; a benchmark may hold at most "
        r"([\d,]+) in all \(its chapters and the \.md files beside them\)",
        problems[0],
    )
    assert said, problems[0]
    assert int(said[1].replace(",", "")) > 35 << 20 and said[2] == f"{MAX_BENCHMARK_BYTES:,}"


def test_a_benchmark_is_loaded_once_while_its_files_stay_and_again_after_any_edit(
    make_benchmark: BenchFactory,
) -> None:
    root = make_benchmark()
    first = load_benchmark(root)
    assert load_benchmark(root) is first  # the run's preflight, the run and the report ask for it
    # an edit of the same size, at once (a file's time may not move): the new text is seen
    (root / "ch2.md").write_text(TINY["ch2.md"].replace("Correct answer: 5", "Correct answer: 6"))
    edited = load_benchmark(root)
    assert [q.expected for q in edited.questions][1] == "6" and edited.content_hash != first.content_hash
    # a facts file the loader finds by looking, added beside: seen too
    (root / "home.md").write_text("# Home\n\n## 1. Flat\n1.1 The flat has 72 square meters\n")
    assert "home" in load_benchmark(root).facts
    # spelt another way (relative, through a link), the same benchmark under that spelling
    (root.parent / "link").symlink_to(root)
    linked = load_benchmark(root.parent / "link")
    assert linked.root == root.parent / "link" and linked.content_hash == load_benchmark(root).content_hash
