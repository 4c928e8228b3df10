"""The package's import layering: lower layers never import higher ones.

Every ``import`` and ``from ... import`` of every module under src/ragscore is read with ``ast``
(those inside functions too, and relative ones resolved), so a lazy import cannot slip past:

- ``ragscore.loaders.*`` reads input; it imports nothing of ``metrics``, ``reports`` or ``cli``;
- ``ragscore.evaluate`` judges; it imports nothing of ``reports`` or ``cli`` (reports word its results);
- ``ragscore.reports.*`` renders; it imports nothing of ``cli``;
- only ``ragscore.cli.*`` and ``ragscore.__main__`` import ``ragscore.cli``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "src" / "ragscore"

# (importer prefix, forbidden prefixes): a module named by the prefix, or inside it, may import none of them.
RULES: list[tuple[str, tuple[str, ...]]] = [
    ("ragscore.loaders", ("ragscore.metrics", "ragscore.reports", "ragscore.cli")),
    ("ragscore.evaluate", ("ragscore.reports", "ragscore.cli")),
    ("ragscore.reports", ("ragscore.cli",)),
]
CLI_IMPORTERS = ("ragscore.cli", "ragscore.__main__")

# Imports that break a rule today, each with why; remove an entry when its import goes.
KNOWN: frozenset[tuple[str, str]] = frozenset()


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path, root: Path = PACKAGE) -> set[str]:
    """Name every ragscore module ``path`` imports (for ``from a import b``: a, and a.b, which may be a module)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in found if m == "ragscore" or m.startswith("ragscore.")}


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


MODULES = {module_name(path): imported(path) for path in sorted(PACKAGE.rglob("*.py"))}


def violations() -> set[tuple[str, str]]:
    """Return each (importer, imported) pair that breaks a rule, the imported name cut to the module it names."""
    found = set()
    for importer, imports in MODULES.items():
        for target in imports:
            forbidden = [f for prefix, fs in RULES if within(importer, prefix) for f in fs]
            if not any(within(importer, p) for p in CLI_IMPORTERS):
                forbidden.append("ragscore.cli")
            if any(within(target, f) for f in forbidden):
                found.add((importer, _as_module(target)))
    return found


def _as_module(name: str) -> str:
    """Cut ``ragscore.metrics.answer.LABEL_ORDER`` to the module it comes from (a file or package of the tree)."""
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def test_every_module_is_read():
    assert {"ragscore", "ragscore.evaluate", "ragscore.loaders.gold", "ragscore.cli", "ragscore.__main__"} <= set(MODULES)
    assert "ragscore.reports.reasons" in MODULES["ragscore.reports.explain"]  # imports are found


def test_no_upward_imports():
    assert violations() - KNOWN == set()


@pytest.mark.parametrize("source, expected", [
    ("from ragscore.reports.reasons import reason", {"ragscore.reports.reasons", "ragscore.reports.reasons.reason"}),
    ("def f():\n    import ragscore.cli.common", {"ragscore.cli.common"}),
    ("from ..metrics import text", {"ragscore.metrics", "ragscore.metrics.text"}),
    ("from . import gold", {"ragscore.loaders", "ragscore.loaders.gold"}),
    ("import json\nfrom typing import Any", set()),
])
def test_imports_are_read_in_every_form(tmp_path, source, expected):
    fake = tmp_path / "ragscore" / "loaders" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(source, encoding="utf-8")
    assert imported(fake, tmp_path / "ragscore") == expected


def test_a_forbidden_import_is_caught(monkeypatch):
    monkeypatch.setitem(MODULES, "ragscore.loaders.probe", {"ragscore.metrics.text", "ragscore.metrics.text.normalise"})
    monkeypatch.setitem(MODULES, "ragscore.gates", MODULES["ragscore.gates"] | {"ragscore.cli"})
    assert {("ragscore.loaders.probe", "ragscore.metrics.text"), ("ragscore.gates", "ragscore.cli")} <= violations()
