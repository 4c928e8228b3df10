"""The JSON Schemas of the JSON reports of score and monitor, shipped inside the package."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any, Final

SCHEMA_FILE: Final = "report.schema.json"
MONITOR_SCHEMA_FILE: Final = "monitoring/report.schema.json"


def schema_text(name: str = SCHEMA_FILE) -> str:
    """Return a schema file's text as shipped (the score report's by default)."""
    return files("ragscore").joinpath(*name.split("/")).read_text(encoding="utf-8")


def load_schema(name: str = SCHEMA_FILE) -> dict[str, Any]:
    """Load a schema as a JSON object (the score report's by default)."""
    schema: dict[str, Any] = json.loads(schema_text(name))
    return schema
