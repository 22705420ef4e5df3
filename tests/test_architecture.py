"""The house stays as built (docs/architecture.md): no import cycles between files, the
dependency rules between the top-level packages, the flow order of the sub-packages, and no
module past ~500 lines without a reason in its docstring.

Imports are read with `ast`, every one of them: at module level, inside functions (a lazy
import that dodges a cycle is still a cycle) and under `TYPE_CHECKING`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGES = ("gateway", "persona", "adapters", "fakes")
CHECKED = (*PACKAGES, "bench", "tests")

# What each top-level folder may import of ours (design §2): gateway → persona, adapters;
# never back. The reference agent is an agent under test like any other.
ALLOWED = {
    "gateway": {"gateway", "persona", "adapters"},
    "persona": {"persona"},
    "adapters": {"adapters"},
    "fakes": {"fakes", "gateway", "persona", "adapters"},
    # bench scripts may drive a test harness at full size (the interruption matrix: a sample in CI)
    "bench": {"bench", "fakes", "gateway", "persona", "adapters", "tests"},
    "tests": {"tests", "fakes", "gateway", "persona", "adapters"},
}
SEALED = {"adapters.reference": "adapters.reference"}  # may import only itself

# Sub-packages in the order the data flows: one may import those before it (or itself).
LAYERS = {
    "gateway": ("log", "traffic", "report", "run", "cluster", "viewer", "cli"),
    "persona": (("terms", "phrases", "llm", "outcome"), "benchmark", "grading", "drivers"),
}
MAX_LINES = 500


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module of ours, dotted
    path: Path
    line: int


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files(root: Path, tops: tuple[str, ...]) -> Iterator[Path]:
    for top in tops:
        yield from sorted((root / top).rglob("*.py"))


def imports_of(path: Path, root: Path, modules: set[str]) -> Iterator[Import]:
    """Every import in `path` of a module in `modules` (lazy and TYPE_CHECKING ones included)."""
    source = module_name(path, root)
    package = source if path.name == "__init__.py" else source.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from a.b import c` imports the module a.b.c when there is one, else a name of a.b
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        for name in dict.fromkeys(names):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != source:
                yield Import(source, name, path, node.lineno)


def import_graph(root: Path, tops: tuple[str, ...]) -> list[Import]:
    files = list(python_files(root, tops))
    modules = {module_name(p, root) for p in files}
    return [imp for p in files for imp in imports_of(p, root, modules)]


def cycles(edges: list[Import]) -> list[list[str]]:
    """Each import cycle once, as the modules along it (Tarjan's strongly connected components)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str) -> tuple[str, int, str] | None:
    """(top-level package, rank, sub-package) of a module in a layered package."""
    top, _, rest = module.partition(".")
    if top not in LAYERS or not rest:
        return None
    sub = rest.split(".")[0]
    for rank, members in enumerate(LAYERS[top]):
        if sub == members or sub in members:
            return top, rank, sub
    return None


def broken_rules(edges: list[Import]) -> list[str]:
    problems = []
    for e in edges:
        where = f"{e.path.relative_to(REPO) if e.path.is_relative_to(REPO) else e.path}:{e.line}"
        top, target_top = e.source.split(".")[0], e.target.split(".")[0]
        if target_top not in ALLOWED.get(top, {top}):
            problems.append(f"{where}: {e.source} imports {e.target} ({top} may import {sorted(ALLOWED[top])})")
        for sealed, allowed in SEALED.items():
            if (e.source + ".").startswith(sealed + ".") and not (e.target + ".").startswith(allowed + "."):
                problems.append(f"{where}: {e.source} imports {e.target} ({sealed} may import only itself)")
        mine, theirs = layer_of(e.source), layer_of(e.target)
        if mine and theirs and mine[0] == theirs[0] and mine[2] != theirs[2] and theirs[1] >= mine[1]:
            order = " → ".join("/".join(m) if isinstance(m, tuple) else m for m in LAYERS[mine[0]])
            problems.append(
                f"{where}: {e.source} imports {e.target}, which comes after it in {mine[0]} ({order})"
            )
    return problems


def oversized(root: Path) -> list[str]:
    out = []
    for path in python_files(root, PACKAGES):
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > MAX_LINES:
            out.append(f"{path.relative_to(root)}: {lines} lines, past {MAX_LINES}")
    return out


# Where a kind may be spelled as its string: the log's vocabularies and the readers of stored text.
VOCABULARY_HOMES = {"gateway/log/vocabulary.py", "gateway/log/events.py", "gateway/report/run_line.py"}
KIND_FIELDS = {"status", "reason", "purpose", "action", "source"}  # a run's or an event's typed kinds
OUTCOME_HOME = "persona/outcome.py"  # the retry weight and the definitions of a pass
OUTCOME_NAMES = {"RETRY_WEIGHT", "PASS_SCORE", "FULL_SCORE", "CORRECT_AT"}
WIRE_PAYLOADS = {"params", "body", "payload"}  # an API's own fields (a Bot API `action`), not our kinds
CAPABILITY_HOLDERS = {"adapter", "driver", "client", "inner", "judge", "handle"}  # declare, don't probe


def _strings(node: ast.expr) -> bool:
    """A string literal, or a tuple/list/set of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and bool(node.elts) and all(map(_strings, node.elts))


def _kind_read(node: ast.expr) -> str | None:
    """`x.status` (a kind field) or `x.get("status")` — what a kind comparison reads."""
    if isinstance(node, ast.Attribute) and node.attr in KIND_FIELDS:
        return node.attr
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and not (isinstance(node.func.value, ast.Name) and node.func.value.id in WIRE_PAYLOADS)
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and node.args[0].value in KIND_FIELDS
    ):
        return str(node.args[0].value)
    return None


def _named_score(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "score" in name.lower()


def house_rules(root: Path) -> list[str]:
    """Kinds compared as members, one home for what a grade means, capabilities declared."""
    out = []
    for path in python_files(root, PACKAGES):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            where = f"{rel}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Compare) and rel not in VOCABULARY_HOMES:
                sides = [node.left, *node.comparators]
                for one, other in ((sides[0], sides[-1]), (sides[-1], sides[0])):
                    if (field := _kind_read(one)) and _strings(other):
                        out.append(f"{where}: `{field}` compared with a string (compare its enum's member)")
            if rel == OUTCOME_HOME:
                continue
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id in OUTCOME_NAMES:
                        out.append(f"{where}: `{t.id}` defined again (import it from persona.outcome)")
            if isinstance(node, ast.Compare) and len(node.comparators) == 1:
                pair = (node.left, node.comparators[0])
                for one, other in (pair, pair[::-1]):
                    if _named_score(one) and isinstance(other, ast.Constant) and other.value in (5, 10):
                        out.append(f"{where}: a score compared with {other.value} (use persona.outcome's pass)")
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
                for one, other in ((node.left, node.right), (node.right, node.left)):
                    if _named_score(one) and isinstance(other, ast.Constant) and other.value in (0.5, 2):
                        out.append(f"{where}: a score weighted by {other.value} (use persona.outcome)")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and node.args
            ):
                target = node.args[0]
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
                if name.split("_")[-1] in CAPABILITY_HOLDERS:
                    out.append(f"{where}: {node.func.id}() on `{name}` (declare a capability Protocol)")
    return out


def test_the_house_rules_hold() -> None:
    """No kind compared with a string, one retry weight and pass, no probing an adapter or a driver."""
    found = house_rules(REPO)
    assert not found, "\n".join(found)


def test_no_import_cycles_between_files() -> None:
    found = cycles(import_graph(REPO, CHECKED))
    assert not found, "import cycles:\n" + "\n".join(" ↔ ".join(c) for c in found)


def test_the_dependency_rules_and_the_flow_order_hold() -> None:
    problems = broken_rules(import_graph(REPO, CHECKED))
    assert not problems, "\n".join(problems)


def test_no_module_is_long() -> None:
    assert not oversized(REPO), "\n".join(oversized(REPO))


@pytest.mark.parametrize(
    "package", sorted({str(p.parent.relative_to(REPO)) for p in python_files(REPO, PACKAGES) if p.name == "__init__.py"})
)
def test_every_sub_package_says_what_it_owns(package: str) -> None:
    init = REPO / package / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert doc and len(doc) > 40, f"{init.relative_to(REPO)}: open with a docstring saying what it owns"


def test_the_checks_catch_a_cycle_a_backward_import_and_a_long_module(tmp_path: Path) -> None:
    """The checks above can fail: a small tree with one of each breakage is reported."""
    files = {
        "gateway/__init__.py": '"""g"""\n',
        "gateway/log/__init__.py": "",
        "gateway/log/events.py": "def f():\n    from gateway.report import markdown\n",
        "gateway/report/__init__.py": "",
        "gateway/report/markdown.py": "from gateway.log.events import f\n",
        "persona/__init__.py": "",
        "persona/terms.py": "import gateway.log.events\n",
        "persona/benchmark/__init__.py": "",
        "persona/benchmark/model.py": '"""Short."""\n' + "x = 1\n" * (MAX_LINES + 1),
        "persona/drivers/llm.py": (
            "RETRY_WEIGHT = 0.5\n"
            "def f(line, event, adapter, score):\n"
            "    a = line.get('status') == 'limit_reached'\n"
            "    b = event.reason in ('completed', 'limit_reached')\n"
            "    c = score >= 10\n"
            "    d = score * 0.5\n"
            "    return hasattr(adapter, 'on_retry')\n"
        ),
        "adapters/__init__.py": "",
        "adapters/reference/__init__.py": "",
        "adapters/reference/agent.py": "from adapters import base\n",
        "adapters/base.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    edges = import_graph(tmp_path, ("gateway", "persona", "adapters"))
    assert cycles(edges) == [["gateway.log.events", "gateway.report.markdown"]]
    problems = broken_rules(edges)
    assert any("persona.terms imports gateway.log.events" in p for p in problems)
    assert any("gateway.log.events imports gateway.report.markdown, which comes after it" in p for p in problems)
    assert any("adapters.reference.agent imports adapters.base" in p for p in problems)
    assert oversized(tmp_path) == [f"persona/benchmark/model.py: {MAX_LINES + 2} lines, past {MAX_LINES}"]
    assert [p.split(": ", 1)[1].split(" (")[0] for p in house_rules(tmp_path)] == [
        "`RETRY_WEIGHT` defined again",
        "`status` compared with a string",
        "`reason` compared with a string",
        "a score compared with 10",
        "a score weighted by 0.5",
        "hasattr() on `adapter`",
    ]
