"""The package's shape, as a contract: layers, wings and no cycles (issue 33).

Every module has a layer; an import (at the top, inside a function, or under ``TYPE_CHECKING``)
never reaches a higher layer:

    foundation < loaders < metrics < engine < reports < commands < suite < facade < cli

The commands beyond ``score`` are wings, one subpackage each with its own ``api.py``; a wing never
imports another wing, and the suite imports only their ``api`` modules (and score's ``ragscore.api``).
No module imports another by its name as a string, but the package root's lazy ``__getattr__``.
No module cycle either. Each rule is tested on the real package, then on a planted breach, so that a
check that cannot fail would be seen.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import imports
from imports import Import

LAYERS = ("foundation", "loaders", "metrics", "engine", "reports", "commands", "suite", "facade", "cli")
FOUNDATION = frozenset({
    "ragscore.version", "ragscore.errors", "ragscore.quoting", "ragscore.numbers", "ragscore.text",
    "ragscore.score_names", "ragscore.backtracking", "ragscore.json_paths", "ragscore.progress", "ragscore.suggest",
    "ragscore.labels", "ragscore.settings", "ragscore.schema", "ragscore.starter", "ragscore.tables", "ragscore.appending",
})
ENGINE = frozenset({
    "ragscore.evaluate", "ragscore.results", "ragscore.rows", "ragscore.operations", "ragscore.external",
    "ragscore.gates", "ragscore.intervals", "ragscore.slices", "ragscore.diagnose", "ragscore.config",
    "ragscore.input_config", "ragscore.keywords", "ragscore.parallel", "ragscore.partials", "ragscore.partial_schema",
    "ragscore.comparison", "ragscore.validate", "ragscore.finish", "ragscore.partial_rows",
})
WINGS = ("comparing", "monitoring", "goldset", "stages", "trec", "judging")


def layer(module: str) -> str:
    """The layer of a module, by its package (a top-level module by the lists above)."""
    parts = module.split(".")
    top = ".".join(parts[:2])
    if module == "ragscore" or top == "ragscore.testing":
        return "facade"
    if top in ("ragscore.cli", "ragscore.__main__"):
        return "cli"
    if top == "ragscore.suite":
        return "suite"
    if top == "ragscore.api" or (len(parts) > 1 and parts[1] in WINGS):
        return "commands"
    if top == "ragscore.reports":
        return "reports"
    if top == "ragscore.loaders":
        return "loaders"
    if top == "ragscore.metrics":
        return "metrics"
    if top in ENGINE or top == "ragscore.diagnose":
        return "engine"
    if top in FOUNDATION:
        return "foundation"
    raise AssertionError(f"{module} has no layer: add it to tests/test_architecture.py")


def wing(module: str) -> str | None:
    """The wing a module belongs to ("score" for score's ``ragscore.api``), else None."""
    parts = module.split(".")
    if module == "ragscore.api":
        return "score"
    return parts[1] if len(parts) > 1 and parts[1] in WINGS else None


def upward(found: list[Import]) -> list[str]:
    return [f"{i.importer}:{i.line} ({layer(i.importer)}) imports {i.imported} ({layer(i.imported)})"
            for i in found if LAYERS.index(layer(i.imported)) > LAYERS.index(layer(i.importer))]


def across_wings(found: list[Import]) -> list[str]:
    out = []
    for i in found:
        a, b = wing(i.importer), wing(i.imported)
        if a and b and a != b:
            out.append(f"{i.importer}:{i.line} imports {i.imported}: wings never import each other")
        elif layer(i.importer) == "suite" and b and b != "score" and not i.imported.endswith(".api"):
            out.append(f"{i.importer}:{i.line} imports {i.imported}: the suite takes a wing's api module only")
    return out


def string_imports(root: Path = imports.SRC) -> list[str]:
    """Calls that import a module named by a string (importlib.import_module, __import__), outside the root."""
    out = []
    for name, path in imports.modules(root).items():
        if name == "ragscore":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = ast.unparse(node.func)
                if func in ("importlib.import_module", "import_module", "__import__"):
                    out.append(f"{name}:{node.lineno}: {func}(...)")
    return out


@pytest.fixture(scope="module")
def found() -> list[Import]:
    return imports.imports()


def test_every_module_has_a_layer() -> None:
    for module in imports.modules():
        layer(module)


def test_no_import_reaches_a_higher_layer(found: list[Import]) -> None:
    assert upward(found) == []


def test_wings_never_import_each_other(found: list[Import]) -> None:
    assert across_wings(found) == []


def test_no_module_cycles(found: list[Import]) -> None:
    assert imports.cycles((i.importer, i.imported) for i in found) == []


def test_no_import_by_name_but_the_package_root() -> None:
    assert string_imports() == []


def test_every_wing_has_its_api_module() -> None:
    for name in WINGS:
        assert (imports.SRC / "ragscore" / name / "api.py").is_file(), name


# --- the rules catch what they are for: each one on a planted breach ----------------------------

def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    """Copy the package and add or replace ``files`` (path under ragscore/ -> text)."""
    import shutil

    root = tmp_path / "src"
    shutil.copytree(imports.SRC / "ragscore", root / "ragscore", ignore=shutil.ignore_patterns("__pycache__"))
    for relative, text in files.items():
        path = root / "ragscore" / relative
        path.write_text(path.read_text(encoding="utf-8") + text if path.exists() else text, encoding="utf-8")
    return root


def test_a_planted_upward_import_is_caught(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"loaders/gold.py": "\n\ndef _planted() -> None:\n    from ragscore.reports import html\n"})
    breaches = upward(imports.imports(root))
    assert len(breaches) == 1 and re.match(r"ragscore\.loaders\.gold:\d+ \(loaders\) imports ragscore\.reports\.html "
                                           r"\(reports\)", breaches[0])


def test_a_planted_type_only_import_is_caught(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"metrics/answer.py": "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                                  "    from ragscore.evaluate import score_traces\n"})
    assert [b.split(" imports ")[1] for b in upward(imports.imports(root))] == ["ragscore.evaluate (engine)"]


def test_a_planted_cycle_is_caught(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"quoting.py": "\n\ndef _planted() -> None:\n    from ragscore import errors\n"})
    assert ["ragscore.errors", "ragscore.quoting"] in imports.cycles((i.importer, i.imported)
                                                                     for i in imports.imports(root))


def test_a_planted_cross_wing_import_is_caught(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"trec/report.py": "\n\ndef _planted() -> None:\n    from ragscore.monitoring import windows\n"})
    breaches = across_wings(imports.imports(root))
    assert len(breaches) == 1 and "ragscore.monitoring.windows: wings never import each other" in breaches[0]
    root = _plant(tmp_path / "b", {"suite/run.py": "\n\ndef _planted() -> None:\n    from ragscore.trec import files\n"})
    assert [b.split(": ", 1)[1] for b in across_wings(imports.imports(root))] == [
        "the suite takes a wing's api module only"]
    # Score's api.py is a wing too: no other wing imports it, nor does it import one.
    root = _plant(tmp_path / "c", {"api.py": "\n\ndef _planted() -> None:\n    from ragscore.comparing import paired\n",
                                   "monitoring/report.py": "\n\ndef _planted() -> None:\n    from ragscore import api\n"})
    assert sorted(b.split(" imports ")[1] for b in across_wings(imports.imports(root))) == [
        "ragscore.api: wings never import each other", "ragscore.comparing.paired: wings never import each other"]


def test_a_planted_string_import_is_caught(tmp_path: Path) -> None:
    root = _plant(tmp_path, {"reports/html.py": "\n\ndef _planted() -> object:\n    import importlib\n\n"
                                                "    return importlib.import_module('ragscore.api')\n"})
    assert [b.split(":")[0] for b in string_imports(root)] == ["ragscore.reports.html"]


@pytest.mark.parametrize(("source", "expected"), [
    ("from ragscore.reports.reasons import reason", {"ragscore.reports.reasons"}),
    ("def f():\n    import ragscore.cli.common", {"ragscore.cli.common"}),
    ("from ..metrics import text", {"ragscore.metrics.text"}),
    ("from ..metrics import METRICS, text", {"ragscore.metrics", "ragscore.metrics.text"}),
    ("from . import gold", {"ragscore.loaders.gold"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ragscore.api import Run", {"ragscore.api"}),
    ("import json\nfrom typing import Any", set()),
])
def test_imports_are_read_in_every_form(tmp_path: Path, source: str, expected: set[str]) -> None:
    root = _plant(tmp_path, {"loaders/probe.py": source})
    assert {i.imported for i in imports.imports(root) if i.importer == "ragscore.loaders.probe"} == expected
