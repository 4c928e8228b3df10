"""Confidence intervals for every metric: Wilson for rates, a Poisson bootstrap for means.

A rate (a count over a count) gets the Wilson score interval. A mean of per-question values gets
the percentile interval of a seeded Poisson bootstrap, whose weights come from each question's
qid, or, when resampling would be slow (many questions), the normal approximation; the report
names the method of each. Both are computed from exact summaries of the values
(``metrics.moments``), so a run split between processes or machines gives the same bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ragscore.metrics.answer import CITING, AnswerTally, answer_metric_names
from ragscore.metrics.families import Totals, enabled
from ragscore.metrics.moments import Moments, normal_interval, poisson_interval, summarise
from ragscore.metrics.names import lookup
from ragscore.metrics.repeats import RepeatTotals, column_names
from ragscore.metrics.sessions import Session
from ragscore.metrics.stats import wilson_interval
from ragscore.results import Evaluation
from ragscore.settings import Settings

WILSON: Final = "wilson"
POISSON_BOOTSTRAP: Final = "poisson_bootstrap"
BOOTSTRAP: Final = "bootstrap"  # compare's paired bootstrap (comparison.py), which resamples whole questions
NORMAL: Final = "normal"

Interval = tuple[float, float, str] | None  # (low, high, method); None when the metric is undefined


def mean_interval(m: Moments, settings: Settings) -> Interval:
    """Give a mean's interval: the Poisson bootstrap when its replicates were kept (few
    questions, see ``metrics.moments.summarise``), else the normal approximation."""
    if not m.n:
        return None
    if m.replicates is not None:
        return *poisson_interval(m, settings.confidence), POISSON_BOOTSTRAP
    return *normal_interval(m, settings.confidence), NORMAL


def _rate_interval(successes: int, trials: int, confidence: float) -> Interval:
    if not trials:
        return None
    low, high = wilson_interval(successes, trials, confidence)
    return low, high, WILSON


def compute_intervals(ev: Evaluation) -> dict[str, Interval]:
    """Give each metric of a run that has one its interval, in the order of the metrics."""
    out = intervals_of(ev.settings, ev.tally, ev.columns, ev.repeats, not ev.tally.cites_nothing, ev.answer_moments)
    for name, score in ev.scores.items():  # scores from other evaluators: means
        out[name] = mean_interval(score.values, ev.settings)
    if ev.sessions is not None:
        out.update(session_intervals(ev.sessions, ev.settings))
    return out


def session_intervals(judged: Sequence[Session], settings: Settings) -> dict[str, Interval]:
    """The intervals of the session metrics, over sessions (each one independent of the others): Wilson for the
    share of sessions that passed, else a mean's, its bootstrap weights drawn by session."""
    def mean_of(values: list[tuple[str, float]]) -> Interval:
        if not values:
            return None
        keys, column = zip(*values, strict=True)
        return mean_interval(summarise([column], (True,), keys, settings.seed, settings.bootstrap)[0], settings)

    out: dict[str, Interval] = {}
    if settings.sampled:
        out["session_pass_rate"] = mean_of([(s.key, s.share) for s in judged])
    else:
        out["session_pass_rate"] = _rate_interval(sum(s.first_error is None for s in judged), len(judged),
                                                  settings.confidence)
    out["turns_to_first_error"] = mean_of([(s.key, float(s.first_error)) for s in judged if s.first_error is not None])
    for index, k in enumerate(settings.pass_k if settings.sampled else ()):
        out[f"session_pass^{k}"] = mean_of([(s.key, v) for s in judged if (v := s.pass_k[index]) is not None])
    return out


def intervals_of(
    settings: Settings, tally: AnswerTally, family_totals: Sequence[Totals], repeats: RepeatTotals | None = None,
    cites: bool = True, answer_moments: Sequence[Moments] | None = None,
) -> dict[str, Interval]:
    """Give each metric of these totals (a run, or a slice of it) its interval; ``cites`` says
    whether the run cites anything (if not, the metrics that need citations have none).

    With repeated samples every answer metric is a mean of per-question means, and so is each
    repeat metric: all get a mean's interval (resampling questions, never samples).
    """
    out: dict[str, Interval] = {}
    if repeats is not None:
        names = column_names(settings, answer_metric_names(settings))
        for name, column in zip(names, repeats.columns, strict=True):
            out[name] = mean_interval(column, settings) if cites or name not in (*CITING, "precision") else None
    else:
        rates = tally.rates(settings, cites)
        for name in tally.metrics(settings, cites):
            if not cites and name in CITING:
                out[name] = None
            elif name in rates and answer_moments is not None:  # sessions: the questions' values, by session
                names = answer_metric_names(settings)
                column = answer_moments[-1 if name == "precision" and not cites else names.index(name)]
                out[name] = mean_interval(column, settings)
            elif name in rates:
                out[name] = _rate_interval(*rates[name], settings.confidence)
            else:  # citation_precision: a mean of per-question shares
                out[name] = mean_interval(tally.shares, settings)
    for family, totals in zip(enabled(settings.families), family_totals, strict=True):
        for i, name in enumerate(family.names(settings)):
            spec = lookup(name)
            kind = spec.kind if spec else "mean"
            if kind in ("count", "corpus"):
                continue
            column = totals.columns[i]
            if kind == "rate" and not settings.sampled and settings.session is None:
                # A column of 0/1 values: its sum is the count, exactly.
                out[name] = _rate_interval(round(column.fsum), column.n, settings.confidence)
            else:
                out[name] = mean_interval(column, settings)
    return out
