"""Render the report document as JSON (for jq and for machines)."""

from __future__ import annotations

import json
from typing import Any


def render_json(doc: dict[str, Any], *, questions: bool = True) -> str:
    """Render the document as indented JSON; drop the per-question list unless asked for."""
    if not questions and "questions" in doc:
        doc = {key: value for key, value in doc.items() if key != "questions"}
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
