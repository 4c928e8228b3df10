"""Compare two runs on the same gold set: deltas with paired-bootstrap intervals and p-values,
an exact McNemar test on per-question correctness, Holm's correction, and regression gates.

Every metric with per-question values is a mean of those values over the questions it counts
(a rate is a mean of 0s and 1s), so one statistic serves them all: resample the questions, the
same ones for both runs, and take the mean of each run's values over the sample. Where that
would be slow (many questions), the paired normal approximation needs only sums over the
questions (``PairSums``), which ``ragscore.comparing.paired`` gathers without holding every question.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from ragscore.errors import InputError
from ragscore.intervals import BOOTSTRAP, NORMAL
from ragscore.labels import LABEL_MEANINGS
from ragscore.metrics.answer import CITING, PASSING_LABELS, Label, answer_metric_names, outcome_values
from ragscore.metrics.families import enabled
from ragscore.metrics.names import direction_of, lookup
from ragscore.metrics.registry import Direction
from ragscore.metrics.repeats import repeat_metric_names
from ragscore.metrics.significance import TESTS, TestResult, differences, permutation
from ragscore.metrics.stats import (
    CORRECTIONS,
    PairSums,
    mcnemar_exact,
    paired_bootstrap,
    paired_normal,
    resampling_is_cheap,
)
from ragscore.quoting import quote
from ragscore.results import Evaluation
from ragscore.settings import Settings

Column = Sequence[float | None]  # one run's value of a metric per question (None: not counted)
Fraction = tuple[float, float]    # a question's count and denominator of a rate of counts


@dataclass(frozen=True, slots=True)
class Paired:
    """Two runs of the same gold set side by side: what the paired tests need.

    ``columns`` (each tested metric's values in both runs, question by question in gold order)
    is there only when resampling is cheap; ``sums`` always.
    """

    n: int
    sums: dict[str, PairSums]
    columns: Mapping[str, tuple[Column, Column]] | None
    fixed: list[str]   # qids right (OK or REFUSAL_OK) in the candidate only, in gold order
    broken: list[str]  # qids right in the baseline only
    # Rates of the runs' counts (the grounding family's): each question's (count, denominator) in both runs,
    # in gold order, when resampling is cheap.
    ratios: Mapping[str, tuple[Sequence[Fraction], Sequence[Fraction]]] | None = None
    # With sessions: the questions (indices into the columns) of each session; the tests resample and pair whole
    # sessions (a question without a session is one of its own).
    groups: tuple[tuple[int, ...], ...] | None = None
    # Each question whose correctness changed: its label in the baseline and in the candidate, and the candidate's
    # reason, by qid (a pull-request comment lists them).
    flips: Mapping[str, tuple[str, str, str]] | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """One run's per-question values by metric, and which questions it got right, by qid."""

    values: dict[str, dict[str, float | None]]  # qid -> metric -> value
    correct: dict[str, bool]
    metrics: dict[str, float | None]            # the run's reported values (counts included)
    source: str | None = None                   # the report it was read from (for errors)
    labels: dict[str, str] = field(default_factory=dict)  # qid -> its label


@dataclass(frozen=True, slots=True)
class Delta:
    """How one metric moved from the baseline to the candidate."""

    baseline: float | None
    candidate: float | None
    delta: float | None
    interval: tuple[float, float] | None
    p_value: float | None
    p_adjusted: float | None = None
    method: str | None = None  # "bootstrap" or "normal", or the test's (t, wilcoxon, ...); None when not tested
    test: TestResult | None = None  # a test of metrics.significance (compare --test), with its statistic and effect


def run_from_evaluation(ev: Evaluation) -> Run:
    """Collect a scored run's per-question values (the evaluation must hold its rows)."""
    if ev.rows is None:
        raise ValueError("the evaluation was made without per-question rows")
    settings = ev.settings
    names = answer_metric_names(settings)
    families = list(enabled(settings.families))
    values: dict[str, dict[str, float | None]] = {}
    correct: dict[str, bool] = {}
    labels: dict[str, str] = {}
    cites = not ev.tally.cites_nothing
    for row in ev.rows:
        if row.sampled is not None:  # means over the question's samples, then its repeat metrics
            per = dict(zip(names, row.sampled.answer, strict=True))
            # min_pass_rate is a least value, not a mean of per-question values: it is not tested
            per.update(zip(repeat_metric_names(settings)[:-1], row.sampled.repeats, strict=True))
            if not cites:  # each sample was judged by its citations: undefined, as for the run
                per.update(dict.fromkeys((*CITING, "precision")))
        else:
            per = dict(zip(names, outcome_values(row.outcome, row.answerable, settings, cites), strict=True))
        for family, family_row in zip(families, row.family_rows, strict=True):
            per.update(family.question_metrics(family_row, settings))
        for name in ev.scores:  # scores from other evaluators (None where the question has none)
            per[name] = row.scores.get(name)
        values[row.qid] = per
        correct[row.qid] = row.outcome.label in PASSING_LABELS
        labels[row.qid] = row.outcome.label.value
    return Run(values, correct, ev.metrics(), labels=labels)


def run_from_report(doc: Mapping[str, Any], source: str) -> Run:
    """Read a committed JSON report made with ``--per-question`` (every question listed).

    ``doc`` is one that ``ragscore.loaders.report.check_report`` passed (``load_report`` reads
    it so): every part read here is there, of its type, and each qid is listed once.
    """
    questions = doc.get("questions")
    if questions is None or len(questions) != doc["counts"]["total"]:
        raise InputError(source, "expected a JSON report made with --per-question (and not --only-failures)")
    values = {entry["qid"]: entry["metrics"] for entry in questions}
    correct = {entry["qid"]: entry["label"] in (Label.OK.value, Label.REFUSAL_OK.value) for entry in questions}
    return Run(values, correct, dict(doc["metrics"]), source, {entry["qid"]: entry["label"] for entry in questions})


def pair_runs(
    baseline: Run, candidate: Run, qids: Sequence[str], settings: Settings, keep_columns: bool = False
) -> Paired:
    """Line up two runs held question by question (``qids`` in gold order); ``keep_columns``: keep each
    metric's values however many questions there are (the tests other than the bootstrap need them).

    The baseline must list every question with every metric both runs report that the candidate
    has question by question: a ragscore report writes an undefined value as null, never leaves
    it out, so a gap is an error at its key rather than a metric quietly left untested.
    """
    # A rate of the run's counts (the grounding family's) is no mean of its questions' rates: without each
    # question's counts (a report lists its rates) it is compared untested.
    names = [name for name in candidate.metrics if name in baseline.metrics and not _of_counts(name) and all(
        name in candidate.values[q] for q in qids)]
    _check_baseline_holds(baseline, qids, names)
    columns = {name: ([baseline.values[q][name] for q in qids], [candidate.values[q][name] for q in qids])
               for name in names}
    fixed = [q for q in qids if candidate.correct[q] and not baseline.correct[q]]
    broken = [q for q in qids if baseline.correct[q] and not candidate.correct[q]]
    flips = {q: (baseline.labels.get(q, ""), candidate.labels.get(q, ""),
                 LABEL_MEANINGS.get(candidate.labels.get(q, ""), "")) for q in (*broken, *fixed)}
    return Paired(
        len(qids),
        {name: PairSums.of(*pair) for name, pair in columns.items()},
        columns if keep_columns or resampling_is_cheap(len(qids), settings.bootstrap) else None,
        fixed,
        broken,
        flips=flips,
    )


def session_differences(base: Sequence[float | None], cand: Sequence[float | None],
                        groups: Sequence[Sequence[int]]) -> list[float]:
    """Each session's mean difference candidate − baseline over its questions that both runs have a value for: the
    paired tests' units when the questions of a session are not independent."""
    out = []
    for group in groups:
        d = differences([base[i] for i in group], [cand[i] for i in group])
        if d:
            out.append(math.fsum(d) / len(d))
    return out


def _check_baseline_holds(baseline: Run, qids: Sequence[str], names: Sequence[str]) -> None:
    """Raise InputError at the first question of ``qids`` the baseline lacks, or lacks one of ``names`` for."""
    source = baseline.source or "baseline"
    for q in qids:
        values = baseline.values.get(q)
        if values is None:
            raise InputError(source, f"at questions: the gold set's qid {quote(q)} is not listed")
        for name in names:
            if name not in values:
                n = next(n for n, qid in enumerate(baseline.values) if qid == q)  # values keep the report's order
                raise InputError(source, f"at questions[{n}].metrics: missing {quote(name)}")


def _of_counts(name: str) -> bool:
    """Whether a metric is a rate of the run's counts over the questions, or a count (its questions' values do not
    average to it)."""
    spec = lookup(name)
    return spec is not None and (spec.family == "grounding" or spec.kind in ("count", "corpus"))


def _ratio(pairs: Sequence[Fraction]) -> float | None:
    """The rate of summed counts over summed denominators (None when nothing was counted)."""
    total = math.fsum(total for _, total in pairs)
    return math.fsum(count for count, _ in pairs) / total if total else None


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


def compare_runs(
    baseline: Mapping[str, float | None], candidate: Mapping[str, float | None], paired: Paired, settings: Settings,
    test: str = "bootstrap", correction: str = "holm",
) -> dict[str, Delta]:
    """Compare every metric both runs report; test those with per-question values (``test``: the
    paired bootstrap, or one of ``metrics.significance``'s on the questions both runs count), and
    correct the p-values across the metrics (``correction``: holm, bonferroni or none)."""
    deltas: dict[str, Delta] = {}
    for name, candidate_value in candidate.items():
        if name not in baseline:
            continue
        baseline_value = baseline[name]
        delta = None if baseline_value is None or candidate_value is None else candidate_value - baseline_value
        interval = p_value = None
        method = None
        result = None
        if paired.n and paired.ratios is not None and name in paired.ratios:
            # A rate of the run's counts: the questions resampled, the rate of the resample's sums (every test).
            base_pairs, cand_pairs = paired.ratios[name]
            interval, p_value = paired_bootstrap(base_pairs, cand_pairs, _ratio, settings.confidence,
                                                 settings.bootstrap, f"{settings.seed}:{name}", paired.groups)
            method = BOOTSTRAP
        elif paired.n and name in paired.sums and test != "bootstrap":
            assert paired.columns is not None  # pair_runs keeps them for these tests
            base, cand = paired.columns[name]
            d = differences(base, cand) if paired.groups is None else session_differences(base, cand, paired.groups)
            result = permutation(d, f"{settings.seed}:{name}") if test == "permutation" else TESTS[test](d)
            p_value = result.p_value
            method = f"{test} ({result.method})" if test in ("wilcoxon", "permutation") else test
        elif paired.n and name in paired.sums and paired.groups is not None and paired.columns is not None and (
                not resampling_is_cheap(paired.n, settings.bootstrap)):
            # Sessions, too many questions to resample in pure Python: a t test over the sessions' mean differences.
            base, cand = paired.columns[name]
            result = TESTS["t"](session_differences(base, cand, paired.groups))
            p_value, method = result.p_value, "t"
        elif paired.n and name in paired.sums:
            if paired.columns is not None:
                base, cand = paired.columns[name]
                interval, p_value = paired_bootstrap(
                    base, cand, _mean, settings.confidence, settings.bootstrap, f"{settings.seed}:{name}",
                    paired.groups,
                )
                method = BOOTSTRAP
            elif delta is not None:  # too many questions to resample in pure Python
                interval, p_value = paired_normal(paired.sums[name], delta, settings.confidence)
                method = NORMAL
        deltas[name] = Delta(baseline_value, candidate_value, delta, interval, p_value,
                             method=method if p_value is not None else None, test=result)
    tested = {name: d.p_value for name, d in deltas.items() if d.p_value is not None}
    adjusted = CORRECTIONS[correction](list(tested.values()))
    for name, p in zip(tested, adjusted, strict=True):
        deltas[name] = replace(deltas[name], p_adjusted=p)
    return deltas


@dataclass(frozen=True, slots=True)
class Mcnemar:
    """Per-question correctness (OK or REFUSAL_OK) that changed between the runs."""

    fixed: list[str]
    broken: list[str]
    p_value: float


def mcnemar(paired: Paired) -> Mcnemar:
    """Test the questions each run alone got right with the exact McNemar test."""
    return Mcnemar(paired.fixed, paired.broken, mcnemar_exact(len(paired.broken), len(paired.fixed)))


@dataclass(frozen=True, slots=True)
class Regression:
    """A regression gate checked: the metric may not get worse by more than ``allowed``."""

    metric: str
    allowed: float
    worse_by: float | None   # how much worse the candidate is (negative: better)
    p_adjusted: float | None
    status: str              # "pass", "fail" or "skipped"


class GatePower(NamedTuple):
    """What a comparison of this size can tell about a regression gate's metric."""

    pairs: int                 # questions both runs count
    detectable: float | None   # the change detected with 80% power at this size (metrics.power)
    needed: int | None         # the questions needed to detect the gate's bound


def regression_power(paired: Paired, allowed: Mapping[str, float], confidence: float) -> dict[str, GatePower]:
    """For each regression gate, the change its comparison can detect and the questions its bound
    needs, from the spread of the observed paired differences (None without per-question values)."""
    from ragscore.metrics.power import detectable, needed, spread_of_differences

    out = {}
    alpha = 1 - confidence
    for metric, bound in allowed.items():
        columns = paired.columns.get(metric) if paired.columns is not None else None
        if columns is None:
            out[metric] = GatePower(0, None, None)
            continue
        d = differences(*columns)
        sigma = spread_of_differences(d)
        count = needed(bound, sigma, alpha) if sigma and bound > 0 else None
        out[metric] = GatePower(len(d), detectable(sigma, len(d), alpha) if sigma else None,
                                None if count is None else math.ceil(count - 1e-9))
    return out


def check_regressions(
    deltas: Mapping[str, Delta], allowed: Mapping[str, float], require_significance: bool, confidence: float,
    directions: Mapping[str, Direction] | None = None,
) -> list[Regression]:
    """Check each regression gate: a drop (for lower-is-better metrics, a rise) beyond its bound fails.

    ``directions`` are those set by diagnosis rules, for metrics the registry does not know.
    """
    out = []
    for metric, bound in allowed.items():
        d = deltas.get(metric)
        if d is not None and d.baseline is not None and d.candidate is None:
            # The baseline had a value and the candidate has none (no answered question, no trace
            # at all): not a skipped gate, or a crashed pipeline would pass.
            out.append(Regression(metric, bound, None, None, "fail"))
            continue
        if d is None or d.delta is None:
            out.append(Regression(metric, bound, None, None, "skipped"))
            continue
        direction = (directions or {}).get(metric) or direction_of(metric)
        worse_by = -d.delta if direction is Direction.HIGHER else d.delta
        # A tolerance: 0.83 - 0.85 is 0.020000000000000018 in floats, and must not fail "0.02".
        failed = worse_by > bound + 1e-12 * max(1.0, abs(bound))
        if failed and require_significance and d.p_adjusted is not None:
            # Untested metrics (counts, corpus scores) keep the plain bound: they cannot be excused.
            failed = d.p_adjusted < 1 - confidence
            effect = d.test.effect if d.test is not None else None
            if failed and effect is not None:
                # A test of ranks or signs (wilcoxon, sign) is significant for the way most questions
                # moved, which may be an improvement while the mean got worse: it excuses no worsening
                # it did not find.
                failed = (effect < 0) if direction is Direction.HIGHER else (effect > 0)
        out.append(Regression(metric, bound, worse_by, d.p_adjusted, "fail" if failed else "pass"))
    return out
