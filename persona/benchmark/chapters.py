"""Reading a benchmark's chapters: each `## ` section a phase (design §3).

A phase may open with a fenced block of directives in the MarathonMemBench JavaScript subset
(parsed, never executed) — blank lines and HTML comments may come before it, as the article's
benchmarks are written; then `> ` utterances, `✎` fact updates and `❓` questions, in order.
What a caller may rely on: every problem is reported through the loader's `error` with file
and line, and parsing goes on past it, so one load reports them all.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from persona.benchmark.directives import SetVar, parse_directives
from persona.benchmark.errors import BenchmarkError, SourceLocation
from persona.benchmark.model import FactsFile, FactUpdate, Phase, Question, Utterance

_TAG = re.compile(r"\[([A-Za-z_][\w-]*)\]")
_QUESTION = re.compile(r"^❓\s*(\S+)\s+(.*)$")
_UPDATE = re.compile(r"^✎\s*(\S+)\s+(\d+\.\d+)\s+(.+)$")
_FENCE = re.compile(r"^```\s*([A-Za-z]*)\s*$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _without_comments(text: str) -> str:
    """The text with its HTML comments (notes for authors) blanked, line numbers kept."""
    return _HTML_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def facts_name(ref: str) -> str:
    """`family`, `family.md` and `facts/family.md` all name the facts file `family`."""
    return Path(ref).stem if ref.endswith(".md") else ref


class ChapterParser:
    """Parses chapters into phases; problems go to `errors` and `warnings` (the loader's)."""

    def __init__(self, root: Path, errors: list[BenchmarkError], warnings: list[str]) -> None:
        self.root = root
        self.errors = errors
        self.warnings = warnings

    def error(self, path: Path | str, line: int, message: str) -> None:
        self.errors.append(BenchmarkError(SourceLocation(Path(path), line), message))

    def parse(
        self,
        chapter: str,
        text: str,
        first_index: int,
        markers: tuple[str, ...],
        facts: dict[str, FactsFile],
    ) -> list[Phase]:
        path = self.root / chapter
        marker_re = re.compile(
            r"\s*(?:" + "|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True)) + r")\s*:\s*",
            re.IGNORECASE,
        )
        phases: list[Phase] = []
        current: dict[str, Any] | None = None
        lines = _without_comments(text.removeprefix("\ufeff")).splitlines()
        i = 0

        def close() -> None:
            if current is not None:
                phases.append(
                    Phase(
                        index=first_index + len(phases),
                        chapter=chapter,
                        title=current["title"],
                        line=current["line"],
                        directives=tuple(current["directives"]),
                        items=tuple(current["items"]),
                        description="\n".join(current["description"]).strip(),
                        prose=tuple(current["prose"]),
                    )
                )

        while i < len(lines):
            lineno = i + 1
            stripped = lines[i].strip()
            fence = _FENCE.match(stripped)
            if fence:
                end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
                if end is None:
                    self.error(path, lineno, "code block is never closed; expected a closing ```")
                    break
                lang = fence.group(1).lower()
                if lang in ("js", "javascript"):
                    if current is None:
                        self.error(
                            path,
                            lineno,
                            "directive block before the first `## ` phase; directives belong to a phase",
                        )
                    elif current["items"] or any(line.strip() for line in current["description"]):
                        self.error(
                            path, lineno, "directive block must open the phase (before any other content)"
                        )
                    else:
                        try:
                            current["directives"].extend(
                                parse_directives(lines[i + 1 : end], path, lineno + 1)
                            )
                        except BenchmarkError as exc:
                            self.errors.append(exc)
                elif current is not None:
                    current["description"].extend(lines[i : end + 1])
                    current["prose"].append((lineno, stripped))
                i = end + 1
                continue
            if stripped.startswith("## "):
                close()
                current = {
                    "title": stripped[3:].strip(),
                    "line": lineno,
                    "directives": [],
                    "items": [],
                    "description": [],
                    "prose": [],
                }
            elif stripped.startswith("❓"):
                if current is None:
                    self.error(path, lineno, "question before the first `## ` phase")
                else:
                    q = self._question(stripped, chapter, lineno, marker_re, markers)
                    if q is not None:
                        current["items"].append(q)
                        current["description"].append(stripped)
            elif stripped.startswith("✎"):
                if current is None:
                    self.error(path, lineno, "fact update before the first `## ` phase")
                else:
                    u = self._update(stripped, path, lineno, facts)
                    if u is not None:
                        current["items"].append(u)
                        current["description"].append(stripped)
            elif stripped.startswith(">"):
                said = stripped[1:].strip()
                if current is None:
                    self.error(path, lineno, "utterance `> ` before the first `## ` phase")
                elif said:
                    current["items"].append(Utterance(said, lineno))
                    current["description"].append(stripped)
            elif current is not None and not stripped.startswith("# "):
                current["description"].append(lines[i])
                if stripped and not stripped.startswith("#"):
                    current["prose"].append((lineno, stripped))
            i += 1
        close()

        for phase in phases:
            for d in phase.directives:
                if isinstance(d, SetVar) and d.name == "require_all_facts":
                    values = d.value if isinstance(d.value, list) else [d.value]
                    for v in values:
                        if not isinstance(v, str) or facts_name(v) not in facts:
                            known = ", ".join(sorted(facts)) or "none"
                            self.error(
                                path,
                                d.line,
                                f"require_all_facts names unknown facts file {v!r}; known: {known}",
                            )
                elif isinstance(d, SetVar) and d.name != "revoke_canary":
                    self.warnings.append(f"{path}:{d.line}: vars.{d.name} is not used by marathonbench")
        return phases

    def _question(
        self, line: str, chapter: str, lineno: int, marker_re: re.Pattern[str], markers: tuple[str, ...]
    ) -> Question | None:
        path = self.root / chapter
        m = _QUESTION.match(line)
        if not m:
            self.error(path, lineno, "expected `❓ <id> <question> Correct answer: <answer>`")
            return None
        qid, rest = m.group(1), m.group(2)
        split = marker_re.search(rest)
        if not split:
            shown = " / ".join(f"{mk}:" for mk in markers)
            self.error(
                path,
                lineno,
                f"question {qid} has no answer marker; expected one of {shown} followed by the answer",
            )
            return None
        question, expected = rest[: split.start()], rest[split.end() :]
        tags = tuple(dict.fromkeys(t.lower() for t in _TAG.findall(question + " " + expected)))
        question = _TAG.sub("", question).strip()
        expected = _TAG.sub("", expected).strip()
        if not question:
            self.error(path, lineno, f"question {qid} has no question text")
            return None
        if not expected and "abstain" not in tags:
            self.error(path, lineno, f"question {qid} has no expected answer after the marker")
            return None
        return Question(qid, question, expected, tags, chapter, lineno)

    def _update(
        self, line: str, path: Path, lineno: int, facts: dict[str, FactsFile]
    ) -> FactUpdate | None:
        m = _UPDATE.match(line)
        if not m:
            self.error(path, lineno, "expected `✎ <facts file> <N.M> <new text or —>`")
            return None
        name = facts_name(m.group(1))
        if name not in facts:
            self.error(
                path,
                lineno,
                f"✎ names unknown facts file {m.group(1)!r}; known: {', '.join(sorted(facts)) or 'none'}",
            )
            return None
        return FactUpdate(name, m.group(2), m.group(3).strip(), lineno)
