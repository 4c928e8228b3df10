"""Render the report document as JSON (for jq and for machines)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ragscore.quoting import json_safe


def dumps_json(value: object, **options: Any) -> str:
    """JSON text as every report writes it: non-ASCII text readable, the control characters JSON would
    leave raw as \\uXXXX, no NaN."""
    return json_safe(json.dumps(value, ensure_ascii=False, allow_nan=False, **options))


def render_json(doc: dict[str, Any], *, questions: bool = True) -> Iterator[str]:
    """Render the document as indented JSON, one per-question entry per line, piece by piece.

    The per-question list can hold millions of entries, so it is streamed, and each entry is
    encoded on one line by the C encoder (``indent`` would fall back to the slow Python one).
    """
    keys = [key for key in doc if key != "questions" or questions]
    yield "{\n"
    for n, key in enumerate(keys):
        comma = "," if n < len(keys) - 1 else ""
        if key == "questions":
            yield '  "questions": ['
            empty = True
            for entry in doc[key]:
                yield ("\n    " if empty else ",\n    ") + dumps_json(entry)
                empty = False
            yield ("]" if empty else "\n  ]") + comma + "\n"
        else:
            nested = dumps_json(doc[key], indent=2).replace("\n", "\n  ")  # strings hold no raw newline
            yield f"  {dumps_json(key)}: {nested}{comma}\n"
    yield "}\n"
