"""The corpus of real agents' traffic (tests/gateway/traffic/corpus/): adding a recording, and
reading one to write its expected figures by hand.

    python -m tests.gateway.traffic.corpus_tool add RECORDINGS ENTRY RUN [RUN…] [--bench DIR]
    python -m tests.gateway.traffic.corpus_tool listing RUN_DIR

`add` copies runs recorded with a real agent (the opt-in tests, `--basetemp` kept) into a corpus
entry, scrubbed: machine paths become placeholders (the benchmark's path becomes the entry's own
`bench`, relative to the checkout), the test tokens are blanked, and every blob whose bytes
changed is stored under its new digest (the exchanges' refs follow). Checkpoint archives are left
out (a fork's log names its parent by folder, which the entry keeps). `listing` prints each model
call with the question open, what the persona said last, what the call's last user text was, its
tool calls and the readings the log holds — what one reads before writing `expected.json5`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from gateway.log.runlog import EVENTS_FILE, RunLogWriter, iter_records, pack_record, read_log

REPO = Path(__file__).resolve().parents[3]
CORPUS = Path(__file__).resolve().parent / "corpus"
TOKENS = ("marathon-openclaw-token", "marathon-api-key-0123456789")
BOT_TOKEN = re.compile(r"\b\d{6,}:[A-Za-z0-9_-]{20,}\b")
REF_FIELDS = ("system_ref", "tools_ref", "request_ref", "response_ref")


def _placeholders(recordings: Path) -> list[tuple[str, str]]:
    """Longest first: the test's folder, the agents' installs, the checkout, the home folder."""
    home = str(Path.home())
    pairs = [
        (str(recordings.resolve().parent), "RUN_ROOT"),
        (str(Path(home) / "agents"), "AGENTS_DIR"),
        (str(REPO), "REPO"),
        (home + "/", "HOME/"),
    ]
    return sorted(pairs, key=lambda p: -len(p[0]))


class Scrubber:
    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs
        self.refs: dict[str, str] = {}

    def text(self, value: str) -> str:
        for old, new in self.pairs:
            value = value.replace(old, new)
        for token in TOKENS:
            value = value.replace(token, "TOKEN")
        return BOT_TOKEN.sub("BOT_TOKEN", value)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        return value

    def record(self, record: dict[str, Any]) -> dict[str, Any]:
        if record.get("t") == "blob":
            data = record["data"]
            with contextlib.suppress(UnicodeDecodeError):
                data = self.text(data.decode("utf-8")).encode("utf-8")
            new = hashlib.sha256(data).hexdigest()
            self.refs[record["ref"]] = new
            return {**record, "ref": new, "data": data}
        out = self.value(record)
        if record.get("t") == "llm_exchange":
            out["message_refs"] = [self.refs.get(r, r) for r in record.get("message_refs", [])]
            for key in REF_FIELDS:
                if record.get(key):
                    out[key] = self.refs.get(record[key], record[key])
        return out  # type: ignore[no-any-return]


def add(recordings: Path, entry: str, runs: list[str], bench: Path | None) -> Path:
    target = CORPUS / entry
    target.mkdir(parents=True, exist_ok=True)
    scrubber = Scrubber(_placeholders(recordings))
    bench_rel = (target / "bench").relative_to(REPO)
    for run in runs:
        source = recordings / run / EVENTS_FILE
        header = read_log(source).header
        bench_dir = bench or Path(str(header.benchmark["path"]))
        if not (target / "bench").exists():
            shutil.copytree(bench_dir, target / "bench")
        (target / run).mkdir(exist_ok=True)
        (target / run / EVENTS_FILE).unlink(missing_ok=True)
        writer = RunLogWriter(target / run / EVENTS_FILE, next_seq=0)
        for _, record in iter_records(source):
            clean = scrubber.record(record)
            if "magic" in clean:
                clean["benchmark"] = {**clean["benchmark"], "path": str(bench_rel)}
            writer.append_packed(int(clean.get("seq", 0)), pack_record(clean))
        writer.close()
    return target


def listing(run_dir: Path) -> str:
    log = read_log(run_dir / EVENTS_FILE)
    blobs = {e.ref: e.data for e in log.events if e.type == "blob"}  # type: ignore[attr-defined]
    from gateway.traffic.recorder import message_refs

    by_seq = {e.seq: e for e in log.events if e.type == "llm_exchange"}
    lines, asking, said = [], "", ""
    for e in log.events:
        d = e.__dict__
        if e.type in ("question", "say"):
            said = " ".join(str(d.get("text", "")).split())[:70]
            asking = d.get("question_id") or asking if e.type == "question" else asking
            lines.append(f"{e.seq:>5} {e.type:<9} {d.get('question_id') or ''} {said}")
        elif e.type == "evaluation":
            lines.append(f"{e.seq:>5} graded    {d['question_id']} {d['score']}")
            asking = ""
        elif e.type in ("session", "phase", "checkpoint", "run_start", "end", "error"):
            brief = {
                k: v
                for k, v in d.items()
                if k in ("action", "index", "name", "resumed", "reason", "kind", "message", "reply")
            }
            lines.append(f"{e.seq:>5} {e.type:<9} {json.dumps(brief, ensure_ascii=False)[:160]}")
        elif e.type == "llm_exchange" and d["kind"] == "probe":
            continue  # model listings and health checks: no conversation
        elif e.type == "llm_exchange":
            refs = message_refs(e, by_seq)  # type: ignore[arg-type]
            users = [json.loads(blobs[r]) for r in refs if r in blobs]
            users = [m for m in users if isinstance(m, dict) and m.get("role") == "user"]
            last = (
                " ".join(json.dumps(users[-1].get("content"), ensure_ascii=False).split())[:110]
                if users
                else ""
            )
            tools = ",".join(str(c.get("name")) for c in d["tool_calls"])
            lines.append(
                f"{e.seq:>5} call      [{asking or '-'}] kind={d['kind']} q={d['question_id']} by={d.get('decided_by', '')!r}"
                f" msgs={len(refs)} tools=[{tools}]\n            last user: {last}"
            )
        elif e.type in ("compaction", "memory_call", "evidence", "canary"):
            brief = {
                k: v
                for k, v in d.items()
                if k
                in (
                    "kind",
                    "tool",
                    "operation",
                    "target",
                    "question_id",
                    "in_context",
                    "background",
                    "exchange",
                )
            }
            lines.append(f"{e.seq:>5}   {e.type:<9} {json.dumps(brief, ensure_ascii=False)[:160]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="corpus_tool")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("add")
    p.add_argument("recordings", type=Path)
    p.add_argument("entry")
    p.add_argument("runs", nargs="+")
    p.add_argument("--bench", type=Path)
    p = sub.add_parser("listing")
    p.add_argument("run", type=Path)
    args = parser.parse_args(argv)
    if args.command == "add":
        print(add(args.recordings, args.entry, args.runs, args.bench))
    else:
        print(listing(args.run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
