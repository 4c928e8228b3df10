"""What the stage commands say on standard error about the joining of gold and predictions."""

from __future__ import annotations

from ragscore.reports.console import plural


def _listed(ids: list[str], limit: int = 5) -> str:
    return ", ".join(ids) if len(ids) <= limit else "e.g. " + ", ".join(ids[:limit])


def join_notes(missing: list[str], unknown: list[str], duplicates: list[str]) -> list[str]:
    """Summarise missing, unknown and replaced predictions, one line each (none when all is well).

    The ids come from the input: control characters in them show as '?'.
    """
    from ragscore.reports.common import clean

    notes = []
    if missing:
        notes.append(f"{plural(len(missing), 'gold item has', 'gold items have')} no prediction "
                     f"(scored as an empty prediction): {_listed(missing)}")
    if unknown:
        notes.append(f"{plural(len(unknown), 'prediction line has', 'prediction lines have')} "
                     f"an id not in the gold file (ignored): {_listed(unknown)}")
    if duplicates:
        notes.append(f"{plural(len(duplicates), 'prediction line was', 'prediction lines were')} "
                     f"replaced by a later line with the same id (the last counts): {_listed(duplicates)}")
    return [clean(note) for note in notes]
