"""Pipeline stage scorers: entity extraction (ner), type classification (classify), entity linking (link).

Each stage reads a gold file and a prediction file joined by ``id`` (``records``), computes its
metrics as pure functions (``ner``, ``classify``, ``link``), and reports through the shared
stage document (``document``) in every format the main scorer has.
"""

from __future__ import annotations

STAGES = ("ner", "classify", "link")

__all__ = ["STAGES"]
