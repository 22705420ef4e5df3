"""MarathonMemBench benchmarks as its article writes them load unchanged: blank lines and
HTML comments before a phase's directive block, CRLF line ends, a BOM, `#` headings in
chapters, no `language` (detected from the text), prose phases named."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway.log.events import Said
from gateway.log.runlog import read_log
from gateway.report.markdown import render_markdown
from gateway.report.summary import summarize
from gateway.run.config import RunSpec
from gateway.run.runner import run_spec
from persona.benchmark.errors import BenchmarkErrors
from persona.benchmark.loader import load_benchmark
from tests.conftest import ARTICLE_RU


def article(tmp_path: Path, change: Callable[[str, str], str] = lambda name, text: text) -> Path:
    """The article's example benchmark without `language`, each file passed through `change`."""
    root = tmp_path / "article"
    shutil.copytree(ARTICLE_RU, root)
    (root / "benchmark.json").write_text(
        '{ "chapters": [ "chapter1.md", "chapter2.md" ], "name": "article" }'
    )
    for path in root.glob("*.md"):
        path.write_bytes(change(path.name, path.read_text(encoding="utf-8")).encode("utf-8"))
    return root


VARIANTS: dict[str, Callable[[str, str], str]] = {
    "as shipped": lambda name, text: text,
    "a blank line before each directive block": lambda name, text: text.replace("\n```js", "\n\n```js"),
    "two blank lines and spaces": lambda name, text: text.replace("\n```js", "\n  \n\n```js"),
    "an HTML comment before the block": lambda name, text: text.replace(
        "\n```js", "\n<!-- автор: фаза 1 -->\n```js"
    ),
    "a multi-line comment": lambda name, text: text.replace(
        "\n```js", "\n<!--\nзаметка\nна две строки\n-->\n```js"
    ),
    "CRLF line ends": lambda name, text: text.replace("\n", "\r\n"),
    "a BOM": lambda name, text: "\ufeff" + text,
    "CRLF, a BOM and blank lines": lambda name, text: (
        "\ufeff" + text.replace("\n```js", "\n\n```js").replace("\n", "\r\n")
    ),
    "#-headings between phases": lambda name, text: (
        text.replace("\n## ", "\n# Часть\n\n## ") if name.startswith("chapter") else text
    ),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_articles_benchmark_loads_however_it_is_written(tmp_path: Path, variant: str) -> None:
    bench = load_benchmark(article(tmp_path, VARIANTS[variant]))
    assert [p.title for p in bench.phases] == ["Знакомство", "Бег", "Новая сессия"]
    assert bench.phases[0].require_all_facts == ("family",)
    assert bench.phases[2].actions == ("new_session",)
    q = bench.questions[0]
    assert (q.id, q.text, q.expected) == ("57.1", "Сколько всего километров я пробежала с 1 июня?", "279 км.")
    assert bench.language == "ru" and bench.language_source.startswith("detected from the text")
    assert [(p.title, p.prose_only) for p in bench.phases] == [
        ("Знакомство", False),
        ("Бег", True),
        ("Новая сессия", False),
    ]


def test_real_content_before_the_directive_block_is_still_an_error(tmp_path: Path) -> None:
    root = article(tmp_path, lambda name, text: text.replace("## Знакомство\n", "## Знакомство\nПривет!\n\n"))
    with pytest.raises(BenchmarkErrors, match=r"chapter1\.md:6: directive block must open the phase"):
        load_benchmark(root)


def test_chapters_and_facts_in_different_languages_are_warned_about(tmp_path: Path) -> None:
    root = article(tmp_path)
    for name in ("profile.md", "family.md"):
        (root / name).write_text(
            "# Me\n\n## 1. About\n1.1 My name is Sergei, I am a backend developer in Batumi\n"
        )
    warnings = load_benchmark(root).warnings
    assert any("chapters and the facts files read as different languages" in w for w in warnings), warnings


async def test_a_scripted_run_of_it_speaks_russian_and_names_the_prose_it_skipped(tmp_path: Path) -> None:
    root = article(tmp_path, VARIANTS["CRLF, a BOM and blank lines"])
    outcome = await run_spec(RunSpec("article", root, {"adapter": "reference"}), tmp_path / "rec")
    log = read_log(tmp_path / "rec" / "article" / "events.msgpack")
    said = [e.text for e in log.events if isinstance(e, Said)]
    assert said and all("Some things" not in t and "Please search" not in t for t in said)
    assert any(t.startswith("Немного о теме «Семья»") for t in said)
    report = render_markdown(summarize(log, load_benchmark(root)))
    assert "not played by the scripted persona: chapter1.md:11 (Бег)" in report
    assert "coverage INCOMPLETE" in report and outcome.reason == "completed"
