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
# What each label says of a question, when its outcome's texts are not kept (a comparison's flipped questions).
LABEL_MEANINGS: Final[dict[str, str]] = {  # by label (a StrEnum: its value finds it too)
    Label.OK: "answered, citing a gold id, and the claim holds the gold claim",
    Label.REFUSAL_OK: "unanswerable and refused",
    Label.OVER_REFUSAL: "answerable but refused",
    Label.HALLUCINATION: "unanswerable but answered",
    Label.NO_CITATION_HIT: "no cited id is a gold citation (or one is not among the retrieved ids)",
    Label.CLAIM_MISMATCH: "cited a gold id, but the claim holds none of the gold claim",
    Label.FORBIDDEN: "the claim contains a forbidden substring",
    Label.MISSING_TRACE: "no trace for this question",
}
