"""The import graph of the ragscore package, read from its source (tests/test_architecture.py).

Every ``import`` and ``from ... import`` statement counts wherever it is: at the top, inside a function
(a lazy import) or under ``if TYPE_CHECKING:``. ``from ragscore.a import b`` where ``b`` is a module of
package ``a`` is an import of ``ragscore.a.b``; of the package ``ragscore.a`` itself only when a name it
imports is not a submodule (a package's ``__init__`` runs first either way, but what runs it is not an
edge of the graph: otherwise every package would be in a cycle with its own modules).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"


@dataclass(frozen=True)
class Import:
    """One import statement: who imports what, and where."""

    importer: str  # a module's dotted name
    imported: str  # a module's dotted name
    line: int


def modules(root: Path = SRC) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__``)."""
    out = {}
    for path in sorted((root / "ragscore").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(root: Path = SRC) -> list[Import]:
    """Every import of one ragscore module by another."""
    known = modules(root)
    out = []
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            for target in _targets(node, package, known):
                if target != name:
                    out.append(Import(name, target, node.lineno))
    return out


def _targets(node: ast.AST, package: str, known: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield from _module_of(alias.name, known)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parent = package.split(".")
            if node.level > 1:
                parent = parent[: len(parent) - node.level + 1]
            base = ".".join([*parent, base] if base else parent)
        if not base.startswith("ragscore"):
            return
        submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
        if len(submodules) < len(node.names):  # a name defined in the module itself (not only its submodules)
            yield from _module_of(base, known)
        yield from submodules


def _module_of(name: str, known: dict[str, Path]) -> Iterable[str]:
    """The module a dotted name imports (its longest known prefix), if it is ragscore's."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return [candidate]
    return []


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:  # recursion depth is bounded by the package's modules
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)
