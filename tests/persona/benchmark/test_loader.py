from __future__ import annotations

from pathlib import Path

import pytest

from persona.benchmark.directives import BenchAction, SetVar
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.loader import load_benchmark
from persona.benchmark.model import FactUpdate, Question, Utterance
from tests.conftest import ARTICLE_RU, DEMO, BenchFactory


def test_loads_the_tiny_world(make_benchmark: BenchFactory) -> None:
    bench = load_benchmark(make_benchmark())
    assert [p.title for p in bench.phases] == ["Intro", "Pets", "Exam"]
    assert bench.phases[0].require_all_facts == ("profile",)
    assert bench.phases[1].require_all_facts == ("pets",)
    assert bench.phases[2].actions == ("new_session",)
    assert bench.facts["pets"].facts["1.3"].text == "Miso eats tuna"
    assert isinstance(bench.phases[0].items[0], Utterance)
    update = bench.phases[1].items[0]
    assert isinstance(update, FactUpdate) and (update.file, update.fact_id) == ("pets", "1.2")
    q2 = bench.questions[1]
    assert (q2.id, q2.text, q2.expected, q2.tags) == ("q2", "How old is Miso?", "5", ("update",))
    assert bench.questions[2].abstain


def test_loads_a_benchmark_written_as_the_article_shows_it() -> None:
    bench = load_benchmark(ARTICLE_RU)
    assert bench.language == "ru"
    first = bench.phases[0]
    assert first.directives == (SetVar("require_all_facts", "family", first.directives[0].line),)
    assert bench.phases[2].directives == (BenchAction("new_session", bench.phases[2].directives[0].line),)
    q = bench.questions[0]
    assert isinstance(q, Question)
    assert (q.id, q.text, q.expected) == ("57.1", "Сколько всего километров я пробежала с 1 июня?", "279 км.")
    assert bench.facts["family"].facts["1.2"].text == "день рождения Лены — 14 марта"
    assert "Бег" in [p.title for p in bench.phases]


def test_demo_benchmark_has_the_promised_shape() -> None:
    bench = load_benchmark(DEMO)
    assert len(bench.chapters) == 3
    assert sum(len(f.facts) for f in bench.facts.values()) == 40
    assert len(bench.questions) == 15
    assert any("update" in q.tags for q in bench.questions)
    exam = bench.phases[-1]
    assert exam.actions == ("new_session",)


def test_hash_changes_with_content(make_benchmark: BenchFactory) -> None:
    first = load_benchmark(make_benchmark()).content_hash
    second = load_benchmark(make_benchmark(pets__md=TINY_PETS_CHANGED)).content_hash
    assert first != second


TINY_PETS_CHANGED = (
    "# Pets\n\n## 1. Cat\n1.1 My cat is called Mochi\n1.2 Miso is 4 years old\n1.3 Miso eats tuna\n"
)


def _only_error(root: Path) -> tuple[str, int, str]:
    with pytest.raises(BenchmarkErrors) as info:
        load_benchmark(root)
    errors = info.value.errors
    assert len(errors) >= 1, errors
    e = errors[0]
    return e.location.path.name, e.location.line, e.message


BAD_INPUTS = {
    "invalid JSON5": (
        {"benchmark__json": '{\n  name: "x",\n  chapters: ["ch1.md",\n}\n'},
        ("benchmark.json", 4, "invalid JSON5"),
    ),
    "missing chapter": (
        {"benchmark__json": '{\n  chapters: ["ch1.md", "nope.md"],\n}\n'},
        ("benchmark.json", 2, "chapter file 'nope.md' not found"),
    ),
    "missing facts file": (
        {"benchmark__json": '{\n  chapters: ["ch1.md", "ch2.md"],\n  facts: ["pets.md", "gone.md"],\n}\n'},
        ("benchmark.json", 3, "facts file 'gone.md' not found"),
    ),
    "path escaping the folder": (
        {"benchmark__json": '{\n  chapters: ["ch1.md", "../../etc/passwd"],\n}\n'},
        ("benchmark.json", 2, "leads outside the benchmark folder"),
    ),
    "absolute path": (
        {"benchmark__json": '{\n  chapters: ["/etc/hostname"],\n}\n'},
        ("benchmark.json", 2, "leads outside the benchmark folder"),
    ),
    "duplicate fact id": (
        {"pets__md": "# Pets\n\n## 1. Cat\n1.1 Miso\n1.2 four\n1.1 again\n"},
        ("pets.md", 6, "duplicate fact id 1.1 (first at line 4)"),
    ),
    "fact outside a section": (
        {"pets__md": "# Pets\n1.1 Miso is a cat\n\n## 1. Cat\n1.2 four\n"},
        ("pets.md", 2, "fact 1.1 is outside a section"),
    ),
    "question without an answer marker": (
        {"ch2__md": "## Exam\n\n❓ q1 What is my cat called? Miso\n"},
        ("ch2.md", 3, "question q1 has no answer marker"),
    ),
    "reused question id": (
        {"ch2__md": "## Exam\n❓ q1 Cat? Correct answer: Miso\n❓ q1 Age? Correct answer: 5\n"},
        ("ch2.md", 3, "question id q1 is already used at ch2.md:2"),
    ),
    "require('fs')": (
        {"ch2__md": "## Exam\n```js\nconst fs = require('fs');\n```\n"},
        ("ch2.md", 3, "unsupported directive"),
    ),
    "process.exit()": (
        {"ch2__md": '## Exam\n```js\nvars.require_all_facts = "pets";\nprocess.exit();\n```\n'},
        ("ch2.md", 4, "unsupported directive"),
    ),
    "a call hidden in a literal position": (
        {"ch2__md": "## Exam\n```javascript\nvars.x = require('child_process');\n```\n"},
        ("ch2.md", 3, "expected a literal"),
    ),
    "unknown bench action": (
        {"ch2__md": "## Exam\n```js\nawait bench.deleteEverything();\n```\n"},
        ("ch2.md", 3, "unknown bench action"),
    ),
    "require_all_facts naming an unknown file": (
        {"ch2__md": '## Exam\n```js\nvars.require_all_facts = "hobbies";\n```\n'},
        ("ch2.md", 3, "require_all_facts names unknown facts file 'hobbies'"),
    ),
    "update of an unknown facts file": (
        {"ch2__md": "## Exam\n✎ hobbies 1.1 chess\n"},
        ("ch2.md", 2, "unknown facts file 'hobbies'"),
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS), ids=list(BAD_INPUTS))
def test_bad_input_is_rejected_with_file_and_line(make_benchmark: BenchFactory, case: str) -> None:
    files, (name, line, message) = BAD_INPUTS[case]
    got_name, got_line, got_message = _only_error(make_benchmark(**files))
    assert (got_name, got_line) == (name, line)
    assert message in got_message


def test_all_errors_are_reported_together(make_benchmark: BenchFactory) -> None:
    root = make_benchmark(
        pets__md="# Pets\n1.1 outside\n",
        ch2__md="## Exam\n❓ q1 no marker here\n",
    )
    with pytest.raises(BenchmarkErrors) as info:
        load_benchmark(root)
    assert {e.location.path.name for e in info.value.errors} == {"pets.md", "ch2.md"}


def test_symlink_out_of_the_folder_is_refused(make_benchmark: BenchFactory, tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("## A\n> hi\n")
    root = make_benchmark(benchmark__json='{chapters: ["ch1.md", "link.md"]}')
    (root / "link.md").symlink_to(outside)
    name, _line, message = _only_error(root)
    assert name == "benchmark.json" and "outside the benchmark folder" in message


def test_deleted_fact_frees_its_id(make_benchmark: BenchFactory) -> None:
    bench = load_benchmark(make_benchmark(pets__md="# Pets\n\n## 1. Cat\n1.1 Miso\n1.2 —\n"))
    assert list(bench.facts["pets"].facts) == ["1.1"]


def test_custom_answer_marker(make_benchmark: BenchFactory) -> None:
    root = make_benchmark(
        benchmark__json='{chapters: ["ch2.md"], answer_markers: ["Réponse"]}',
        ch2__md="## Examen\n❓ q1 Le chat? Réponse: Miso\n",
    )
    assert load_benchmark(root).questions[0].expected == "Miso"


def test_a_misspelt_key_in_benchmark_json_is_refused_and_another_tools_key_is_said(
    make_benchmark: BenchFactory,
) -> None:
    """Issue 47 item 1: `langauge` was ignored and the language detected instead. A key near
    one we read is refused at its line; a key of another tool's (`description`) is a warning."""
    typo = make_benchmark(**{"benchmark.json": '{\n  name: "t",\n  langauge: "en",\n  chapters: ["ch1.md", "ch2.md"],\n}\n'})
    with pytest.raises(BenchmarkErrors) as caught:
        load_benchmark(typo)
    assert "benchmark.json:3: unknown key 'langauge' (did you mean 'language'?)" in str(caught.value)
    text = '{\n  name: "t", language: "en",\n  description: "mine",\n  chapters: ["ch1.md", "ch2.md"],\n}\n'
    other = make_benchmark(**{"benchmark.json": text})
    assert any("key 'description' is not read" in w for w in load_benchmark(other).warnings)
