"""The JSON Schema of the JSON report, shipped inside the package."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any, Final

SCHEMA_FILE: Final = "report.schema.json"


def schema_text() -> str:
    """Return the schema file's text as shipped."""
    return files("ragscore").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def load_schema() -> dict[str, Any]:
    """Load the schema as a JSON object."""
    schema: dict[str, Any] = json.loads(schema_text())
    return schema
