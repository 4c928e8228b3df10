"""Pipeline stage scorers: entity extraction (ner), type classification (classify), entity linking (link).

Each stage reads a gold file and a prediction file joined by ``id`` (``records``), computes its
metrics as pure functions (``ner``, ``classify``, ``link``), and reports through the shared
stage document (``document``) in every format the main scorer has. ``api`` is the wing's entry:
``ner``, ``classify`` and ``link`` from Python, and ``STAGES``, the three by name.
"""
