"""How a score from another evaluator may be spelt: one rule for ``--scores``, a trace's "scores" and gates.

A score's name becomes a metric's name: gates name it, and reports print it, at the start of a
line too (where "::" would start a GitHub workflow command). So it is letters, digits and
``_ . @ : / -``, starting with a letter, digit or ``_``. An ``@`` may be followed by anything
(``judge@v2``, ``judge@5``). Which names ragscore keeps for its own metrics is the registry's
part of the rule (``ragscore.metrics.names.score_name_problem``, which checks this first).
The ``--scores`` loader checks the spelling itself, to name the line and the character.
"""

from __future__ import annotations

import re
from typing import Final

CHARACTERS: Final = "letters, digits and _ . @ : / -"
FIRST: Final = "a letter, digit or _"
PATTERN: Final = r"[A-Za-z0-9_][A-Za-z0-9_.@:/-]*"
# The report schema's pattern for metric names: a score's spelling, or pass^K and session_pass^K (repeated samples).
METRIC_PATTERN: Final = PATTERN + r"|(?:session_)?pass\^[1-9][0-9]*"
_NAME_RE: Final = re.compile(PATTERN)
_CHARACTER_RE: Final = re.compile(r"[A-Za-z0-9_.@:/-]")


def well_spelt(name: str) -> bool:
    """Tell whether ``name`` follows the spelling of a score name."""
    return _NAME_RE.fullmatch(name) is not None


def spelling_fault(name: str) -> int | None:
    """Return where ``name`` breaks the spelling, the index of the first character that may not
    stand there (0 for an empty name), or None when it is well spelt."""
    if well_spelt(name):
        return None
    if not name or _NAME_RE.match(name[0]) is None:
        return 0  # empty, or a character that cannot start a name
    return next(index for index, char in enumerate(name) if _CHARACTER_RE.fullmatch(char) is None)


def may_hold(char: str) -> bool:
    """Tell whether a score name may hold ``char`` (past its first character)."""
    return _CHARACTER_RE.fullmatch(char) is not None
