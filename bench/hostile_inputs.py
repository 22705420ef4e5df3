"""Hostile and unlucky inputs, family by family: how many are handled cleanly.

The figure table of docs/security.md comes from this script. "Cleanly" means what a user is
promised: a bad benchmark or config is an error naming its file and line (never a traceback
or a hang); a crafted log never crashes `inspect`, `report` or the viewer; a secret never
reaches the log's bytes; a second writer is refused; damage in the middle of a log is refused
by resume, not silently dropped. Figures only; nothing here is asserted (the tests under
tests/ assert each family). Usage: `.venv/bin/python bench/hostile_inputs.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgpack

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gateway.cli.logs import _event_line  # noqa: E402
from gateway.log.events import Header, Said  # noqa: E402
from gateway.log.frames import frame  # noqa: E402
from gateway.log.runlog import EVENTS_FILE, RunLogDamaged, RunLogWriter, read_log  # noqa: E402
from gateway.report.markdown import render_markdown  # noqa: E402
from gateway.report.summary import summarize  # noqa: E402
from gateway.run.config import ConfigError, load_config  # noqa: E402
from gateway.viewer.watch import RunWatch  # noqa: E402
from persona.benchmark.errors import BenchmarkErrors  # noqa: E402
from persona.benchmark.loader import load_benchmark  # noqa: E402

DEMO = REPO / "benchmarks" / "demo-en"
FORMAT1 = REPO / "tests" / "gateway" / "fixtures" / "events-format1.msgpack"
TINY = {
    "benchmark.json": '{\n  name: "tiny",\n  language: "en",\n  chapters: ["ch1.md", "ch2.md"],\n}\n',
    "profile.md": "# Me\n\n## 1. Basics\n1.1 My name is Ada and I am 36\n1.2 I live in Porto\n",
    "ch1.md": '# One\n\n## Intro\n```js\nvars.require_all_facts = "profile";\n```\n> Hello!\n',
    "ch2.md": "# Two\n\n## Exam\n```js\nawait bench.newSession();\n```\n❓ q1 Where do I live? Correct answer: Porto\n",
}


class Hang(Exception):
    pass


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    def hang(signum: int, frame: object) -> None:
        raise Hang

    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# -- benchmark folders ---------------------------------------------------------------------------


def _directive(value: str) -> str:
    return f"# One\n\n## Intro\n```js\nvars.x = {value};\n```\n> Hello!\n"


def _benchmark_cases(outside: Path) -> list[tuple[str, Callable[[Path], None]]]:
    def files(**over: str | bytes | None) -> Callable[[Path], None]:
        def make(root: Path) -> None:
            for name, text in over.items():
                path = root / name.replace("__", ".")
                if text is None:
                    path.unlink(missing_ok=True)
                elif isinstance(text, bytes):
                    path.write_bytes(text)
                else:
                    path.write_text(text, encoding="utf-8")

        return make

    def link(name: str, target: Path) -> Callable[[Path], None]:
        def make(root: Path) -> None:
            (root / name).unlink(missing_ok=True)
            (root / name).symlink_to(target)

        return make

    def fifo(root: Path) -> None:
        os.mkfifo(root / "instructions.md")

    def folder(name: str) -> Callable[[Path], None]:
        def make(root: Path) -> None:
            (root / name).unlink(missing_ok=True)
            (root / name).mkdir()

        return make

    bj = TINY["benchmark.json"]
    scale = bj.replace(
        "}\n", ' scale: {ladder: {s0: 0}, insert_before: "ch2.md", distractors: DIR, seed: 1},\n}\n'
    )
    return [
        ("the tiny benchmark as it is", files()),
        ("a 5,000-digit integer in a directive", files(ch1__md=_directive("1" * 5000))),
        ("a directive list nested 3,000 deep", files(ch1__md=_directive("[" * 3000 + "]" * 3000))),
        ("benchmark.json nested 3,000 deep", files(benchmark__json="{x: " + "[" * 3000 + "]" * 3000 + "}")),
        (
            "benchmark.json nested 50,000 deep",
            files(benchmark__json="{x: " + "[" * 50000 + "]" * 50000 + "}"),
        ),
        ("a NUL in a chapter name", files(benchmark__json='{chapters: ["ch1\\u0000.md"]}')),
        ("instructions.md a FIFO", fifo),
        ("instructions.md → /dev/zero", link("instructions.md", Path("/dev/zero"))),
        ("instructions.md of 9 MB", files(instructions__md="x" * 9_000_000)),
        ("instructions.md linked from outside", link("instructions.md", outside / "secret.txt")),
        ("benchmark.json linked from outside", link("benchmark.json", outside / "benchmark.json")),
        ("a chapter linked from outside", link("ch1.md", outside / "secret.txt")),
        ("a chapter named ../secret.txt", files(benchmark__json='{chapters: ["../secret.txt"]}')),
        (
            "a chapter named by an absolute path",
            files(benchmark__json=f'{{chapters: ["{outside}/secret.txt"]}}'),
        ),
        ("scale.distractors absolute", files(benchmark__json=scale.replace("DIR", f'"{outside}"'))),
        ("scale.distractors climbing out", files(benchmark__json=scale.replace("DIR", '"../../../etc"'))),
        ("benchmark.json not JSON5", files(benchmark__json="{chapters: [")),
        ("benchmark.json empty", files(benchmark__json="")),
        ("benchmark.json a list", files(benchmark__json="[1, 2]")),
        ("benchmark.json a folder", folder("benchmark.json")),
        ("chapters not a list", files(benchmark__json='{chapters: "ch1.md"}')),
        ("chapters missing", files(benchmark__json="{name: 'x'}")),
        ("a chapter that is missing", files(ch2__md=None)),
        ("a chapter that is a folder", folder("ch2.md")),
        ("a chapter not in UTF-8", files(ch1__md=b"# One\n\n## Intro\n> caf\xe9 \xff\xfe\n")),
        ("a chapter with a NUL byte", files(ch1__md="# One\n\n## Intro\n> a\x00b\n")),
        (
            "a chapter of binary garbage",
            files(ch1__md=bytes(random.Random(1).randrange(256) for _ in range(4096))),
        ),
        (
            "a chapter with a 200,000-character line",
            files(ch1__md="# One\n\n## Intro\n> " + "y" * 200_000 + "\n"),
        ),
        ("an empty chapter", files(ch1__md="")),
        ("a directive that does not parse", files(ch1__md=_directive("{{{"))),
        (
            "an unknown directive",
            files(ch1__md="# One\n\n## Intro\n```js\nawait bench.explode();\n```\n> Hi\n"),
        ),
        ("two questions with one id", files(ch2__md=TINY["ch2.md"] + "❓ q1 Again? Correct answer: x\n")),
        ("a question without an answer", files(ch2__md="# Two\n\n## Exam\n❓ q1 Where do I live?\n")),
        ("a facts file that is missing", files(profile__md=None)),
        ("an edit of an unknown fact", files(ch1__md=TINY["ch1.md"] + "✎ profile 9.9 nothing\n")),
        (
            "require_all_facts of an unknown file",
            files(ch1__md=_directive('"nosuch"').replace("vars.x", "vars.require_all_facts")),
        ),
        (
            "a ladder that decreases",
            files(benchmark__json=scale.replace("{s0: 0}", "{s0: 3, s1: 1}").replace("DIR", '"x"')),
        ),
        (
            "insert_before nowhere",
            files(benchmark__json=scale.replace('"ch2.md"', '"nowhere"').replace("DIR", '"x"')),
        ),
        ("language a number", files(benchmark__json=bj.replace('"en"', "5"))),
        (
            "a lone surrogate escape in benchmark.json",
            files(benchmark__json=bj.replace('"tiny"', '"\\ud800"')),
        ),
        ("a float of 1e999", files(ch1__md=_directive("1e999"))),
        ("a string of 10 MB in benchmark.json", files(benchmark__json='{name: "' + "z" * 10_000_000 + '"}')),
        ("a BOM and CRLF line ends", files(ch1__md="\ufeff" + TINY["ch1.md"].replace("\n", "\r\n"))),
        (
            "a blank line before the directive block",
            files(ch1__md=TINY["ch1.md"].replace("## Intro\n", "## Intro\n\n")),
        ),
    ]


def benchmarks_family() -> tuple[int, int, list[str]]:
    clean, failures = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        outside = Path(tmp) / "outside"
        outside.mkdir()
        (outside / "secret.txt").write_text("# Secret\n\n## S\n> the neighbour's PIN is 4242\n")
        (outside / "benchmark.json").write_text(TINY["benchmark.json"])
        cases = _benchmark_cases(outside)
        for n, (name, make) in enumerate(cases):
            root = Path(tmp) / f"b{n}" / "bench"
            root.mkdir(parents=True)
            for file, text in TINY.items():
                (root / file).write_text(text, encoding="utf-8")
            make(root)
            try:
                with deadline(10):
                    load_benchmark(root)
                clean += 1
            except BenchmarkErrors as exc:
                if all(e.location.line >= 0 and e.location.path.name for e in exc.errors):
                    clean += 1
                else:
                    failures.append(f"{name}: an error without file and line")
            except Hang:
                failures.append(f"{name}: still loading after 10 s")
            except Exception as exc:  # counting what escapes is the point
                failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:80]}")
    return clean, len(cases), failures


# -- configs -------------------------------------------------------------------------------------

RUN = '{ id: "r", benchmark: "b", agent: { adapter: "reference" } }'


def _config_cases() -> list[tuple[str, str]]:
    def runs(run: str) -> str:
        return f"{{ runs: [ {run} ] }}"

    return [
        ("a valid config", runs(RUN)),
        ("comments and trailing commas", "// hi\n{ runs: [ " + RUN + ", ], }\n"),
        ("not JSON5", "{ runs: ["),
        ("empty", ""),
        ("a list at the top", "[1]"),
        ("runs not a list", '{ runs: "r" }'),
        ("no runs", "{}"),
        ("a run that is a string", runs('"r"')),
        ("a run without id", runs('{ benchmark: "b", agent: { adapter: "reference" } }')),
        ("an id with a slash", runs(RUN.replace('"r"', '"../r"'))),
        ("an id of 500 characters", runs(RUN.replace('"r"', '"' + "r" * 500 + '"'))),
        ("a misspelt key", runs(RUN.replace("agent:", "agnet:"))),
        ("a benchmark that is a number", runs(RUN.replace('"b"', "5"))),
        ("no agent", runs('{ id: "r", benchmark: "b" }')),
        ("an agent that is a string", runs('{ id: "r", benchmark: "b", agent: "x" }')),
        ("repeats 'three'", runs(RUN.replace("}", ', repeats: "three" }', 1)[:-2] + " }")),
        ("repeats 0", runs(RUN[:-1] + ", repeats: 0 }")),
        ("repeats true", runs(RUN[:-1] + ", repeats: true }")),
        ("an empty rung list", runs(RUN[:-1] + ", rung: [] }")),
        ("a rung that is a number", runs(RUN[:-1] + ", rung: 3 }")),
        ("a pool that is a number", runs(RUN[:-1] + ", pool: 3 }")),
        ("a persona that is a number", runs(RUN[:-1] + ", persona: 3 }")),
        ("two runs with one id", f"{{ runs: [ {RUN}, {RUN} ] }}"),
        ("parallel 0", "{ parallel: 0, runs: [ " + RUN + " ] }"),
        ("parallel 'x'", "{ parallel: 'x', runs: [ " + RUN + " ] }"),
        ("recordings a number", "{ recordings: 5, runs: [ " + RUN + " ] }"),
        ("nested 3,000 deep", "{ runs: [ " + RUN[:-1] + ", x: " + "[" * 3000 + "]" * 3000 + " } ] }"),
        ("a NUL in a run id", runs(RUN.replace('"r"', '"r\\u0000"'))),
        ("a BOM and CRLF", "\ufeff" + runs(RUN).replace(" ", "\r\n ")),
        ("an experiment that is a list", "{ experiment: [] }"),
        ("an experiment without variants", '{ experiment: { name: "e", tasks: ["b"] } }'),
        (
            "an experiment with a bad seed",
            '{ experiment: { name: "e", seed: "x", tasks: ["b"],'
            ' variants: {A: {adapter: "reference"}, B: {adapter: "reference"}} } }',
        ),
    ]


def configs_family() -> tuple[int, int, list[str]]:
    clean, failures = 0, []
    cases = _config_cases()
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, text) in enumerate(cases):
            path = Path(tmp) / f"c{n}.jsonc"
            path.write_text(text, encoding="utf-8")
            try:
                with deadline(10):
                    load_config(path)
                clean += 1
            except ConfigError:
                clean += 1
            except (Hang, Exception) as exc:
                failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:80]}")
    return clean, len(cases), failures


# -- crafted logs ------------------------------------------------------------------------------

WRONG: list[Any] = ["ten", "", -1, 1 << 63, 3.5, None, True, [], {}, [1, "x"], {"a": 1}, b"\x00\xff"]


def logs_family(n: int = 1000) -> tuple[dict[str, int], int, list[str]]:
    bench = load_benchmark(DEMO)
    # a real demo run's records (the checked-in format-1 log), one field of one made wrong
    head, *base = [record for _, record in _ends(FORMAT1)]
    head = head | {"format": 2, "benchmark": {"name": bench.name, "hash": bench.content_hash}}
    rng = random.Random(7)
    crashed = {"inspect": 0, "report": 0, "viewer": 0}
    examples: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(n):
            records = [dict(r) for r in base]
            which = rng.randrange(len(records))
            name = rng.choice(sorted(key for key in records[which] if key != "t"))
            records[which][name] = rng.choice(WRONG)
            run_dir = Path(tmp) / f"r{k}"
            run_dir.mkdir()
            path = run_dir / EVENTS_FILE
            path.write_bytes(b"".join(frame(msgpack.packb(r, use_bin_type=True)) for r in [head, *records]))
            for reader in crashed:
                try:
                    _read_as(reader, run_dir, bench)
                except Exception as exc:
                    crashed[reader] += 1
                    if len(examples) < 5:
                        examples.append(f"{reader} on {records[which]['t']}.{name}: {type(exc).__name__}")
    return crashed, n, examples


def _read_as(reader: str, run_dir: Path, bench: Any) -> None:
    if reader == "inspect":
        [_event_line(e) for e in read_log(run_dir / EVENTS_FILE).events]
    elif reader == "report":
        render_markdown(summarize(read_log(run_dir / EVENTS_FILE), bench))
    else:
        _view(run_dir)


class Unreadable(RuntimeError):
    """The viewer listed the run as unreadable, with its reason (no crash)."""


def _view(run_dir: Path) -> None:
    watch = RunWatch(run_dir)
    asyncio.run(watch.refresh())
    watch.summary(), watch.series()
    if watch.error:
        raise Unreadable(watch.error)


# -- secrets, concurrent runs, mid-log damage -----------------------------------------------------


def secrets_family() -> tuple[int, int, list[str]]:
    from gateway.run.agents import describe_agent
    from gateway.traffic.profile import load_profile
    from gateway.traffic.recorder import RawExchange, RunRecorder

    m = {k: f"canary-{k}-{'x' * 24}" for k in ("q1", "q2", "q3", "body", "h1", "h2", "tenant")}
    shaped = {
        "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.canarySIGNATUREabc123",
        "ant": "sk-ant-canaryANTHROPIC12345678",
        "goog": "AIzaSyCanaryGOOGLE0123456789abcdefghijk",
        "oai": "sk-canaryOPENAI1234567890abcd",
        "bot": "123456789:AAF-canarycanarycanarycanary12345",
        "url": "AIzaSyCanaryURLKEY0123456789abcdefghijk",
    }
    settings = {
        "adapter": "http",
        "url": f"http://127.0.0.1:1/bot{shaped['bot']}/chat?key={shaped['url']}",
        "headers": {"X-Note": shaped["oai"]},
        "llm": {"upstream": "http://127.0.0.1:2", "secret_names": ["x-tenant"]},
    }
    request = {"model": "m", "api_key": m["body"], "messages": [{"role": "user", "content": "hi"}]}
    echo = {"error": {"message": f"bad key {shaped['ant']}", "key": shaped["goog"]}}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / EVENTS_FILE
        with RunLogWriter.create(path, Header(run_id="r", agent=describe_agent(settings))) as w:
            recorder = RunRecorder(w.append, load_profile(None, {"secret_names": ["x-tenant"]}))
            recorder.record(
                RawExchange(
                    "POST",
                    f"/v1/messages?key={m['q1']}&api_key={m['q2']}&access_token={m['q3']}",
                    {
                        "X-Custom-Auth": m["h1"],
                        "X-Auth": m["h2"],
                        "Authorization": f"Bearer {shaped['jwt']}",
                        "X-Tenant": m["tenant"],
                    },
                    json.dumps(request).encode(),
                    401,
                    {"content-type": "application/json"},
                    json.dumps(echo).encode(),
                )
            )
        raw = path.read_bytes()
    secrets = {**m, **shaped}
    leaked = [k for k, v in secrets.items() if v.encode() in raw]
    return len(secrets) - len(leaked), len(secrets), leaked


def concurrent_family(trials: int = 2) -> tuple[int, int, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    clean, failures = 0, []
    for t in range(trials):
        with tempfile.TemporaryDirectory() as tmp:
            procs = [
                subprocess.Popen(
                    [sys.executable, "-m", "gateway.cli", "demo", "--recordings", "rec"],
                    cwd=tmp,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for _ in range(2)
            ]
            results = [(*p.communicate(timeout=300), p.returncode) for p in procs]
            log = read_log(Path(tmp) / "rec" / "demo" / EVENTS_FILE)
            starts = sum(1 for e in log.events if e.type == "run_start")
            refused = [r for r in results if r[2] != 0 and "being written by another marathon" in r[1]]
            if starts == 1 and len(refused) == 1:
                clean += 1
            else:
                failures.append(f"trial {t}: {starts} run_start, {len(refused)} refused")
    return clean, trials, failures


def damage_family() -> tuple[int, int, list[str]]:
    clean, failures = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        current = Path(tmp) / "v2.msgpack"
        with RunLogWriter.create(current, Header(run_id="r")) as w:
            for i in range(1000):
                w.append(Said(text=f"message {i} " + "x" * (i % 50)))
        old = Path(tmp) / "v1.msgpack"
        shutil.copy(FORMAT1, old)
        ends = [int(e) for e, _ in _ends(old)]
        for name, path, at, value in (
            ("format 2, one flipped bit at 30 %", current, int(current.stat().st_size * 0.3), None),
            ("format 1, a broken record start at 30 %", old, ends[len(ends) * 3 // 10], 0xC1),
        ):
            data = bytearray(path.read_bytes())
            data[at] = value if value is not None else data[at] ^ 0x10
            path.write_bytes(bytes(data))
            before = path.read_bytes()
            try:
                RunLogWriter.resume(path)[0].close()
                failures.append(f"{name}: resumed")
            except RunLogDamaged:
                if path.read_bytes() == before:
                    clean += 1
                else:
                    failures.append(f"{name}: refused but the file changed")
    return clean, 2, failures


# -- hostile agents and big inputs (issue 31) ------------------------------------------------

# one of each class of control character an agent's or a benchmark's text may hold
CONTROLS = {
    "OSC title": "\x1b]0;owned\x07",
    "clear screen": "\x1b[2J",
    "OSC 52 clipboard": "\x1b]52;c;aGk=\x07",
    "OSC 8 link": "\x1b]8;;http://x\x1b\\",
    "C1 CSI": "\x9b2J",
    "NUL": "\x00",
    "bidi override": "\u202e",
}


def _raw_controls(text: str) -> bool:
    return any(c in text for c in ("\x1b", "\x07", "\x9b", "\x00", "\u202e"))


def controls_family() -> tuple[int, int, list[str]]:
    """Each control class in a benchmark's name (`marathon check`) and in an agent's answer
    (`marathon inspect`, report.md): held when no raw control character is written."""
    from gateway.log.events import Replied
    from gateway.report.markdown import render_markdown
    from gateway.report.summary import summarize

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    held, tried, bad = 0, 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for name, seq in CONTROLS.items():
            bench = Path(tmp) / f"b{tried}"
            bench.mkdir()
            for file, text in TINY.items():
                (bench / file).write_text(text, encoding="utf-8")
            (bench / "benchmark.json").write_text(
                json.dumps({"name": f"tiny{seq}", "language": "en", "chapters": ["ch1.md", "ch2.md"]})
            )
            run_dir = Path(tmp) / f"r{tried}"
            run_dir.mkdir()
            with RunLogWriter.create(run_dir / EVENTS_FILE, Header(run_id="r")) as log:
                log.append(Replied(text=f"completed: mean 10.00/10 {seq}"))
            outputs = {
                "check": subprocess.run(
                    [sys.executable, "-m", "gateway.cli", "check", str(bench)], capture_output=True, text=True, env=env
                ),
                "inspect": subprocess.run(
                    [sys.executable, "-m", "gateway.cli", "inspect", str(run_dir)], capture_output=True, text=True, env=env
                ),
            }
            texts = {k: v.stdout + v.stderr for k, v in outputs.items()}
            texts["report.md"] = render_markdown(summarize(read_log(run_dir / EVENTS_FILE), load_benchmark(bench)))
            for where, text in texts.items():
                tried += 1
                if where == "report.md":
                    from gateway.display import safe_text

                    text = safe_text(text)  # as report.md is written
                if _raw_controls(text) or "Traceback" in text:
                    bad.append(f"{name} through {where}")
                else:
                    held += 1
    return held, tried, bad


def replies_family() -> tuple[int, int, list[str]]:
    """Replies past the bound over HTTP, WebSocket and the Bot API, and JSON nested past the
    stack: held when each is a typed agent error (never a crash, never read whole)."""
    from aiohttp import web

    from adapters.base import AdapterError
    from adapters.http import HttpAdapter
    from adapters.http_server import serve
    from adapters.websocket import WebSocketAdapter

    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        with contextlib.suppress(ConnectionError):
            for _ in range(1024):
                await response.write(b"x" * (1 << 20))
        return response

    async def nested(request: web.Request) -> web.Response:
        return web.Response(text="[" * 200_000 + "]" * 200_000, content_type="application/json")

    async def frame_of_2_mib(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for _ in ws:
            await ws.send_str(json.dumps({"text": "x" * (2 << 20)}))
        return ws

    async def attempt(kind: str) -> str:
        app = web.Application()
        if kind == "websocket":
            app.router.add_get("/ws", frame_of_2_mib)
        else:
            app.router.add_post("/chat", endless if kind == "endless body" else nested)
        served = await serve(app)
        adapter: Any = (
            WebSocketAdapter({"url": served.url.replace("http", "ws") + "/ws", "retries": 0, "timeout": 10})
            if kind == "websocket"
            else HttpAdapter({"url": f"{served.url}/chat", "retries": 0, "max_reply_bytes": 1 << 21})
        )
        try:
            await adapter.send("hi")
            return "read whole"
        except AdapterError:
            return ""
        except Exception as exc:
            return f"{type(exc).__name__}"
        finally:
            await adapter.close()
            await served.stop()

    kinds = ["endless body", "nested 200,000 deep", "websocket"]
    bad = [f"{k}: {why}" for k in kinds if (why := asyncio.run(attempt(k)))]
    return len(kinds) - len(bad), len(kinds), bad


def crafted_values_family() -> tuple[int, int, list[str]]:
    """Values of the right type that can't be (a time of 1e308, an end reason that is none):
    held when `inspect`, `report` and the viewer read the log, or refuse it with a message (a
    header that can't be is `RunLogFormatError`; the viewer lists the run as unreadable)."""
    from gateway.log.runlog import RunLogFormatError

    bench = load_benchmark(DEMO)
    head, *base = [record for _, record in _ends(FORMAT1)]
    head = head | {"format": 2, "benchmark": {"name": bench.name, "hash": bench.content_hash}}
    cases = [
        ("header created 1e308", lambda h, rs: (h | {"created": 1e308}, rs)),
        ("header created -inf", lambda h, rs: (h | {"created": float("-inf")}, rs)),
        ("an event at ts nan", lambda h, rs: (h, [rs[0] | {"ts": float("nan")}, *rs[1:]])),
        ("end reason 'str'", lambda h, rs: (h, [*rs, {"t": "end", "seq": len(rs) + 1, "ts": 1.0, "reason": "str"}])),
    ]
    held, tried, bad = 0, 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for n, (name, craft) in enumerate(cases):
            h, records = craft(dict(head), [dict(r) for r in base])
            run_dir = Path(tmp) / f"v{n}"
            run_dir.mkdir()
            (run_dir / EVENTS_FILE).write_bytes(
                b"".join(frame(msgpack.packb(r, use_bin_type=True)) for r in [h, *records])
            )
            for reader in ("inspect", "report", "viewer"):
                tried += 1
                try:
                    _read_as(reader, run_dir, bench)
                    held += 1
                except (RunLogFormatError, Unreadable):
                    held += 1  # refused with its reason: what `inspect` prints, what the viewer shows
                except Exception as exc:
                    bad.append(f"{name} in {reader}: {type(exc).__name__}")
    return held, tried, bad


def settings_family() -> tuple[int, int, list[str]]:
    """Agent settings of the wrong shape: held when refused before the run, naming the field."""
    from adapters.base import AdapterConfigError
    from gateway.run.agents import check_agent_settings
    from gateway.run.placement import parse_executor

    url = "http://127.0.0.1:9/chat"
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("timeout 'soon'", {"adapter": "http", "url": url, "timeout": "soon"}, "`timeout`"),
        ("retries 1.5", {"adapter": "http", "url": url, "retries": 1.5}, "`retries`"),
        ("llm.port 'x'", {"adapter": "http", "url": url, "llm": {"upstream": "standin", "port": "x"}}, "`llm.port`"),
        ("port 70000", {"adapter": "http", "url": url, "port": 70000}, "`port`"),
        ("quiet 'later'", {"adapter": "websocket", "url": "ws://127.0.0.1:9", "quiet": "later"}, "`quiet`"),
        (
            "a URL's password beside an Authorization header",
            {"adapter": "http", "url": "http://bob:pw@127.0.0.1:9/chat", "headers": {"Authorization": "Bearer x"}},
            "Authorization",
        ),
    ]
    held, bad = 0, []
    for name, agent, field in cases:
        try:
            check_agent_settings(agent)
            bad.append(f"{name}: accepted")
        except AdapterConfigError as exc:
            held += 1 if field in str(exc) else 0
            if field not in str(exc):
                bad.append(f"{name}: {exc}")
        except Exception as exc:
            bad.append(f"{name}: {type(exc).__name__}: {exc}")
    executor, problem = parse_executor({"ray": {"runtime_env": {"pip": 5}}})
    if executor is None and "runtime_env.pip" in problem:
        held += 1
    else:
        bad.append(f"Ray runtime_env {{pip: 5}}: {problem!r}")
    return held, len(cases) + 1, bad


def big_benchmarks_family() -> tuple[int, int, list[str]]:
    """20,000 questions checked within 30 s; 40 chapters of 8 MB refused within 5 s."""
    sys.path.insert(0, str(REPO / "bench"))
    from big_benchmarks import write_benchmark

    held, bad = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_benchmark(Path(tmp) / "many", 20_000)
        started = time.monotonic()
        load_benchmark(folder)
        took = time.monotonic() - started
        held, bad = (held + 1, bad) if took < 30 else (held, [*bad, f"20,000 questions: {took:.0f} s"])
        huge = Path(tmp) / "huge"
        huge.mkdir()
        names = [f"ch{n}.md" for n in range(40)]
        (huge / "benchmark.json").write_text(json.dumps({"name": "h", "language": "en", "chapters": names}))
        for name in names:
            with open(huge / name, "wb") as f:
                f.truncate(8_000_000)
        started = time.monotonic()
        try:
            load_benchmark(huge)
            bad.append("40 chapters of 8 MB: loaded")
        except BenchmarkErrors:
            took = time.monotonic() - started
            held, bad = (held + 1, bad) if took < 5 else (held, [*bad, f"40 × 8 MB refused in {took:.0f} s"])
    return held, 2, bad


def _ends(path: Path) -> list[tuple[int, dict[str, Any]]]:
    from gateway.log.runlog import iter_records

    return list(iter_records(path))


FAMILIES: list[tuple[str, Callable[[], tuple[int, int, list[str]]]]] = [
    ("benchmark folders (`marathon check`)", benchmarks_family),
    ("configs (`marathon run`)", configs_family),
    ("secrets placed in a recorded call and its settings, redacted", secrets_family),
    ("two `marathon demo`s on one run folder: one refused", concurrent_family),
    ("mid-log damage refused by resume, file kept", damage_family),
    ("control characters (7 classes) through `check`, `inspect`, report.md: none raw", controls_family),
    ("replies past the bound (endless body, 2 MiB frame, 200,000-deep JSON): typed errors", replies_family),
    ("crafted values of the right type (1e308, -inf, nan, end reason 'str'): read or refused", crafted_values_family),
    ("agent settings of the wrong shape: refused before the run, field named", settings_family),
    ("big benchmarks (20,000 questions checked; 40 × 8 MB refused, in seconds)", big_benchmarks_family),
]


def main() -> None:
    started = time.monotonic()
    rows: list[tuple[str, str, list[str]]] = []
    for label, family in FAMILIES[:2]:
        ok, total, bad = family()
        rows.append((label, f"{ok}/{total}", bad))
    crashed, total, examples = logs_family()
    for reader, count in crashed.items():
        rows.append(
            (
                f"crafted logs with wrong-typed fields: `{reader}` handled",
                f"{total - count:,}/{total:,}",
                examples if count else [],
            )
        )
    for label, family in FAMILIES[2:]:
        ok, total, bad = family()
        rows.append((label, f"{ok}/{total}", bad))
    print("| family | handled cleanly |")
    print("|---|---|")
    for family, figure, _ in rows:
        print(f"| {family} | {figure} |")
    for family, _, problems in rows:
        for p in problems:
            print(f"  not clean — {family}: {p}")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
