"""Suggestions for a misspelt name: the nearest candidate, and the "did you mean" clause that offers it."""

from __future__ import annotations

import difflib

from ragscore.quoting import quote


def closest(name: str, candidates: list[str], cutoff: float = 0.5) -> str | None:
    """Suggest the candidate nearest to a misspelt name (similarity at least ``cutoff``)."""
    matches = difflib.get_close_matches(name, candidates, n=1, cutoff=cutoff)
    return matches[0] if matches else None


def did_you_mean(name: str, candidates: list[str], template: str = "{}") -> str:
    """Return '; did you mean "x"?' for the nearest candidate (shown through ``template``), or ''."""
    hint = closest(name, candidates)
    return f"; did you mean {quote(template.format(hint))}?" if hint else ""
