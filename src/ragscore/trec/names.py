"""trec_eval's measures under ragscore's names: what the trec reports call them and what gates may name.

A measure ``score`` also computes takes score's name (its retrieval family's): ``P_10`` is
``precision@10``, ``recall_10`` ``recall@10``, ``success_10`` ``hit@10``, ``ndcg_cut_10``
``ndcg@10``, ``map_cut_10`` ``map@10``, ``recip_rank`` ``mrr``, ``Rprec`` ``rprec``; ``map``,
``bpref`` and ``ndcg`` keep theirs. Every other measure keeps trec_eval's name (``num_ret``,
``gm_map``, ``iprec_at_recall_0.10``, ``set_F``, ``infAP``; ``iprec_at_recall_nearest_0.10`` for
trec_eval 10's rounding). A gate may name a measure either way; the report says both.

Two counts come with every run: ``missing`` (judged queries the run ranks nothing for) and
``unjudged`` (queries it ranks that no judgment names), both lower-is-better.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ragscore.metrics.registry import Direction

# trec_eval's measures with a cutoff -> score's stem, and back.
CUT_STEMS: Final = {"P": "precision", "recall": "recall", "success": "hit", "ndcg_cut": "ndcg", "map_cut": "map"}
_SCORE_STEMS: Final = {ours: theirs for theirs, ours in CUT_STEMS.items()}
# trec_eval's measures without a parameter that score names otherwise (or alike).
PLAIN: Final = {"map": "map", "bpref": "bpref", "ndcg": "ndcg", "recip_rank": "mrr", "Rprec": "rprec"}
_SCORE_PLAIN: Final = {ours: theirs for theirs, ours in PLAIN.items()}
# trec_eval's measures kept under their own name.
OWN: Final = ("num_ret", "num_rel", "num_rel_ret", "gm_map", "set_P", "set_recall", "set_F", "infAP")
IPREC: Final = ("iprec_at_recall", "iprec_at_recall_nearest")
COUNTS: Final = ("missing", "unjudged")
SUMS: Final = ("num_ret", "num_rel", "num_rel_ret")

_CUT_RE: Final = re.compile(r"^(?P<stem>P|recall|success|ndcg_cut|map_cut)_(?P<k>[1-9][0-9]*)$")
_SCORE_RE: Final = re.compile(r"^(?P<stem>precision|recall|hit|ndcg|map)@(?P<k>[1-9][0-9]*)$")
_IPREC_RE: Final = re.compile(r"^(?P<stem>iprec_at_recall(?:_nearest)?)_(?P<level>[01]\.[0-9]{2})$")

MEANINGS: Final = {
    "num_ret": "documents retrieved, summed over the queries",
    "num_rel": "documents judged relevant, summed over the queries",
    "num_rel_ret": "relevant documents retrieved, summed over the queries",
    "map": "mean average precision over all relevant documents",
    "gm_map": "geometric mean of the queries' average precision (each floored at 0.00001)",
    "Rprec": "precision at R, the number of relevant documents",
    "bpref": "binary preference: relevant documents ranked above judged non-relevant ones",
    "recip_rank": "reciprocal rank of the first relevant document",
    "iprec_at_recall": "interpolated precision at recall {p} (a level as trec_eval 9 reads it)",
    "iprec_at_recall_nearest": "interpolated precision at recall {p} (a level rounded as trec_eval 10 does)",
    "P": "relevant documents in the top {p}, over {p}",
    "recall": "relevant documents in the top {p}, over all relevant documents",
    "ndcg": "normalised discounted cumulative gain of the whole ranking (gain = grade)",
    "ndcg_cut": "normalised discounted cumulative gain at {p} (gain = grade)",
    "map_cut": "average precision over the top {p}, over all relevant documents",
    "success": "share of queries with a relevant document in the top {p}",
    "set_P": "relevant documents retrieved, over documents retrieved",
    "set_recall": "relevant documents retrieved, over all relevant documents",
    "set_F": "harmonic mean of set_P and set_recall",
    "infAP": "inferred average precision (documents judged with a negative grade are pooled but unjudged)",
    "missing": "judged queries the run ranks nothing for (left out of the means; -c scores them 0)",
    "unjudged": "queries the run ranks that no judgment names (ignored, as trec_eval ignores them)",
}


@dataclass(frozen=True, slots=True)
class Named:
    """One metric of a trec report: its name, trec_eval's, and the measure and parameter behind it."""

    name: str                 # in the report and in gates
    trec: str | None          # as trec_eval prints it (None: one of ragscore's counts)
    measure: str              # trec_eval's measure (``P``, ``map``...) or "counts"
    param: float | None = None

    @property
    def summary(self) -> str:
        """How the queries' values make the run's: a "mean", a "sum", a geometric mean ("gm") or a "count"."""
        if self.measure == "counts":
            return "count"
        return "sum" if self.measure in SUMS else "gm" if self.measure == "gm_map" else "mean"

    @property
    def direction(self) -> Direction:
        """Which way the metric improves: lower for the counts, higher for every measure."""
        return Direction.LOWER if self.measure == "counts" else Direction.HIGHER

    @property
    def ranks(self) -> bool:
        """Tell whether a higher value means a better ranking (num_ret and num_rel only count documents)."""
        return self.measure not in ("num_ret", "num_rel")

    @property
    def unit(self) -> bool:
        """Tell whether the metric lies from 0 to 1 (every measure but the counts and the sums)."""
        return self.summary in ("mean", "gm")

    @property
    def meaning(self) -> str:
        """Say what the metric is, with trec_eval's name."""
        text = MEANINGS[self.name if self.measure == "counts" else self.measure]
        if self.param is not None:
            shown = f"{self.param:.2f}" if self.measure in IPREC else f"{int(self.param)}"
            text = text.format(p=shown)
        return text if self.trec is None else f"{text} (trec_eval {self.trec})"


def _param_text(measure: str, param: float) -> str:
    return f"{param:.2f}" if measure in IPREC else str(int(param))


def name_of(measure: str, printed: str, param: float | None = None) -> Named:
    """Name one line of trec_eval's output (``printed``, of ``measure``) as the trec report does."""
    if measure in IPREC:  # trec_eval prints both roundings alike; the report may hold both
        level = float(printed.rpartition("_")[2])
        shown = printed if measure == "iprec_at_recall" else f"iprec_at_recall_nearest_{printed.rpartition('_')[2]}"
        return Named(shown, printed, measure, level)
    if printed in PLAIN:
        return Named(PLAIN[printed], printed, measure)
    match = _CUT_RE.match(printed)
    if match is not None:
        return Named(f"{CUT_STEMS[match['stem']]}@{match['k']}", printed, measure, float(match["k"]))
    return Named(printed, printed, measure, param)


def resolve(name: str) -> Named | None:
    """Find the metric a gate names, by ragscore's name or by trec_eval's (None: no such measure).

    The parameter is the one trec_eval's ``-m`` takes: ``precision@10`` and ``P_10`` are ``P.10``.
    """
    if name in COUNTS:
        return Named(name, None, "counts")
    if name in _SCORE_PLAIN:
        return name_of(_SCORE_PLAIN[name], _SCORE_PLAIN[name])
    if name in PLAIN or name in OWN:
        return name_of(name, name)
    match = _SCORE_RE.match(name) or _CUT_RE.match(name)
    if match is not None:
        stem = _SCORE_STEMS.get(match["stem"], match["stem"]) if "@" in name else match["stem"]
        return name_of(stem, f"{stem}_{match['k']}", float(match["k"]))
    match = _IPREC_RE.match(name)
    if match is not None and float(match["level"]) <= 1:
        level = float(match["level"])
        return name_of(match["stem"], f"iprec_at_recall_{match['level']}", level)
    return None


def spellings(name: str) -> list[str]:
    """Name what a gate might have meant: every plain name, and each measure with a cutoff at the cutoff it gave."""
    k = re.search(r"[0-9]+$", name)
    cut = (k[0].lstrip("0") or "1") if k else "10"
    names = [*COUNTS, *PLAIN.values(), *PLAIN, *OWN]
    names += [f"{ours}@{cut}" for ours in _SCORE_STEMS] + [f"{theirs}_{cut}" for theirs in CUT_STEMS]
    names += [f"{stem}_{level}" for stem in IPREC for level in ("0.00", "0.10", "0.50", "1.00")]
    return list(dict.fromkeys(names))


def spec_of(named: Named) -> str:
    """Write the ``-m`` option that computes a metric (``ndcg_cut.10``; ``map``)."""
    if named.param is None:
        return named.measure
    return f"{named.measure}.{_param_text(named.measure, named.param)}"
