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
    "persona": (("terms", "phrases", "llm"), "benchmark", "grading", "drivers"),
}
MAX_LINES = 500
SIZE_REASON = "Size:"  # a module docstring paragraph starting so says why a module is longer


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
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        doc = ast.get_docstring(ast.parse(text)) or ""
        if lines > MAX_LINES and SIZE_REASON not in doc:
            out.append(f"{path.relative_to(root)}: {lines} lines and no `{SIZE_REASON}` reason in its docstring")
    return out


def test_no_import_cycles_between_files() -> None:
    found = cycles(import_graph(REPO, CHECKED))
    assert not found, "import cycles:\n" + "\n".join(" ↔ ".join(c) for c in found)


def test_the_dependency_rules_and_the_flow_order_hold() -> None:
    problems = broken_rules(import_graph(REPO, CHECKED))
    assert not problems, "\n".join(problems)


def test_no_module_is_long_without_a_reason() -> None:
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
    assert oversized(tmp_path) == [
        f"persona/benchmark/model.py: {MAX_LINES + 2} lines and no `{SIZE_REASON}` reason in its docstring"
    ]
