"""A shields.io endpoint badge (``--badge PATH``): the verdict, or one metric coloured by its gate.

    {"schemaVersion": 1, "label": "ragscore", "message": "pass", "color": "brightgreen"}

shields.io draws it from the file's URL (``https://img.shields.io/endpoint?url=...``). A metric's message is its
value as the reports print it (four decimals; ``n/a`` when undefined), its colour its gate's status: pass
brightgreen, warn yellow, fail red, skipped lightgrey, no gate blue.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

from ragscore.errors import UsageError
from ragscore.quoting import quote
from ragscore.reports.common import fmt
from ragscore.suggest import did_you_mean

COLOURS: Final = {"pass": "brightgreen", "warn": "yellow", "fail": "red", "skipped": "lightgrey", None: "blue"}


def badge(label: str, message: str, color: str) -> Iterator[str]:
    """The badge's JSON, one object and a newline."""
    yield json.dumps({"schemaVersion": 1, "label": label, "message": message, "color": color},
                     ensure_ascii=False) + "\n"


def verdict_badge(passed: bool, label: str = "ragscore") -> Iterator[str]:
    """The verdict: pass (brightgreen) or fail (red)."""
    return badge(label, "pass" if passed else "fail", "brightgreen" if passed else "red")


def metric_badge(name: str, metrics: Mapping[str, Any], statuses: Mapping[str, str | None]) -> Iterator[str]:
    """One metric's value, coloured by its gate's status (``statuses``: the gated metrics' statuses)."""
    if name not in metrics:
        raise UsageError(f"--badge-metric: the report has no metric {quote(name)}"
                         + did_you_mean(name, list(metrics)))
    value = metrics[name]
    return badge(name, fmt(value) if isinstance(value, (int, float)) or value is None else str(value),
                 COLOURS.get(statuses.get(name), "blue"))


def gate_statuses(gates: Mapping[str, Mapping[str, Any]]) -> dict[str, str | None]:
    """Each gated metric's status, from a report's ``gates``."""
    return {name: gate.get("status") for name, gate in gates.items()}

