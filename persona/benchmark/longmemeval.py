"""LongMemEval instances → marathonbench benchmarks the scripted driver replays.

LongMemEval (Wu et al., 2024) ships each question with a haystack of chat sessions
(`haystack_sessions`: lists of `{role, content}` turns, `haystack_dates`, `answer_session_ids`)
and a `question` / `answer`; ids ending `_abs` are abstention questions. Each instance becomes
its own benchmark folder: one phase per haystack session (a new session each), the user's
turns as `> ` lines said verbatim, and a last phase, in a new session, asking the question.
The assistant turns of the dataset are dropped: the agent under test answers for itself.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ImportError_(ValueError):
    """The file is not LongMemEval-shaped; the message says where."""


@dataclass(frozen=True)
class Imported:
    question_id: str
    folder: Path
    sessions: int
    abstain: bool


def _line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:80] or "instance"


def folder_name(question_id: str) -> str:
    """A question id as a folder name inside OUT_DIR: letters, digits, `.`, `_`, `-`; never
    `.`/`..` or hidden (an id like `..` must not write into OUT_DIR's parent)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", question_id).strip("_.")[:80]
    return name or "instance"


def import_longmemeval(source: Path, out_dir: Path) -> list[Imported]:
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ImportError_(f"{source}: not readable JSON ({exc})") from None
    instances = data if isinstance(data, list) else [data]
    seen: dict[str, str] = {}
    for n, instance in enumerate(instances):  # every name checked before anything is written
        if not isinstance(instance, dict):
            raise ImportError_(f"{source}: instance #{n} is not an object")
        qid = str(instance.get("question_id", ""))
        name = folder_name(qid)
        if name in seen:
            raise ImportError_(
                f"{source}: instance #{n}: question ids {seen[name]!r} and {qid!r} would both be "
                f"written to {out_dir / name}; make them differ in letters or digits"
            )
        seen[name] = qid
    return [_write(instance, n, source, out_dir) for n, instance in enumerate(instances)]


def _write(instance: dict[str, Any], n: int, source: Path, out_dir: Path) -> Imported:
    where = f"{source}: instance #{n}"
    for key in ("question_id", "question", "answer", "haystack_sessions"):
        if key not in instance:
            raise ImportError_(f"{where}: missing {key!r}")
    qid = str(instance["question_id"])
    sessions = instance["haystack_sessions"]
    if not isinstance(sessions, list):
        raise ImportError_(f"{where}: haystack_sessions must be a list of sessions")
    abstain = qid.endswith("_abs")
    dates = instance.get("haystack_dates") or []
    folder = out_dir / folder_name(qid)
    folder.mkdir(parents=True, exist_ok=True)
    lines = [f"# LongMemEval {qid}", ""]
    for index, session in enumerate(sessions):
        said = [
            _line(str(t.get("content", "")))
            for t in session
            if isinstance(t, dict) and t.get("role") == "user"
        ]
        said = [s for s in said if s]
        if not said:
            continue
        date = f" ({dates[index]})" if index < len(dates) else ""
        lines += [f"## Session {index + 1}{date}", "```js", "await bench.newSession();", "```"]
        lines += [f"> {s}" for s in said] + [""]
    question = _line(str(instance["question"]))
    expected = "[abstain] you were never told" if abstain else _line(str(instance["answer"]))
    tag = (
        f"[{_slug(str(instance.get('question_type', ''))).lower()}] "
        if instance.get("question_type") and not abstain
        else ""
    )
    question_date = f" ({instance['question_date']})" if instance.get("question_date") else ""
    lines += [
        f"## Question{question_date}",
        "```js",
        "await bench.newSession();",
        "```",
        f"❓ {_slug(qid)} {tag}{question} Correct answer: {expected}",
        "",
    ]
    (folder / "chapter.md").write_text("\n".join(lines), encoding="utf-8")
    (folder / "benchmark.json").write_text(
        json.dumps(
            {
                "name": f"longmemeval-{qid}",
                "language": "en",
                "chapters": ["chapter.md"],
                "facts": [],
                "source": {
                    "file": source.name,
                    "question_id": qid,
                    "answer_session_ids": instance.get("answer_session_ids", []),
                },
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    (folder / "instructions.md").write_text(
        "Replay of a LongMemEval instance: say each user turn as written, one session at a time, then ask the question.\n",
        encoding="utf-8",
    )
    return Imported(qid, folder, len(sessions), abstain)
