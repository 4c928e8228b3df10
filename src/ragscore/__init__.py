"""ragscore: a deterministic, dependency-free scorer and CI gate for RAG pipelines."""

from __future__ import annotations

__version__ = "0.1.0"
