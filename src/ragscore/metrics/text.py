"""The text normalisation and containment rule of the answer metrics, which live in ``ragscore.text``.

They moved there so that the gold loader need not import the metrics; this module re-exports them.
"""

from __future__ import annotations

from ragscore.text import MIN_NEEDLE, Rule, claim_phrases, containment_rule, normalise

__all__ = ["MIN_NEEDLE", "Rule", "claim_phrases", "containment_rule", "normalise"]
