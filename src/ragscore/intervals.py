"""Confidence intervals for every metric: Wilson for rates, a percentile bootstrap for means.

A rate (a count over a count) gets the Wilson score interval. A mean of per-question values gets
a seeded percentile bootstrap, or, when resampling would be slow (many questions), the normal
approximation; the report names the method of each. Values are resampled in sorted order, so
the result does not depend on how the questions were split between processes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from ragscore.evaluate import Evaluation
from ragscore.metrics.answer import AnswerTally
from ragscore.metrics.families import Columns, enabled
from ragscore.metrics.registry import lookup
from ragscore.metrics.stats import bootstrap_mean_interval, normal_mean_interval, resampling_is_cheap, wilson_interval
from ragscore.settings import Settings

WILSON: Final = "wilson"
BOOTSTRAP: Final = "bootstrap"
NORMAL: Final = "normal"

Interval = tuple[float, float, str] | None  # (low, high, method); None when the metric is undefined


def mean_interval(name: str, values: Sequence[float], settings: Settings, resample: bool = True) -> Interval:
    """Give a mean's interval: a seeded bootstrap, or the normal approximation for many values.

    ``resample`` False asks for the normal approximation whatever the size: the slices of a
    field share one resampling budget (see ``slices``).
    """
    if not values:
        return None
    if resample and resampling_is_cheap(len(values), settings.bootstrap):
        ordered = sorted(values)  # resampled in sorted order: the same however the run was split
        low, high = bootstrap_mean_interval(ordered, settings.confidence, settings.bootstrap, f"{settings.seed}:{name}")
        return low, high, BOOTSTRAP
    low, high = normal_mean_interval(values, settings.confidence)  # fsum sums: the order does not matter
    return low, high, NORMAL


def _rate_interval(successes: int, trials: int, confidence: float) -> Interval:
    if not trials:
        return None
    low, high = wilson_interval(successes, trials, confidence)
    return low, high, WILSON


def compute_intervals(ev: Evaluation) -> dict[str, Interval]:
    """Give each metric of a run that has one its interval, in the order of the metrics."""
    out = intervals_of(ev.settings, ev.tally, ev.columns)
    for name, score in ev.scores.items():  # scores from other evaluators: means
        out[name] = mean_interval(name, score.values, ev.settings)
    return out


def intervals_of(
    settings: Settings, tally: AnswerTally, family_columns: Sequence[Columns], resample: bool = True
) -> dict[str, Interval]:
    """Give each metric of these totals (a run, or a slice of it) its interval (``resample``: see mean_interval)."""
    out: dict[str, Interval] = {}
    rates = tally.rates(settings)
    for name in tally.metrics(settings):
        if name in rates:
            out[name] = _rate_interval(*rates[name], settings.confidence)
        else:  # citation_precision: a mean of per-question shares
            out[name] = mean_interval(name, tally.shares, settings, resample)
    for family, columns in zip(enabled(settings.families), family_columns, strict=True):
        for i, name in enumerate(family.names(settings)):
            spec = lookup(name)
            kind = spec.kind if spec else "mean"
            if kind in ("count", "corpus"):
                continue
            column = columns.values[i :: columns.width]
            if kind == "rate":
                # A column of 0/1 values: its sum is the count, exactly (fsum of small integers).
                out[name] = _rate_interval(round(math.fsum(column)), columns.counted, settings.confidence)
            else:
                out[name] = mean_interval(name, column, settings, resample)
    return out
