"""Suites: every scoring task of a pipeline run from one file, one report over them, and a history.

``config`` reads the suite file (``ragscore.toml`` or ``[tool.ragscore.suite]``) and checks every
task's keys; ``tasks`` runs one task through the Python API of its command and picks its key
figures; ``run`` runs them all and builds the suite's document; ``history`` appends a run to a
JSON Lines history and reads one back; ``dashboard`` turns a history into the dashboard's data.
``outcome`` holds what a run is apart from its reports, which ``report`` (text, JSON, Markdown,
JUnit), ``html`` and ``dashboard_report`` render. The suite calls each command through its wing's
``api`` module (and score's ``ragscore.api``) only.
"""
