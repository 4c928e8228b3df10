"""Compare two runs on the same gold set: deltas with paired-bootstrap intervals and p-values,
an exact McNemar test on per-question correctness, Holm's correction, and regression gates.

Every metric with per-question values is a mean of those values over the questions it counts
(a rate is a mean of 0s and 1s), so one statistic serves them all: resample the questions, the
same ones for both runs, and take the mean of each run's values over the sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragscore.errors import InputError
from ragscore.evaluate import Evaluation
from ragscore.metrics.answer import PASSING_LABELS, Label, answer_metric_names, question_values
from ragscore.metrics.families import enabled
from ragscore.metrics.registry import Direction, lookup
from statistics import NormalDist

from ragscore.intervals import BOOTSTRAP, NORMAL
from ragscore.metrics.stats import holm, mcnemar_exact, paired_bootstrap, resampling_is_cheap, z_value
from ragscore.settings import Settings

@dataclass(frozen=True, slots=True)
class Run:
    """One run's per-question values by metric, and which questions it got right, by qid."""

    values: dict[str, dict[str, float | None]]  # qid -> metric -> value
    correct: dict[str, bool]
    metrics: dict[str, float | None]            # the run's reported values (counts included)


@dataclass(frozen=True, slots=True)
class Delta:
    """How one metric moved from the baseline to the candidate."""

    baseline: float | None
    candidate: float | None
    delta: float | None
    interval: tuple[float, float] | None
    p_value: float | None
    p_adjusted: float | None = None
    method: str | None = None  # "bootstrap" or "normal"; None when not tested


def run_from_evaluation(ev: Evaluation) -> Run:
    """Collect a scored run's per-question values (the evaluation must hold its rows)."""
    if ev.rows is None:
        raise ValueError("the evaluation was made without per-question rows")
    settings = ev.settings
    names = answer_metric_names(settings)
    families = list(enabled(settings.families))
    values: dict[str, dict[str, float | None]] = {}
    correct: dict[str, bool] = {}
    for row in ev.rows:
        per = dict(zip(names, question_values(row.outcome, row.answerable, settings)))
        for family, family_row in zip(families, row.family_rows):
            per.update(family.question_metrics(family_row, settings))
        values[row.qid] = per
        correct[row.qid] = row.outcome.label in PASSING_LABELS
    return Run(values, correct, ev.metrics())


def run_from_report(doc: Mapping[str, Any], source: str) -> Run:
    """Read a committed JSON report made with ``--per-question`` (every question listed)."""
    questions = doc.get("questions")
    total = doc.get("counts", {}).get("total") if isinstance(doc.get("counts"), dict) else None
    if not isinstance(questions, list) or len(questions) != total:
        raise InputError(source, "expected a JSON report made with --per-question (and not --only-failures)")
    values: dict[str, dict[str, float | None]] = {}
    correct: dict[str, bool] = {}
    for entry in questions:
        if not isinstance(entry, dict) or not isinstance(entry.get("metrics"), dict) or "qid" not in entry:
            raise InputError(source, "expected each question to have a qid, a label and metrics")
        values[str(entry["qid"])] = entry["metrics"]
        correct[str(entry["qid"])] = entry.get("label") in (Label.OK.value, Label.REFUSAL_OK.value)
    return Run(values, correct, dict(doc.get("metrics", {})))


def paired_normal(
    baseline: Sequence[float | None], candidate: Sequence[float | None], confidence: float
) -> tuple[tuple[float, float] | None, float | None]:
    """Approximate the paired change of two means over their counted questions (None: not counted).

    Each run's mean is a ratio (sum of values over questions counted); linearised, question i
    contributes z_i = (y_i - R x_i) / mean(x) to it, x_i = 1 when counted. The change's variance
    is that of the paired differences of z over n questions; interval and two-sided p-value are
    normal. None when a run counts no question.
    """
    n = len(baseline)
    if n < 2:
        return None, None  # no spread can be estimated from one question
    terms = []
    for values in (baseline, candidate):
        counted = [v is not None for v in values]
        x_bar = sum(counted) / n
        if not x_bar:
            return None, None
        ratio = math.fsum(v for v in values if v is not None) / sum(counted)
        terms.append([((v - ratio) if v is not None else 0.0) / x_bar for v in values])
    delta = _mean(candidate) - _mean(baseline)  # type: ignore[operator]  # both count a question
    diffs = [c - b for b, c in zip(*terms)]
    mean = math.fsum(diffs) / n
    variance = math.fsum((d - mean) ** 2 for d in diffs) / (n - 1)
    se = math.sqrt(variance / n)
    if se == 0:
        return (delta, delta), (1.0 if delta == 0 else 0.0)
    half = z_value(confidence) * se
    p_value = 2 * (1 - NormalDist().cdf(abs(delta) / se))
    return (delta - half, delta + half), min(1.0, p_value)


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


def compare_runs(baseline: Run, candidate: Run, qids: Sequence[str], settings: Settings) -> dict[str, Delta]:
    """Compare every metric both runs report; test those with per-question values."""
    n = len(qids)
    bootstrap = resampling_is_cheap(n, settings.bootstrap)
    deltas: dict[str, Delta] = {}
    for name, candidate_value in candidate.metrics.items():
        if name not in baseline.metrics:
            continue
        baseline_value = baseline.metrics[name]
        delta = None if baseline_value is None or candidate_value is None else candidate_value - baseline_value
        interval = p_value = None
        if all(name in candidate.values[q] and name in baseline.values.get(q, {}) for q in qids):
            # A question a metric does not count is None in its list; the mean skips it.
            base = [baseline.values[q][name] for q in qids]
            cand = [candidate.values[q][name] for q in qids]
            if not n:
                interval = p_value = None
            elif bootstrap:
                interval, p_value = paired_bootstrap(
                    base, cand, _mean, settings.confidence, settings.bootstrap, f"{settings.seed}:{name}"  # type: ignore[arg-type]
                )
            else:  # too many questions to resample in pure Python: the normal approximation
                interval, p_value = paired_normal(base, cand, settings.confidence)
        method = (BOOTSTRAP if bootstrap else NORMAL) if p_value is not None else None
        deltas[name] = Delta(baseline_value, candidate_value, delta, interval, p_value, method=method)
    tested = [name for name, d in deltas.items() if d.p_value is not None]
    adjusted = holm([deltas[name].p_value for name in tested])  # type: ignore[misc]
    for name, p in zip(tested, adjusted):
        d = deltas[name]
        deltas[name] = Delta(d.baseline, d.candidate, d.delta, d.interval, d.p_value, p, d.method)
    return deltas


@dataclass(frozen=True, slots=True)
class Mcnemar:
    """Per-question correctness (OK or REFUSAL_OK) that changed between the runs."""

    fixed: list[str]
    broken: list[str]
    p_value: float


def mcnemar(baseline: Run, candidate: Run, qids: Sequence[str]) -> Mcnemar:
    """Count the questions each run alone got right, and test them with the exact McNemar test."""
    fixed = [q for q in qids if candidate.correct[q] and not baseline.correct.get(q, False)]
    broken = [q for q in qids if baseline.correct.get(q, False) and not candidate.correct[q]]
    return Mcnemar(fixed, broken, mcnemar_exact(len(broken), len(fixed)))


@dataclass(frozen=True, slots=True)
class Regression:
    """A regression gate checked: the metric may not get worse by more than ``allowed``."""

    metric: str
    allowed: float
    worse_by: float | None   # how much worse the candidate is (negative: better)
    p_adjusted: float | None
    status: str              # "pass", "fail" or "skipped"


def check_regressions(
    deltas: Mapping[str, Delta], allowed: Mapping[str, float], require_significance: bool, confidence: float
) -> list[Regression]:
    """Check each regression gate: a drop (for lower-is-better metrics, a rise) beyond its bound fails."""
    out = []
    for metric, bound in allowed.items():
        d = deltas.get(metric)
        spec = lookup(metric)
        if d is None or d.delta is None:
            out.append(Regression(metric, bound, None, None, "skipped"))
            continue
        worse_by = -d.delta if spec is None or spec.direction is Direction.HIGHER else d.delta
        # A tolerance: 0.83 - 0.85 is 0.020000000000000018 in floats, and must not fail "0.02".
        failed = worse_by > bound + 1e-12 * max(1.0, abs(bound))
        if failed and require_significance and d.p_adjusted is not None:
            # Untested metrics (counts, corpus scores) keep the plain bound: they cannot be excused.
            failed = d.p_adjusted < 1 - confidence
        out.append(Regression(metric, bound, worse_by, d.p_adjusted, "fail" if failed else "pass"))
    return out
