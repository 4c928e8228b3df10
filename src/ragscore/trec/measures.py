"""trec_eval's measures, computed as trec_eval 9.0.7 computes them, with its names and parameters.

A measure is named as on trec_eval's command line (``P``, ``ndcg_cut``, ``map``...), with
optional parameters after a dot (``P.5,10``; ``iprec_at_recall..25,.5``); ``all_trec`` names
every measure here. A cutoff is read as trec_eval's ``atol`` reads it and a recall level as its
``atof``: the longest start of each that is a number (``P.1e400`` is ``P_1``, ``23.4`` is 23, as
the names printed show). What trec_eval refuses (a cutoff below 1, a parameter given twice, a
dot without parameters), a level that is not finite (``nan``, ``1e400``: trec_eval's output is
undefined) and a cutoff past 2**53 are usage errors.

Relevance is a grade of at least the relevance level (``-l``, default 1); a judged document
below it is a judged non-relevant one (bpref); nDCG's gain is the grade itself, for every
positive grade, whatever the level (as in trec_eval).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from itertools import compress, count
from typing import Final

from ragscore.errors import UsageError
from ragscore.quoting import quote

Values = list[tuple[str, float]]  # a measure's values for one topic, by printed name
CUTOFFS: Final = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_CUTOFFS: Final = (1, 5, 10)
RECALL_LEVELS: Final = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
MIN_GEO_MEAN: Final = 0.00001  # trec_eval's floor of a value in a geometric mean
LONG_MAX: Final = 2**63 - 1  # C's long where trec_eval is built: atol clamps a number past it
MAX_CUTOFF: Final = 2**53  # a cutoff is held as a float (a parameter), exact up to here
_LONG_RE: Final = re.compile(r"[+-]?[0-9]+")  # ASCII digits: int() also takes "1_0" and other scripts' digits
_LONG_PREFIX_RE: Final = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)?")
_DOUBLE_PREFIX_RE: Final = re.compile(
    r"[ \t\n\v\f\r]*[+-]?(?:(?P<hex>0x(?:[0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(?:p[+-]?[0-9]+)?)"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf(?:inity)?|nan(?:\([0-9a-z_]*\))?)", re.IGNORECASE | re.ASCII)


def c_long(text: str) -> int | None:
    """Read an integer as C's ``atol`` does, when it reads all of ``text`` (None: it would read a part or none).

    A number past a C long (atol clamps it) comes back as ±10**19, its digits not converted: Python
    converts at most 4,300, and the caller refuses it by its range either way.
    """
    if _LONG_RE.fullmatch(text) is None:
        return None
    if len(text.lstrip("+-").lstrip("0")) > 19:
        return -10**19 if text.startswith("-") else 10**19
    return int(text)


def c_double(text: str) -> float | None:
    """Read a number as C's ``atof`` (strtod) does, when it reads all of ``text`` (None: a part or none).

    Python's float reads what strtod reads but for underscores between digits and other scripts'
    digits, which strtod stops at (it reads 1_0 as 1), and hexadecimal, which float refuses: both
    are None here, as is every number strtod would read only the start of.
    """
    if "_" in text or not text.isascii():
        return None
    try:
        return float(text)
    except ValueError:
        return None


def atol(text: str) -> int:
    """What C's ``atol`` reads of ``text``: its longest prefix that is an integer (0 when none), clamped to a long."""
    found = _LONG_PREFIX_RE.match(text)
    digits = found[1] if found is not None else None
    value = 0 if digits is None else c_long(digits)
    assert value is not None
    return max(-LONG_MAX - 1, min(value, LONG_MAX))


def atof(text: str) -> float:
    """What C's ``atof`` (strtod) reads of ``text``: its longest prefix that is a number, 0.0 when none."""
    found = _DOUBLE_PREFIX_RE.match(text)
    if found is None:
        return 0.0
    number = found[0].strip(" \t\n\v\f\r")
    if found["hex"] is None:
        return float(number.partition("(")[0])  # nan(chars) is a NaN; float reads 1e400 as inf, as strtod does
    try:
        return float.fromhex(number)
    except OverflowError:  # strtod gives HUGE_VAL
        return -math.inf if number.startswith("-") else math.inf


@dataclass(frozen=True, slots=True)
class Query:
    """What every measure of one topic reads: where its judged documents are ranked, and the judgments."""

    retrieved: int                      # documents ranked (num_ret)
    judged: tuple[tuple[int, int], ...]  # (rank, grade) of each judged document ranked, by rank
    num_rel: int                        # documents judged relevant (grade >= level)
    num_nonrel: int                     # documents judged below the level, with a grade of 0 or more (bpref)
    positive: tuple[int, ...]           # every positive grade of the topic's judgments, descending, for ideal DCG
    level: int
    ranks: tuple[int, ...]              # the ranks of the relevant documents retrieved, ascending


def prepare(ranking: Sequence[str], judged: Mapping[str, int], level: int) -> Query:
    """Line up one topic's ranking with its judgments (once: every measure reads the result)."""
    # The ranks of the judged documents, found in one pass over the ranking at C speed: a grade of 0 is
    # falsy, so a lookup in a dict of True values tells judged from unjudged.
    hits = compress(count(1), map(dict.fromkeys(judged, True).get, ranking))
    pairs = tuple([(rank, judged[ranking[rank - 1]]) for rank in hits])
    grades = sorted(judged.values())
    below = bisect_left(grades, level)
    return Query(
        len(ranking),
        pairs,
        len(grades) - below,
        max(0, below - bisect_left(grades, 0)),
        tuple(reversed(grades[bisect_right(grades, 0):])),
        level,
        tuple([rank for rank, grade in pairs if grade >= level]),
    )


def _ap(q: Query, cutoff: int | None = None) -> float:
    if not q.num_rel:
        return 0.0
    total = 0.0
    for i, rank in enumerate(q.ranks, 1):
        if cutoff is not None and rank > cutoff:
            break
        total += i / rank
    return total / q.num_rel


def _precision(q: Query, k: int) -> float:
    return bisect_right(q.ranks, k) / k


def _recall(q: Query, k: int) -> float:
    return bisect_right(q.ranks, k) / q.num_rel if q.num_rel else 0.0


def _rprec(q: Query) -> float:
    return bisect_right(q.ranks, q.num_rel) / q.num_rel if q.num_rel else 0.0


def _bpref(q: Query) -> float:
    if not q.num_rel:
        return 0.0
    bound = min(q.num_rel, q.num_nonrel)
    nonrel = 0
    total = 0.0
    for _, g in q.judged:
        if g < 0:
            continue
        if g >= q.level:
            total += 1.0 - min(nonrel, q.num_rel) / bound if nonrel else 1.0
        else:
            nonrel += 1
    return total / q.num_rel


INFAP_EPSILON: Final = 0.00001


def _infap(q: Query) -> float:
    """Inferred AP (Yilmaz and Aslam), as trec_eval computes it: a document not in the judgments is
    outside the pool (skipped); one judged with a negative grade is pooled but unjudged."""
    total = 0.0
    nonrel = rel = unjudged = 0
    level = q.level
    for rank, g in q.judged:
        j = rank - 1
        if g < 0:
            unjudged += 1
        elif g < level:
            nonrel += 1
        else:
            rel += 1
            if j == 0:
                total += 1.0
            else:
                fj = float(j)
                total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1 + nonrel + unjudged) / fj) * (
                    (rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON))
    return total / q.num_rel if q.num_rel else total


def _recip_rank(q: Query) -> float:
    ranks = q.ranks
    return 1.0 / ranks[0] if ranks else 0.0


def _iprec(q: Query, level: float, nearest: bool = False) -> float:
    """Interpolated precision at a recall level, as trec_eval computes it: the level becomes a number
    of relevant documents c = (long)(level * R + 0.9) (trec_eval 9.0.7 and pytrec_eval; trec_eval
    10 rounds to the nearest, ``nearest``); the value is the best precision at any rank from the
    c-th relevant one retrieved on (at any rank when c is 0; 0 when fewer are retrieved)."""
    ranks = q.ranks
    if not ranks:
        return 0.0
    c = math.floor(level * q.num_rel + 0.5) if nearest else int(level * q.num_rel + 0.9)
    if c > len(ranks):
        return 0.0
    start = c - 1 if c > 0 else 0
    return max(i / rank for i, rank in enumerate(ranks[start:], start + 1))


def _dcg(gains: Sequence[float]) -> float:
    total = 0.0
    for rank, gain in enumerate(gains, 1):
        if gain > 0:
            total += gain / math.log2(rank + 1)
    return total


def _ndcg(q: Query, cutoff: int | None = None) -> float:
    ideal = q.positive if cutoff is None else q.positive[:cutoff]
    best = _dcg(ideal)
    if best <= 0:
        return 0.0
    total = 0.0  # the DCG of the ranking: the same sums, in the same order, as _dcg of every rank's gain
    for rank, g in q.judged:
        if cutoff is not None and rank > cutoff:
            break
        if g > 0:
            total += g / math.log2(rank + 1)
    return total / best


def _success(q: Query, k: int) -> float:
    ranks = q.ranks
    return 1.0 if ranks and ranks[0] <= k else 0.0


def _num_rel_ret(q: Query) -> int:
    return len(q.ranks)


def _set_p(q: Query) -> float:
    return _num_rel_ret(q) / q.retrieved if q.retrieved else 0.0


def _set_recall(q: Query) -> float:
    return _num_rel_ret(q) / q.num_rel if q.num_rel else 0.0


def _set_f(q: Query) -> float:
    p, r = _set_p(q), _set_recall(q)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


# name -> (default parameters, per-query values: list of (printed name, value), summary)
# summary: "mean" of queries, "sum" of counts, "gm" geometric mean (floored at MIN_GEO_MEAN).
@dataclass(frozen=True, slots=True)
class Measure:
    name: str
    defaults: tuple[float, ...]
    values: Callable[[Query, tuple[float, ...]], list[tuple[str, float]]]
    summary: str = "mean"
    integer: bool = False


@cache
def _cut(params: tuple[float, ...]) -> tuple[int, ...]:
    return tuple(int(p) for p in params)


@cache
def _names(prefix: str, params: tuple[float, ...]) -> tuple[str, ...]:
    """The printed names of a measure's values: a prefix, then each cutoff (or recall level, to two decimals)."""
    if prefix.startswith("iprec"):
        return tuple(f"{prefix}{level:.2f}" for level in params)
    return tuple(f"{prefix}{k}" for k in _cut(params))


def _per_cutoff(prefix: str, value: Callable[[Query, int], float]) -> Callable[[Query, tuple[float, ...]], Values]:
    return lambda q, p: list(zip(_names(prefix, p), [value(q, k) for k in _cut(p)], strict=True))


def _per_level(value: Callable[[Query, float], float]) -> Callable[[Query, tuple[float, ...]], Values]:
    return lambda q, p: list(zip(_names("iprec_at_recall_", p), [value(q, level) for level in p], strict=True))


MEASURES: Final[dict[str, Measure]] = {m.name: m for m in (
    Measure("num_ret", (), lambda q, _: [("num_ret", q.retrieved)], "sum", True),
    Measure("num_rel", (), lambda q, _: [("num_rel", q.num_rel)], "sum", True),
    Measure("num_rel_ret", (), lambda q, _: [("num_rel_ret", _num_rel_ret(q))], "sum", True),
    Measure("map", (), lambda q, _: [("map", _ap(q))]),
    Measure("gm_map", (), lambda q, _: [("gm_map", _ap(q))], "gm"),
    Measure("Rprec", (), lambda q, _: [("Rprec", _rprec(q))]),
    Measure("bpref", (), lambda q, _: [("bpref", _bpref(q))]),
    Measure("recip_rank", (), lambda q, _: [("recip_rank", _recip_rank(q))]),
    Measure("iprec_at_recall", RECALL_LEVELS, _per_level(_iprec)),
    # The same, with trec_eval 10's rounding of a level to a number of relevant documents.
    Measure("iprec_at_recall_nearest", RECALL_LEVELS, _per_level(partial(_iprec, nearest=True))),
    Measure("P", CUTOFFS, _per_cutoff("P_", _precision)),
    Measure("recall", CUTOFFS, _per_cutoff("recall_", _recall)),
    Measure("ndcg", (), lambda q, _: [("ndcg", _ndcg(q))]),
    Measure("ndcg_cut", CUTOFFS, _per_cutoff("ndcg_cut_", _ndcg)),
    Measure("map_cut", CUTOFFS, _per_cutoff("map_cut_", _ap)),
    Measure("success", SUCCESS_CUTOFFS, _per_cutoff("success_", _success)),
    Measure("set_P", (), lambda q, _: [("set_P", _set_p(q))]),
    Measure("set_recall", (), lambda q, _: [("set_recall", _set_recall(q))]),
    Measure("set_F", (), lambda q, _: [("set_F", _set_f(q))]),
    Measure("infAP", (), lambda q, _: [("infAP", _infap(q))]),
)}
# trec_eval's default measures, and its all_trec order (of those here).
DEFAULT: Final = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                  "iprec_at_recall", "P")
ALL_TREC: Final = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                   "iprec_at_recall", "iprec_at_recall_nearest", "P", "recall", "infAP", "ndcg", "ndcg_cut", "map_cut",
                   "success", "set_P", "set_recall", "set_F")


def headed(specs: Sequence[str]) -> bool:
    """Tell whether trec_eval prints runid and num_q for these -m options (the default set and all_trec do)."""
    return not specs or any(spec.partition(".")[0] in ("official", "all_trec") for spec in specs)


def parse_measures(specs: Sequence[str]) -> list[tuple[Measure, tuple[float, ...]]]:
    """Read -m options (``P.5,10``, ``all_trec``); parameters are sorted and given once, as trec_eval does."""
    chosen: dict[str, tuple[float, ...]] = {}
    for spec in specs or ("official",):
        name, dot, params = spec.partition(".")
        if dot and not params:
            raise UsageError(f"-m {spec}: expected parameters after the dot (trec_eval refuses none too)")
        if name in ("official", "all_trec"):
            for default in DEFAULT if name == "official" else ALL_TREC:
                if default != "iprec_at_recall_nearest":
                    chosen.setdefault(default, MEASURES[default].defaults)
            continue
        if name not in MEASURES:
            known = ", ".join((*MEASURES, "all_trec"))
            raise UsageError(f"-m {spec}: unknown measure {name!r} (known: {known})")
        measure = MEASURES[name]
        if params:
            if not measure.defaults:
                raise UsageError(f"-m {spec}: {name} takes no parameters")
            read = _levels if measure.defaults is RECALL_LEVELS else _cutoffs
            chosen[name] = read(spec, params.split(","))
        else:
            chosen.setdefault(name, measure.defaults)
    order = {name: n for n, name in enumerate(ALL_TREC)}
    return [(MEASURES[name], chosen[name]) for name in sorted(chosen, key=order.__getitem__)]


def _cutoffs(spec: str, params: list[str]) -> tuple[float, ...]:
    """Read a measure's cutoffs as trec_eval does (atol: ``23.4`` is 23), refusing what it refuses."""
    values = []
    for param in params:
        value = atol(param)
        if value < 1:
            raise UsageError(f"-m {spec}: expected positive cutoffs, got {quote(param)} (read as {value})")
        if value > MAX_CUTOFF:
            raise UsageError(f"-m {spec}: a cutoff past 2**53 ({MAX_CUTOFF}), more documents than a ranking holds")
        values.append(float(value))
    return _distinct(spec, values, "cutoff")


def _levels(spec: str, params: list[str]) -> tuple[float, ...]:
    """Read recall levels as trec_eval does (atof: ``.5x`` is 0.5, an empty one 0), refusing what is not finite."""
    values = []
    for param in params:
        value = atof(param)
        if not math.isfinite(value):
            raise UsageError(f"-m {spec}: expected finite recall levels, got {quote(param)}")
        values.append(value)
    return _distinct(spec, values, "recall level")


def _distinct(spec: str, values: list[float], what: str) -> tuple[float, ...]:
    """The values in increasing order; one given twice is an error, as in trec_eval."""
    ordered = sorted(values)
    for low, high in zip(ordered, ordered[1:], strict=False):
        if low == high:
            raise UsageError(f"-m {spec}: the {what} {_shown(low, what)} is given twice (trec_eval refuses it too)")
    return tuple(ordered)


def _shown(value: float, what: str) -> str:
    return f"{int(value)}" if what == "cutoff" else f"{value:g}"


@dataclass(frozen=True, slots=True)
class Evaluated:
    """Per-topic values and the summary over topics, named as trec_eval prints them."""

    run_name: str
    per_query: dict[str, list[tuple[str, float, bool]]]  # qid -> (name, value, is an integer)
    summary: list[tuple[str, float, bool]]
    headed: bool = True  # runid and num_q are printed


def evaluate(
    qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Sequence[str]], run_name: str,
    measures: list[tuple[Measure, tuple[float, ...]]], level: int = 1, complete: bool = False,
) -> Evaluated:
    """Score every topic that is judged and ranked (``complete``: every judged topic, an unranked one
    scoring 0) and summarise over them."""
    topics = [qid for qid in qrels if complete or qid in run]
    per_query: dict[str, list[tuple[str, float, bool]]] = {}
    for qid in sorted(topics, key=_topic_order):
        q = prepare(run.get(qid, ()), qrels[qid], level)
        per_query[qid] = [(name, value, m.integer) for m, params in measures for name, value in m.values(q, params)]
    summary: list[tuple[str, float, bool]] = [("num_q", len(per_query), True)]
    n = len(per_query)
    rows = list(per_query.values())
    index = 0
    for m, params in measures:
        names = [name for name, _ in m.values(prepare((), {}, level), params)]  # named even when no topic is scored
        for offset, name in enumerate(names):
            column = [row[index + offset][1] for row in rows]
            if m.summary == "sum":
                value: float = sum(column)
            elif m.summary == "gm":
                value = math.exp(math.fsum(math.log(max(v, MIN_GEO_MEAN)) for v in column) / n) if n else 0.0
            else:
                value = math.fsum(column) / n if n else 0.0
            summary.append((name, value, m.integer))
        index += len(names)
    return Evaluated(run_name, per_query, summary)


def _topic_order(qid: str) -> bytes:
    """trec_eval lists topics in byte order (strcmp): "10" before "9"."""
    return qid.encode("utf-8", "surrogateescape")


def render(ev: Evaluated, per_query: bool = False) -> str:
    """Print as trec_eval prints: ``name <tab> topic <tab> value``, names padded to 22 characters."""
    lines = []

    def line(name: str, topic: str, value: float | str, integer: bool) -> None:
        shown = value if isinstance(value, str) else (f"{int(value)}" if integer else f"{value:6.4f}")
        lines.append(f"{name:<22}\t{topic}\t{shown}")

    if per_query:
        for qid, values in ev.per_query.items():
            for name, value, integer in values:
                if name != "gm_map":
                    line(name, qid, value, integer)
    if ev.headed:
        line("runid", "all", ev.run_name, False)
    for name, value, integer in ev.summary:
        if ev.headed or name != "num_q":
            line(name, "all", value, integer)
    return "\n".join(lines) + "\n"
