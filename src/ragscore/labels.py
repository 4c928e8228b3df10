"""The label every question gets, and the order reports list them in (read by loaders and metrics alike)."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Label(StrEnum):
    """The one label each question gets; the first rule that applies, in this order."""

    MISSING_TRACE = "MISSING_TRACE"
    REFUSAL_OK = "REFUSAL_OK"
    HALLUCINATION = "HALLUCINATION"
    OVER_REFUSAL = "OVER_REFUSAL"
    FORBIDDEN = "FORBIDDEN"
    NO_CITATION_HIT = "NO_CITATION_HIT"
    CLAIM_MISMATCH = "CLAIM_MISMATCH"
    OK = "OK"


PASSING_LABELS: Final = frozenset({Label.OK, Label.REFUSAL_OK})
LABEL_ORDER: Final = (
    Label.OK,
    Label.REFUSAL_OK,
    Label.OVER_REFUSAL,
    Label.HALLUCINATION,
    Label.NO_CITATION_HIT,
    Label.CLAIM_MISMATCH,
    Label.FORBIDDEN,
    Label.MISSING_TRACE,
)
