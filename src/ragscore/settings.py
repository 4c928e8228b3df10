"""The scoring settings (the ``[scoring]`` knobs) and the signature that records them."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ragscore import __version__
from ragscore.metrics.text import normalise

DEFAULT_REFUSAL_TOKENS = ("not in context",)


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting that changes a score; reports carry them as a signature."""

    refusal_tokens: tuple[str, ...] = DEFAULT_REFUSAL_TOKENS
    k: int = 5
    cutoffs: tuple[int, ...] = (1, 3, 5, 10)
    require_claim: bool = True
    scope_citations: bool = True
    strict: bool = False

    def refusal_forms(self) -> frozenset[str]:
        """Return the refusal tokens as a normalised, stripped claim must equal them."""
        return frozenset(normalise(t).strip() for t in self.refusal_tokens)

    def as_dict(self) -> dict[str, object]:
        """Return the settings as plain JSON data, in a fixed order."""
        return {
            "k": self.k,
            "cutoffs": list(self.cutoffs),
            "refusal_tokens": list(self.refusal_tokens),
            "require_claim": self.require_claim,
            "scope_citations": self.scope_citations,
            "strict": self.strict,
        }

    def signature(self) -> str:
        """Return one line naming the version and every setting, for reproducing a score."""
        yes = {True: "yes", False: "no"}
        return "|".join(
            [
                f"ragscore:{__version__}",
                f"k:{self.k}",
                "cutoffs:" + ",".join(map(str, self.cutoffs)),
                "refusal:" + json.dumps(list(self.refusal_tokens), ensure_ascii=False),
                f"require_claim:{yes[self.require_claim]}",
                f"scope_citations:{yes[self.scope_citations]}",
                f"strict:{yes[self.strict]}",
            ]
        )
