"""Score runs for the trec reports: trec_eval's measures under ragscore's names, and paired tests between runs.

Adapters over ``ragscore.trec.measures`` (whose output they reshape, never recompute): the
values are those ``ragscore trec`` prints. Paired tests are ``ragscore compare``'s
(``ragscore.comparison.compare_runs``): a paired bootstrap over the queries, seeded by metric,
or its normal approximation past two million resampled values, with Holm's correction across
the metrics of one comparison.

Which queries the tests pair: every judged query with ``-c`` (a run that ranks nothing for one
scores 0 there, as trec_eval scores it); without ``-c``, the judged queries at least one of the
runs ranks, each run counting only those it ranks (a query it does not rank is left out of its
mean, as trec_eval leaves it out). Either way the bootstrap's statistic on the queries as they
are is the run's reported value, so the tested change is the reported one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from ragscore.trec.files import Qrels, Run
from ragscore.trec.measures import ALL_TREC, MEASURES, Evaluated, Measure, evaluate, prepare
from ragscore.trec.names import COUNTS, Named, name_of
from ragscore.version import __version__

if TYPE_CHECKING:
    from ragscore.comparison import Delta

Chosen = list[tuple[Measure, tuple[float, ...]]]
Value = float | int
OFFICIAL: Final = ("official",)


@dataclass(frozen=True, slots=True)
class TrecSettings:
    """Every setting that changes a value, a test or a verdict of a trec report."""

    measures: tuple[str, ...] = OFFICIAL  # the -m options as given
    level: int = 1
    complete: bool = False
    max_docs: int | None = None
    confidence: float = 0.95  # of the paired tests (several runs)
    bootstrap: int = 1000
    seed: str = "0"

    def as_dict(self, compared: bool) -> dict[str, object]:
        """Return the settings as plain JSON data; the tests' only when runs are compared."""
        out: dict[str, object] = {"measures": list(self.measures), "level": self.level, "complete": self.complete,
                                  "max_docs": self.max_docs}
        if compared:
            out.update(confidence=self.confidence, bootstrap=self.bootstrap, seed=self.seed)
        return out

    def signature(self, compared: bool) -> str:
        """Name the version and every setting in one line (``-m`` options as JSON: they are text from the user)."""
        parts = [f"ragscore:{__version__}", "trec", "measures:" + _signed(list(self.measures)), f"level:{self.level}",
                 f"complete:{'yes' if self.complete else 'no'}", f"max_docs:{self.max_docs or 'all'}"]
        if compared:
            parts.append(f"ci:{self.confidence:g},bootstrap:{self.bootstrap},seed:{_signed(self.seed)}")
        return "|".join(parts)


def _signed(value: object) -> str:
    return json.dumps(value, ensure_ascii=False).replace("|", "\\u007c")


def with_gated(chosen: Chosen, needed: Iterable[Named]) -> Chosen:
    """Add the measures (and parameters) that gates read to the chosen ones, in trec_eval's order."""
    params = {m.name: p for m, p in chosen}
    for named in needed:
        if named.measure in ("counts", *params) and named.param is None:
            continue
        if named.param is None:
            params[named.measure] = MEASURES[named.measure].defaults
        else:
            params[named.measure] = tuple(sorted({*params.get(named.measure, ()), named.param}))
    order = {name: n for n, name in enumerate(ALL_TREC)}
    return [(MEASURES[name], params[name]) for name in sorted(params, key=order.__getitem__)]


def columns(chosen: Chosen, level: int) -> list[Named]:
    """Name every value the chosen measures give, in trec_eval's order (its summary after num_q)."""
    empty = prepare((), {}, level)
    return [name_of(m.name, printed) for m, params in chosen for printed, _ in m.values(empty, params)]


@dataclass(frozen=True, slots=True)
class Scored:
    """One run scored: trec_eval's evaluation, and its values by the report's names."""

    spec: str                    # the path as given
    sha256: str
    run_id: str
    evaluated: Evaluated
    columns: tuple[Named, ...]
    metrics: dict[str, Value]    # every column's summary, then the counts
    counts: dict[str, int]

    def value(self, qid: str, index: int) -> float | None:
        """Return the run's value of column ``index`` for a query (None: the run did not score it)."""
        row = self.evaluated.per_query.get(qid)
        return None if row is None else float(row[index][1])

    def query_metrics(self, qid: str) -> dict[str, Value] | None:
        """Return a query's values by name, as trec_eval's -q prints them (without gm_map); None if not scored."""
        row = self.evaluated.per_query.get(qid)
        if row is None:
            return None
        return {c.name: (int(v) if integer else float(v)) for c, (_, v, integer) in zip(self.columns, row, strict=True)
                if c.measure != "gm_map"}


def score_run(spec: str, qrels: Qrels, run: Run, chosen: Chosen, settings: TrecSettings) -> Scored:
    """Evaluate one run as ``ragscore trec`` does and name its values."""
    ev = evaluate(qrels.topics, run.topics, run.name, chosen, settings.level, settings.complete)
    named = columns(chosen, settings.level)
    metrics: dict[str, Value] = {c.name: (int(v) if integer else float(v))
                                 for c, (_, v, integer) in zip(named, ev.summary[1:], strict=True)}
    missing = sum(1 for qid in qrels.topics if qid not in run.topics)
    unjudged = sum(1 for qid in run.topics if qid not in qrels.topics)
    metrics.update(zip(COUNTS, (missing, unjudged), strict=True))
    counts = {"judged": len(qrels.topics), "ranked": len(run.topics), "scored": len(ev.per_query),
              "missing": missing, "unjudged": unjudged}
    return Scored(spec, run.sha256, run.name, ev, tuple(named), metrics, counts)


def printed(ev: Evaluated, named: Sequence[Named], keep: Sequence[Named]) -> Evaluated:
    """Keep only the values of ``keep`` (what ``-m`` asked for), when gates added measures to the evaluation."""
    wanted = {(n.measure, n.trec) for n in keep}
    mask = [(n.measure, n.trec) in wanted for n in named]
    if all(mask):
        return ev
    per_query = {qid: [v for v, m in zip(row, mask, strict=True) if m] for qid, row in ev.per_query.items()}
    summary = ev.summary[:1] + [v for v, m in zip(ev.summary[1:], mask, strict=True) if m]
    return replace(ev, per_query=per_query, summary=summary)


def paired_queries(qrels: Qrels, runs: Sequence[Scored], complete: bool) -> list[str]:
    """The queries the tests pair, in trec_eval's order: every judged one with -c, else those some run scored."""
    return [qid for qid in _ordered(qrels.topics) if complete or any(qid in r.evaluated.per_query for r in runs)]


def _ordered(qids: Iterable[str]) -> list[str]:
    return sorted(qids, key=lambda qid: qid.encode("utf-8", "surrogateescape"))


def compare(baseline: Scored, candidate: Scored, qids: Sequence[str], settings: TrecSettings) -> dict[str, Delta]:
    """Compare every metric of a candidate with the baseline's; test the means over the paired queries.

    Sums, counts and gm_map change without a test: they are not means of the queries' values.
    """
    from ragscore.comparison import Paired, compare_runs
    from ragscore.metrics.stats import PairSums, resampling_is_cheap
    from ragscore.settings import Settings

    tested = {c.name: index for index, c in enumerate(baseline.columns) if c.summary == "mean"}
    vectors = {name: ([baseline.value(q, i) for q in qids], [candidate.value(q, i) for q in qids])
               for name, i in tested.items()}
    paired = Paired(len(qids), {name: PairSums.of(*pair) for name, pair in vectors.items()},
                    vectors if resampling_is_cheap(len(qids), settings.bootstrap) else None, [], [])
    tests = Settings(confidence=settings.confidence, bootstrap=settings.bootstrap, seed=settings.seed)
    return compare_runs(baseline.metrics, candidate.metrics, paired, tests)
