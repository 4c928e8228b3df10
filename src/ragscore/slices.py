"""Slices: every metric again for the questions that share a value of a gold field (``--by``).

A slice's totals are built from the per-question rows with the same tallies and family totals
as the whole run, so a slice's precision is computed exactly as the run's is. The work of a
field is linear in its questions: one pass groups them, and the bootstrap intervals of all its
slices together stay within the run's resampling budget (else each slice gets the normal
approximation), so that a small slice never costs a full set of resamples. A question weighs
the same in a slice's bootstrap replicates as in the run's (its weights come from its qid). A
field has at most MAX_SLICES values, and so do all the fields of a run together.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Final

from ragscore.errors import UsageError
from ragscore.gates import Gate, GateResult, Status, evaluate_gates
from ragscore.intervals import Interval, intervals_of, mean_interval
from ragscore.loaders.gold import NONE
from ragscore.metrics.answer import CITING, AnswerTally, answer_metric_names, claim_bit, outcome_values, pack
from ragscore.metrics.families import Columns, enabled, spread
from ragscore.metrics.moments import Moments, summarise
from ragscore.metrics.repeats import QuestionSamples, summarise_questions
from ragscore.metrics.sessions import bootstrap_key
from ragscore.metrics.stats import resampling_is_cheap
from ragscore.quoting import quote
from ragscore.results import Evaluation
from ragscore.settings import Settings

# Distinct values of one --by field. A slice costs a few kilobytes of report and memory whatever
# its size, so a field with a value per question (an id) would cost as much as a report per
# question: it is refused. Ten thousand slices make a JSON report of 15 MB (60 MB with every family).
MAX_SLICES: Final = 10_000


@dataclass(slots=True)
class Slice:
    """The questions of one slice, added up."""

    tally: AnswerTally = field(default_factory=AnswerTally)
    qids: list[str] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)  # citation shares ...
    share_qids: list[str] = field(default_factory=list)  # ... of these questions
    family_rows: list[list[Sequence[float]]] = field(default_factory=list)
    family_qids: list[list[str]] = field(default_factory=list)
    scores: dict[str, tuple[list[float], list[str]]] = field(default_factory=dict)  # external scores, by name
    sampled: list[QuestionSamples] = field(default_factory=list)  # repeated samples: each question's
    places: list[int] = field(default_factory=list)               # ... and its place in the gold set
    keys: list[str] = field(default_factory=list)  # each question's bootstrap key (its session's, with sessions)
    answers: list[tuple[float | None, ...]] = field(default_factory=list)  # with sessions: each answer metric's value

    @property
    def n(self) -> int:
        """Count the slice's questions."""
        return len(self.qids)


@dataclass(frozen=True, slots=True)
class SliceResult:
    """A slice's size, metrics, intervals and gates."""

    n: int
    metrics: dict[str, float | None]
    intervals: dict[str, Interval]
    gates: list[GateResult]
    small: bool  # fewer questions than min_n: its gates are skipped


def check_slice_count(path: str, labels: Iterable[str], before: int = 0) -> int:
    """Refuse a field with more than MAX_SLICES distinct values (an id, most likely), or more than
    MAX_SLICES slices with the ``before`` of the fields before it, before any slice is built; return its count."""
    distinct = len(set(labels))
    if distinct > MAX_SLICES:
        raise UsageError(f"--by {quote(path)}: {distinct:,} distinct values, more than the {MAX_SLICES:,} slices "
                         "a field may have (slice by a field that groups questions, such as a language or a topic)")
    if before + distinct > MAX_SLICES:
        raise UsageError(f"--by {quote(path)}: {distinct:,} distinct values, which with the {before:,} "
                         f"slice{'s' * (before != 1)} of the fields before it make more than the {MAX_SLICES:,} "
                         "slices a run may have")
    return distinct


def _moments_of(column: Sequence[float | None], keys: Sequence[str], settings: Settings) -> Moments:
    """A slice's values of one answer metric summarised (None: not counted), each weighed by its key."""
    present = [v is not None for v in column]
    return summarise([[v for v in column if v is not None]], (True,), list(compress(keys, present)), settings.seed,
                     settings.bootstrap)[0]


def _keys(qids: list[str], resample: bool) -> list[str] | None:
    """Give the qids to resample a slice by (None: the field's slices get the normal approximation)."""
    return qids if resample else None


def build_slices(
    ev: Evaluation, paths: Sequence[str], gates: Iterable[Gate], min_n: int
) -> dict[str, dict[str, SliceResult]]:
    """Group the questions by each path's labels; total, interval and gate each group."""
    settings = ev.settings
    families = list(enabled(settings.families))
    gates = tuple(gates)
    cites = not ev.tally.cites_nothing  # decided by the whole run, not by each slice
    # With sessions a question's bootstrap weights are its session's (as in the run's intervals): whole sessions
    # are resampled, and so are the answer rates (their Wilson intervals would take the turns as independent).
    session_of = {t.place: t.session for t in ev.turns} if ev.turns is not None else None
    total = 0
    for index, path in enumerate(paths):  # every field is counted before any slice is built
        total += check_slice_count(path, (label for row in ev.rows or () for label in row.slices[index]), total)
    out: dict[str, dict[str, SliceResult]] = {}
    for index, path in enumerate(paths):
        groups: dict[str, Slice] = {}
        for row in ev.rows or ():
            share = row.outcome.cite_share
            for label in row.slices[index]:
                group = groups.get(label)
                if group is None:
                    group = groups[label] = Slice(family_rows=[[] for _ in families],
                                                  family_qids=[[] for _ in families])
                group.qids.append(row.qid)
                key = row.qid
                if session_of is not None:
                    key = bootstrap_key(session_of.get(row.place), row.qid)
                    if row.sampled is None:
                        judged = outcome_values(row.outcome, row.answerable, settings, cites)
                        group.answers.append((*judged, judged[0]))  # then precision as the run counts it
                group.keys.append(key)
                group.tally.add_packed(pack(row.outcome, row.answerable)
                                       | claim_bit(row.outcome, row.answerable, settings))
                if row.sampled is not None:
                    group.sampled.append(row.sampled)
                    group.places.append(row.place)
                if share is not None:
                    group.shares.append(share)
                    group.share_qids.append(key)
                for rows, qids, family_row in zip(group.family_rows, group.family_qids, row.family_rows, strict=True):
                    if family_row is not None:
                        rows.append(family_row)
                        qids.append(key)
                for name, value in row.scores.items():
                    scored, qids = group.scores.setdefault(name, ([], []))
                    scored.append(value)
                    qids.append(key)
        # The slices of a field share the run's resampling budget: they bootstrap their means only
        # when all of them together stay within it, else each gets the normal approximation. So
        # a slice costs in proportion to its questions, never a fixed count of resamples.
        resample = resampling_is_cheap(sum(group.n for group in groups.values()), settings.bootstrap)
        seed, resamples = settings.seed, settings.bootstrap
        results = {}
        for label in sorted(groups, key=lambda value: (value == NONE, value)):
            group = groups[label]
            shares = summarise([group.shares], (True,), _keys(group.share_qids, resample), seed, resamples)
            group.tally.shares = shares[0]
            totals = []
            for family, rows, qids in zip(families, group.family_rows, group.family_qids, strict=True):
                c = Columns(family.width(settings))
                for family_row in rows:
                    c.values.extend(family_row)
                totals.append(c.totals(spread(family, settings), _keys(qids, resample), seed, resamples,
                                            family.undefined))
            repeats = None
            if settings.sampled:  # the answer metrics are means over each question's samples
                repeats = summarise_questions(group.sampled, group.qids, group.places, settings, resample,
                                              group.keys)
                metrics = repeats.metrics(settings, answer_metric_names(settings))
                if not cites:
                    metrics.update(dict.fromkeys((*CITING, "precision")))
            else:
                metrics = group.tally.metrics(settings, cites)
            for family, t in zip(families, totals, strict=True):
                metrics.update(family.summarise(t, settings))
            answer_moments = None
            if group.answers and resample:
                answer_moments = [_moments_of(column, group.keys, settings) for column in zip(*group.answers,
                                                                                            strict=True)]
            intervals = intervals_of(settings, group.tally, totals, repeats, cites, answer_moments)
            for name in ev.scores:  # scores from other evaluators, in the run's order
                values, qids = group.scores.get(name, ([], []))
                moments = summarise([values], (True,), _keys(qids, resample), seed, resamples)[0]
                metrics[name] = moments.mean()
                intervals[name] = mean_interval(moments, settings)
            metrics["missing"] = group.tally.missing
            small = group.n < min_n
            checked = evaluate_gates(gates, metrics, settings.strict)
            if small:
                checked = [GateResult(r.gate, r.value, Status.SKIPPED) for r in checked]
            results[label] = SliceResult(group.n, metrics, intervals, checked, small)
        out[path] = results
    return out
