"""Entity linking: hits@K and MRR over the ranked candidates, and NIL detection.

Definitions (also in docs/commands/link.md):

- Candidates are ranked by score, highest first; equal scores keep their order in the file
  (a stable sort). A kb id listed more than once counts once, at its highest score (of equal
  highest scores, the first listed): its other entries are ignored and take no place.
- A score is a JSON number within the range of a double (an integer too large for a float is
  an input error at its line, as ``1e999`` is).
- hits@K and MRR are computed over the gold mentions that have a kb id (NIL mentions, whose
  ``kb_id`` is null, are left out of both). hits@K: the gold kb id is among the top K
  candidates; MRR: the mean of 1 / rank of the gold kb id, 0 when it is not a candidate. A
  prediction flagged ``nil: true`` answered "no entity", so it ranks nothing: a miss for a
  mention that has a kb id. With no non-NIL mention, hits@K and MRR are undefined (null).
- NIL detection treats ``nil: true`` as the positive prediction and a null gold kb id as the
  positive class: precision = correct NIL flags / NIL flags, recall = correct NIL flags /
  NIL mentions, an empty denominator gives 0; when neither side has a NIL, all three are
  undefined (null).
- A missing prediction has no candidate and no NIL flag.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragscore.loaders.jsonl import describe
from ragscore.stages.rates import prf
from ragscore.stages.records import Fields, Joined

DEFAULT_CUTOFFS = (1, 3, 5, 10)


@dataclass(frozen=True, slots=True)
class Mention:
    """A gold mention and the kb id it refers to (None: NIL, no entity in the knowledge base)."""

    mention: str
    kb_id: str | None


@dataclass(frozen=True, slots=True)
class Prediction:
    """A linker's output: candidates in file order and its NIL flag."""

    candidates: tuple[tuple[str, float], ...]
    nil: bool = False


def parse_gold(f: Fields) -> Mention:
    """Read a gold line: ``{"id", "mention", "kb_id"}`` (``kb_id`` null for NIL)."""
    mention = f.string("mention", f.require("mention", "a string"))
    kb_id = f.require("kb_id", "a string, an integer, or null for NIL")
    return Mention(mention, None if kb_id is None else f.ident("kb_id", kb_id))


def parse_pred(f: Fields) -> Prediction:
    """Read a prediction line: ``{"id", "candidates": [{"kb_id", "score"}], "nil"}`` (``nil`` defaults to false)."""
    candidates = []
    for n, item in enumerate(f.items("candidates", f.require("candidates", "a list of {kb_id, score}"))):
        where = f"candidates[{n}]"
        for key in ("kb_id", "score"):
            if key not in item:
                raise f.fail("candidates", f'missing "{key}" in {where} (each candidate is {{"kb_id", "score"}})')
        kb_id = f.ident("candidates", item["kb_id"], f"{where}.kb_id")
        score = item["score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise f.fail("candidates", f"expected {where}.score to be a number, got {describe(score)}")
        try:
            value = float(score)
        except OverflowError:  # an integer beyond a double's range (a float that large fails in the JSON reader)
            raise f.fail("candidates", f"expected {where}.score to be a number within a double's range "
                                       f"(at most 1.8e308 in size), got {describe(score)}") from None
        candidates.append((kb_id, value))
    nil = f.obj.get("nil", False)
    if not isinstance(nil, bool):
        raise f.fail("nil", f'expected "nil" to be true or false, got {describe(nil)}')
    return Prediction(tuple(candidates), nil)


def ranking(candidates: Sequence[tuple[str, float]]) -> list[str]:
    """Rank kb ids by score, highest first, ties in file order, each id once (at its highest score)."""
    ranked = sorted(candidates, key=lambda c: -c[1])  # sorted() is stable: ties keep file order
    return list(dict.fromkeys(kb_id for kb_id, _ in ranked))


def rank_of(gold: str, pred: Prediction) -> int | None:
    """Return the 1-based rank of the gold kb id among the candidates; None when absent or NIL-flagged."""
    if pred.nil:
        return None
    ranked = ranking(pred.candidates)
    return ranked.index(gold) + 1 if gold in ranked else None


@dataclass(slots=True)
class LinkResult:
    """Sufficient statistics of a run, which add up across mentions."""

    cutoffs: tuple[int, ...]
    linked: int = 0  # gold mentions with a kb id: the denominator of hits@K and MRR
    hits: dict[int, int] = field(default_factory=dict)
    ranks: dict[int, int] = field(default_factory=dict)  # rank -> mentions whose gold kb id has it
    nil_gold: int = 0
    nil_predicted: int = 0
    nil_correct: int = 0

    def add(self, gold: Mention, pred: Prediction) -> None:
        """Count one mention."""
        if pred.nil:
            self.nil_predicted += 1
        if gold.kb_id is None:
            self.nil_gold += 1
            self.nil_correct += pred.nil
            return
        self.linked += 1
        rank = rank_of(gold.kb_id, pred)
        if rank is not None:
            self.ranks[rank] = self.ranks.get(rank, 0) + 1
            for k in self.cutoffs:
                if rank <= k:
                    self.hits[k] = self.hits.get(k, 0) + 1

    def metrics(self) -> dict[str, float | None]:
        """Return hits@K per cutoff, MRR and the NIL-detection scores, by metric name."""
        out: dict[str, float | None] = {
            f"hits@{k}": self.hits.get(k, 0) / self.linked if self.linked else None for k in self.cutoffs
        }
        reciprocal = math.fsum(n / rank for rank, n in sorted(self.ranks.items()))  # summed exactly: no order effect
        out["mrr"] = reciprocal / self.linked if self.linked else None
        if self.nil_gold or self.nil_predicted:
            precision, recall, f1 = prf(self.nil_correct, self.nil_predicted, self.nil_gold)
            out.update(nil_precision=precision, nil_recall=recall, nil_f1=f1)
        else:
            out.update(nil_precision=None, nil_recall=None, nil_f1=None)
        return out

    def nil_counts(self) -> dict[str, int]:
        """Return the NIL confusion counts."""
        return {
            "gold": self.nil_gold,
            "predicted": self.nil_predicted,
            "correct": self.nil_correct,
            "linked_mentions": self.linked,
        }


NO_PREDICTION = Prediction(())


def score_link(joined: Joined[Mention, Prediction], cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS) -> LinkResult:
    """Score every gold mention; a missing prediction has no candidate and no NIL flag."""
    result = LinkResult(cutoffs)
    for _, gold, pred in joined.pairs:
        result.add(gold, pred or NO_PREDICTION)
    return result
