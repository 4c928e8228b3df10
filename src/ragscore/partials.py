"""Partial results: one part of the questions scored on its own, written as versioned JSON, and
merged with the other parts into the run that ``ragscore score`` gives in one process.

Part ``i`` of ``n`` holds the questions whose qid ``owner(qid, n)`` gives ``i`` (the split
``--jobs`` uses), and the trace lines for them. A partial keeps what the reports need of its
questions: integer counts, each metric's values summarised exactly (``metrics.moments``: their
count, sum and sum of squares as integers at a binary scale, least and greatest, and the sums of
the Poisson bootstrap's replicates while the questions are few), so that no grouping or order
of merging changes a bit, the statistics of corpus metrics, the worst-question candidates of
every diagnosis, the accounting with its examples, and, when asked for, the per-question rows.

The JSON is a contract: ``{"format": "ragscore-partial", "version": 3, ...}``; a reader refuses
another version. Floats are written as JSON numbers (shortest repr: read back bit for bit), NaN
as null, infinities as the strings "inf" and "-inf"; the integers of exact sums, which outgrow
the 53 bits other JSON readers keep, as hexadecimal strings ("0x1f", "-0x2").
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Final

from ragscore import __version__
from ragscore.diagnose import Sample
from ragscore.errors import InputError, UsageError
from ragscore.evaluate import Accounting, PartResult, QuestionRow, Unreadable, Wants, combine
from ragscore.external import ScoreTotals
from ragscore.labels import LABEL_ORDER, Label
from ragscore.metrics.answer import AnswerTally, Miss, Outcome, answer_metric_names
from ragscore.metrics.families import Totals, enabled, spread
from ragscore.metrics.moments import Moments, Replicates
from ragscore.metrics.registry import Direction
from ragscore.metrics.repeats import EXAMPLES, Below, QuestionSamples, RepeatTotals, column_names
from ragscore.metrics.stats import resampling_is_cheap
from ragscore.operations import CONCEPTS as OPERATION_CONCEPTS
from ragscore.operations import Operations, Sketch
from ragscore.quoting import quote, show_value
from ragscore.rows import RowFile, RowWriter, SpillFolder
from ragscore.settings import LAST, SAMPLES, Settings
from ragscore.text import Rule

FORMAT: Final = "ragscore-partial"
# The integer counts of an AnswerTally (its shares and labels are written apart).
_COUNTS: Final = tuple(name for name in AnswerTally.__dataclass_fields__ if name not in ("shares", "labels"))
VERSION: Final = 3


@dataclass(frozen=True)
class Source:
    """An input as the partials name it: its path as shown in reports, its sha256, and, for several
    trace files read as one, each file and the line it starts at."""

    path: str
    sha256: str
    records: bool = False  # records given to the Python API, not a file
    specs: tuple[str, ...] = ()  # several files: the paths, globs and folders named
    files: tuple[tuple[str, str], ...] = ()  # several files: (path, sha256) of each
    starts: tuple[int, ...] = ()  # several files: the stream's line each one starts at


@dataclass
class Partial:
    """The result of some of the ``parts`` parts of a run, ready to merge with the others."""

    parts: int
    covers: tuple[int, ...]  # the parts held (0-based: what ragscore.owner gives), ascending
    settings: Settings
    wants: Wants
    gold: Source
    traces: dict[int, Source]  # by part: a file's digest is the same in every part, records' are not
    scores: Source | None  # the --scores file (merge reads it again: it must be the same)
    result: PartResult = field(repr=False)

    def merge(self, other: Partial) -> Partial:
        """Add another partial of the same run (same settings, gold set and parts) to this one."""
        return merge_partials([self, other])

    @property
    def complete(self) -> bool:
        """Whether every part of the run is here."""
        return self.covers == tuple(range(self.parts))

    def to_json(self) -> str:
        """Write the partial as versioned JSON (one line)."""
        return json.dumps(_encode(self), ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "<partial>", spill: SpillFolder | None = None, *,
                  rows: bool = True) -> Partial:
        """Read a partial written by ``to_json`` (an InputError names what is wrong); its rows go to a
        file in ``spill`` as they are read (None: they stay in memory). ``rows=False`` reads no rows
        unless its slices need them: a merge that lists no question."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(source, f"not a ragscore partial: invalid JSON ({exc.msg})", exc.lineno,
                             exc.colno) from None
        except (ValueError, RecursionError) as exc:  # an integer of too many digits; nesting too deep
            raise InputError(source, f"not a ragscore partial: {type(exc).__name__}: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(source, f'not a ragscore partial (expected "format": "{FORMAT}")')
        if data.get("version") != VERSION:
            raise InputError(source, f"a ragscore partial of version {data.get('version')!r}; this ragscore "
                                     f"({__version__}) reads version {VERSION}: make the partials again with it")
        try:
            return _decode(data, spill, rows)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, RecursionError) as exc:
            raise InputError(source, f"a damaged ragscore partial: {type(exc).__name__}: {exc}") from None


def merge_partials(partials: Sequence[Partial], names: Sequence[str] | None = None) -> Partial:
    """Merge partials of one run; an error names what differs or which part is held twice."""
    names = list(names) if names is not None else [f"partial {n + 1}" for n in range(len(partials))]
    if not partials:
        raise UsageError("merge: no partial given")
    first, first_name = partials[0], names[0]
    seen: dict[int, str] = {}
    for partial, name in zip(partials, names, strict=True):
        problem = _differs(partial, first)
        if problem is not None:
            raise UsageError(f"merge: {name} and {first_name} are not parts of one run: {problem}")
        for part in partial.covers:
            if part in seen:
                raise UsageError(f"merge: part {part + 1}/{first.parts} is in both {seen[part]} and {name}")
            seen[part] = name
    ordered = sorted(zip(partials, names, strict=True), key=lambda pair: pair[0].covers[0])
    read_as = {p.result.trace_format: name for p, name in ordered if p.result.accounting.lines}
    if len(read_as) > 1:
        shown = ", ".join(f"{fmt} in {name}" for fmt, name in read_as.items())
        raise UsageError(f"merge: the parts read their traces in different formats ({shown}), each detected from "
                         "its own first record: give the format (--trace-format, or trace_format=)")
    traces = {part: source for partial, _ in ordered for part, source in partial.traces.items()}
    # In any order of the arguments, the same report: the inputs are named as the lowest part names them.
    return replace(ordered[0][0], covers=tuple(sorted(seen)), traces=dict(sorted(traces.items())),
                   result=combine([partial.result for partial, _ in ordered]))


def missing_parts(partial: Partial) -> str | None:
    """Name the parts a merged partial still lacks (None when it is complete)."""
    lacking = [str(part + 1) for part in range(partial.parts) if part not in partial.covers]
    if not lacking:
        return None
    shown = ", ".join(lacking[:10]) + (", ..." if len(lacking) > 10 else "")
    return f"part{'s' * (len(lacking) > 1)} {shown} of {partial.parts} missing"


def trace_source(partial: Partial) -> Source:
    """The traces of a complete run: a file's source (the same in every part), or for records, one
    digest of every part's (the sha256 of their digests, one line each, in part order)."""
    sources = list(partial.traces.values())
    if not sources[0].records:  # files: the same content in every part (merge checks it), named by the lowest part
        return sources[0]
    joined = "".join(f"{part + 1}/{partial.parts} {source.sha256}\n" for part, source in partial.traces.items())
    return replace(sources[0], sha256=hashlib.sha256(joined.encode()).hexdigest())


def _differs(a: Partial, b: Partial) -> str | None:
    """Say how two partials differ where parts of one run must agree (None when they agree)."""
    if a.parts != b.parts:
        return f"one has {a.parts} parts, the other {b.parts}"
    if a.settings != b.settings:
        mine, theirs = a.settings.as_dict(), b.settings.as_dict()
        changed = [key for key in {**mine, **theirs} if mine.get(key) != theirs.get(key)]
        return "scored with other settings (" + ", ".join(changed or ["version"]) + ")"
    if a.gold.sha256 != b.gold.sha256:
        return f"other gold sets (sha256 {a.gold.sha256[:12]}… and {b.gold.sha256[:12]}…)"
    ta, tb = next(iter(a.traces.values())), next(iter(b.traces.values()))
    if ta.records != tb.records:
        return "one read trace files, the other records"
    if not ta.records and ta.sha256 != tb.sha256:
        return f"other trace files (sha256 {ta.sha256[:12]}… and {tb.sha256[:12]}…): every part reads all of them"
    if a.wants != b.wants:
        fields = [name for name in ("rows", "by", "samples", "targets")
                  if getattr(a.wants, name) != getattr(b.wants, name)]
        return "made with other options (" + ", ".join(fields) + ")"
    if (a.scores is None) != (b.scores is None) or (a.scores and b.scores and a.scores.sha256 != b.scores.sha256):
        return "other --scores files"
    return None


# --- writing -------------------------------------------------------------------------------------


def _num(value: float) -> float | str | None:
    if math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _nums(values: Iterable[float]) -> list[float | str | None]:
    return [_num(v) for v in values]


def _source(source: Source) -> dict[str, Any]:
    out: dict[str, Any] = {"path": source.path, "sha256": source.sha256}
    if source.records:
        out["records"] = True
    if source.specs:
        out["specs"] = list(source.specs)
        out["files"] = [list(pair) for pair in source.files]
        out["starts"] = list(source.starts)
    return out


def _outcome(o: Outcome) -> list[Any]:
    return [o.label.value, o.answered, o.refused_by, o.hit, o.contained, o.forbidden, o.compliant, o.fabricated,
            o.full_recall, None if o.cite_share is None else _num(o.cite_share), o.hit_id,
            None if o.miss is None else o.miss.name, o.miss_id, o.matched, o.line]


def _row(r: QuestionRow) -> list[Any]:
    out = [r.place, r.qid, r.question, r.answerable, _outcome(r.outcome), list(r.citations), r.rule.name,
           [None if row is None else _nums(row) for row in r.family_rows], [list(s) for s in r.slices],
           {name: _num(v) for name, v in r.scores.items()}, r.claim, None if r.cited is None else list(r.cited)]
    if r.sampled is not None:  # repeated samples: the question's (a run without them writes what 0.1 wrote)
        q = r.sampled
        out.append([q.n, q.correct, list(q.labels), [None if v is None else _num(v) for v in q.answer],
                    [None if v is None else _num(v) for v in q.repeats]])
    return out


def _repeats(t: RepeatTotals) -> dict[str, Any]:
    return {"columns": [_moments(m) for m in t.columns], "questions": t.questions, "samples": t.samples,
            "short": list(t.short), "single": t.single,
            "rates": [[c, n, count, [[b.place, b.qid] for b in first]] for (c, n), (count, first) in t.rates.items()]}


def _int(value: int) -> str:
    return hex(value)


def _moments(m: Moments) -> dict[str, Any]:
    r = m.replicates
    return {"n": m.n, "scale": m.scale, "total": _int(m.total),
            "squares": None if m.squares is None else _int(m.squares), "low": _num(m.low), "high": _num(m.high),
            "replicates": None if r is None else {"scale": r.scale, "sums": list(map(_int, r.sums)),
                                                  "weights": list(r.weights)}}


def _operations(o: Operations) -> dict[str, Any]:
    # The latencies travel as a sketch: a merged report's quantiles are within 1% (it says so).
    sketch = o.sketched()
    return {"traced": o.traced, "bad": o.bad, "sums": [_moments(m) for m in o.sums],
            "sketch": {"zeros": sketch.zeros, "buckets": sorted(sketch.buckets.items())}}


def _encode(p: Partial) -> dict[str, Any]:
    r = p.result
    if r.explained or r.packed is not None or r.one_process or r.error is not None:
        raise UsageError("a partial keeps no explanation, comparison or error")  # the callers make sure
    acc = r.accounting
    return {
        "format": FORMAT,
        "version": VERSION,
        "ragscore": __version__,
        "signature": p.settings.signature(),
        "parts": p.parts,
        "covers": list(p.covers),
        "settings": p.settings.as_dict(),
        "options": {"rows": p.wants.rows, "by": list(p.wants.by), "samples": p.wants.samples,
                    "targets": [[m, d.value, _num(bound)] for m, d, bound in p.wants.targets]},
        "gold": _source(p.gold),
        "traces": {str(part): _source(source) for part, source in p.traces.items()},
        "scores": None if p.scores is None else _source(p.scores),
        "result": {
            "questions": r.questions,
            "trace_format": r.trace_format,
            "gold_ragas": r.gold_ragas,
            "tally": {**{name: getattr(r.tally, name) for name in _COUNTS},
                      "labels": {label.value: n for label, n in r.tally.labels.items()},
                      "shares": _moments(r.tally.shares)},
            "accounting": {
                "lines": acc.lines, "unknown": acc.unknown, "duplicates": acc.duplicates,
                "unknown_ids": [list(x) for x in acc.unknown_ids],
                "duplicate_ids": [list(x) for x in acc.duplicate_ids],
                "unreadable": acc.unreadable, "unreadable_bare": acc.unreadable_bare,
                "unreadable_examples": [[line, list(u.keys), u.bare, u.looks_like]
                                        for line, u in acc.unreadable_examples],
                "bad_retrieved": acc.bad_retrieved, "bad_retrieved_lines": list(acc.bad_retrieved_lines),
                "bad_refused": acc.bad_refused, "bad_refused_lines": list(acc.bad_refused_lines),
            },
            "missing_ids": [list(x) for x in r.missing_ids],
            "columns": [{"width": c.width, "counted": c.counted, "columns": list(map(_moments, c.columns))}
                        for c in r.columns],
            "samples": {name: [[_num(key), qid, s.question, s.claim, _num(s.value)] for key, qid, s in picks]
                        for name, picks in r.samples.items()},
            "scores": {name: {"values": _moments(t.values), "nulls": t.nulls} for name, t in r.scores.items()},
            "matched_scores": list(r.matched_scores),
            "score_lines": dict(r.score_lines),
            "mapped_found": dict(r.mapped_found),
            "gold_keys": {key: list(v) for key, v in r.gold_keys.items()},
            "trace_keys": {key: list(v) for key, v in r.trace_keys.items()},
            "digests": None if r.digests is None else list(r.digests),
            "rows": [_row(row) for row in r.rows],
            "operations": None if r.operations is None else _operations(r.operations),
            **({"repeats": _repeats(r.repeats)} if r.repeats is not None else {}),
        },
    }


# --- reading -------------------------------------------------------------------------------------


def _float(value: Any) -> float:
    if value is None:
        return math.nan
    if isinstance(value, str):
        if value not in ("inf", "-inf"):
            raise ValueError(f"expected a number, got {value!r}")
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _settings(data: dict[str, Any]) -> Settings:
    metrics = list(data["metrics"])
    if not metrics or metrics[0] != "answer":
        raise ValueError("settings.metrics must start with \"answer\"")
    # The values the command line and the settings files accept (config.py), so nothing fails later.
    if not 0.0 < float(data["confidence"]) < 1.0 or not 1 <= _count(data["bootstrap"]) <= 1_000_000:
        raise ValueError("settings.confidence or settings.bootstrap out of range")
    if _count(data["k"]) < 1 or any(_count(k) < 1 for k in data["cutoffs"]):
        raise ValueError("settings.k or settings.cutoffs out of range")
    return Settings(
        refusal_tokens=tuple(data["refusal_tokens"]), k=int(data["k"]), cutoffs=tuple(data["cutoffs"]),
        require_claim=bool(data["require_claim"]), scope_citations=bool(data["scope_citations"]),
        strict=bool(data["strict"]), families=tuple(metrics[1:]), hybrid_alpha=float(data["hybrid_alpha"]),
        hybrid_gamma=float(data["hybrid_gamma"]), similarity_threshold=float(data["similarity_threshold"]),
        stemmer=bool(data["stemmer"]), text_tokenizer=str(data["text_tokenizer"]),
        confidence=float(data["confidence"]), bootstrap=int(data["bootstrap"]), seed=str(data["seed"]),
        refusal_patterns=tuple(data["refusal_patterns"]), trace_format=str(data["trace_format"]),
        trace_fields=tuple(data["trace_fields"].items()), gold_fields=tuple(data["gold_fields"].items()),
        repeats=_repeats_setting(data), pass_k=tuple(data.get("pass_k", Settings().pass_k)),
    )


def _repeats_setting(data: dict[str, Any]) -> str:
    """Read ``repeats``, which settings name only with samples (and then with ``pass_k``)."""
    if "repeats" not in data and "pass_k" not in data:
        return LAST
    pass_k = data.get("pass_k")
    if (data.get("repeats") != SAMPLES or not isinstance(pass_k, list) or not pass_k
            or any(_count(k) < 1 for k in pass_k) or pass_k != sorted(set(pass_k))):
        raise ValueError("settings.repeats or settings.pass_k out of range")
    return SAMPLES


_HEX: Final = re.compile(r"-?0x[0-9a-f]+")
_MAX_SCALE: Final = 1074  # a double is an integer times 2**-1074 at least
# Every per-question value a run holds is at most this in magnitude (scores: loaders.scores.MAX_SCORE),
# so no sum of a partial can overflow a double.
_MAX_VALUE: Final = 1e15


def _read_int(value: Any) -> int:
    if type(value) is not str or not _HEX.fullmatch(value):
        raise TypeError(f"expected an integer written in hexadecimal, got {value!r}")
    return int(value, 16)


def _count(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError(f"expected a count, got {value!r}")
    return value


def _scale(value: Any) -> int:
    scale = _count(value)
    if scale > _MAX_SCALE:
        raise ValueError(f"a binary scale of {scale}, more than a double has ({_MAX_SCALE})")
    return scale


def _read_moments(data: dict[str, Any], resamples: int, spread: bool) -> Moments:
    """Read a summary of values, refusing one that no run can make (its intervals could not be computed)."""
    n = _count(data["n"])
    if not n:
        if data["total"] != "0x0" or data["squares"] is not None or data["replicates"] is not None:
            raise ValueError("a summary of no value with sums")
        return Moments()
    scale, total = _scale(data["scale"]), _read_int(data["total"])
    squares = None if data["squares"] is None else _read_int(data["squares"])
    low, high = _float(data["low"]), _float(data["high"])
    if not -_MAX_VALUE <= low <= high <= _MAX_VALUE:
        raise ValueError(f"values from {low!r} to {high!r}, not within ±{_MAX_VALUE:g}")
    if not Fraction(low) * n <= Fraction(total, 1 << scale) <= Fraction(high) * n:
        raise ValueError("a sum outside what its values can add up to")
    if (squares is None) == spread:
        raise ValueError("the sum of squares of a mean is missing" if spread else "a sum of squares of a count")
    largest = max(abs(Fraction(low)), abs(Fraction(high)))
    if squares is not None and not Fraction(total, 1 << scale) ** 2 <= n * Fraction(squares, 1 << 2 * scale) <= (
            n * largest) ** 2:
        raise ValueError("a sum of squares that its values cannot have")
    replicates = None
    if data["replicates"] is not None:
        r = data["replicates"]
        sums, weights = tuple(map(_read_int, r["sums"])), tuple(map(_count, r["weights"]))
        if not spread or not resampling_is_cheap(n, resamples):
            raise ValueError("bootstrap replicates where there are none")
        if len(sums) != resamples or len(weights) != resamples:
            raise ValueError(f"{len(sums)} replicate sums and {len(weights)} weights for {resamples} resamples")
        rscale = _scale(r["scale"])
        if any(w > 5 * n or not Fraction(low) * w <= Fraction(x, 1 << rscale) <= Fraction(high) * w
               for x, w in zip(sums, weights, strict=True)):
            raise ValueError("a replicate sum that its values cannot make")
        replicates = Replicates(rscale, sums, weights)
    return Moments(n, scale, total, squares, low, high, replicates)


def _read_totals(data: dict[str, Any], resamples: int, spread: tuple[bool, ...]) -> Totals:
    width, counted = _count(data["width"]), _count(data["counted"])
    if width != len(spread) or len(data["columns"]) != width:
        raise ValueError(f"a family's {len(data['columns'])} columns, for {len(spread)} values per question")
    columns = tuple(_read_moments(c, resamples, s) for c, s in zip(data["columns"], spread, strict=True))
    if any(c.n != counted for c in columns):
        raise ValueError(f"a family's columns do not all count its {counted} questions")
    return Totals(width, counted, columns)


def _read_operations(data: dict[str, Any] | None, questions: int) -> Operations | None:
    if data is None:
        return None
    traced, bad = _count(data["traced"]), _count(data["bad"])
    sums = tuple(_read_moments(m, 1, False) for m in data["sums"])
    if len(sums) != len(OPERATION_CONCEPTS) or traced > questions or any(m.n > traced or m.low < 0
                                                                        for m in sums if m.n):
        raise ValueError("operations that do not fit the questions")
    buckets = {}
    for index, count in data["sketch"]["buckets"]:
        # Values from 5e-324 to 1e15 fill buckets -37,300 to 1,730: beyond them, none (and γ**index overflows).
        if type(index) is not int or not -38_000 <= index <= 1_800 or index in buckets:
            raise ValueError(f"a sketch bucket {index!r} that no value fills")
        buckets[index] = _count(count)
    sketch = Sketch(buckets, _count(data["sketch"]["zeros"]))
    if sketch.count != sums[0].n:
        raise ValueError(f"a sketch of {sketch.count} latencies for {sums[0].n}")
    return Operations(traced, bad, sums, None, sketch)


def _read_source(data: dict[str, Any]) -> Source:
    return Source(str(data["path"]), str(data["sha256"]), bool(data.get("records", False)),
                  tuple(data.get("specs", ())), tuple((str(p), str(s)) for p, s in data.get("files", ())),
                  tuple(int(n) for n in data.get("starts", ())))


def _read_outcome(v: list[Any]) -> Outcome:
    (label, answered, refused_by, hit, contained, forbidden, compliant, fabricated, full_recall, share, hit_id,
     miss, miss_id, matched, line) = v
    return Outcome(Label(label), answered, refused_by, hit, contained, forbidden, compliant, fabricated, full_recall,
                   None if share is None else _float(share), hit_id, None if miss is None else Miss[miss], miss_id,
                   matched, line)


def _read_row(v: list[Any]) -> QuestionRow:
    place, qid, question, answerable, outcome, citations, rule, family_rows, slices, scores, claim, cited, *sampled = v
    if not (claim is None or isinstance(claim, str)) or not (cited is None or all(isinstance(c, str) for c in cited)):
        raise ValueError(f"question {qid!r}: a claim or cited ids that are not text")
    return QuestionRow(place, qid, question, answerable, _read_outcome(outcome), tuple(citations), Rule[rule],
                       tuple(None if row is None else tuple(map(_float, row)) for row in family_rows),
                       tuple(tuple(s) for s in slices), {name: _float(x) for name, x in scores.items()},
                       _read_sampled(*sampled) if sampled else None, claim, None if cited is None else tuple(cited))


def _read_sampled(v: list[Any]) -> QuestionSamples:
    n, correct, labels, answer, repeats = v
    labels = tuple(map(_count, labels))
    if _count(n) < 1 or len(labels) != len(LABEL_ORDER) or sum(labels) != n or _count(correct) > n:
        raise ValueError(f"a question's samples that do not add up ({n} samples, {correct} correct, labels {labels})")
    return QuestionSamples(n, correct, labels, tuple(None if x is None else _float(x) for x in answer),
                           tuple(None if x is None else _float(x) for x in repeats))


def _read_repeats(data: dict[str, Any] | None, settings: Settings) -> RepeatTotals | None:
    if data is None:
        if settings.sampled:
            raise ValueError('a partial of repeated samples (repeats = "samples") without them')
        return None
    if not settings.sampled:
        raise ValueError("repeated samples in a partial scored without them")
    names = column_names(settings, answer_metric_names(settings))
    if len(data["columns"]) != len(names):
        raise ValueError(f"{len(data['columns'])} summaries of repeated samples for {len(names)} metrics")
    columns = tuple(_read_moments(m, settings.bootstrap, True) for m in data["columns"])
    questions, samples, single = _count(data["questions"]), _count(data["samples"]), _count(data["single"])
    short = tuple(map(_count, data["short"]))
    rates: dict[tuple[int, int], tuple[int, tuple[Below, ...]]] = {}
    for c, n, count, first in data["rates"]:
        if _count(n) < 1 or _count(c) > n or _count(count) < 1 or (c, n) in rates or not first or len(first) > min(
                count, EXAMPLES):
            raise ValueError(f"a pass rate {c}/{n} of {count} questions that cannot be")
        rates[c, n] = (count, tuple(Below(_count(place), str(qid), c, n) for place, qid in first))
    if (len(short) != len(settings.pass_k) or sum(count for count, _ in rates.values()) != questions
            or single > questions or samples < questions or any(m.n > questions for m in columns)):
        raise ValueError("repeated samples that do not fit the questions")
    return RepeatTotals(columns, questions, samples, short, single, dict(sorted(rates.items())))


def _check(r: PartResult, wants: Wants) -> None:
    """Refuse counts that cannot belong together (a partial edited by hand, or damaged)."""
    t, a = r.tally, r.accounting
    counts = [r.questions, *(getattr(t, name) for name in _COUNTS), *t.labels.values(), a.lines, a.unknown,
              a.duplicates, a.unreadable, a.unreadable_bare, a.bad_retrieved, a.bad_refused]
    if min(counts) < 0:
        raise ValueError("a count is negative")
    # With repeated samples the tally counts samples (a question without a trace: one).
    judged, what = (r.repeats.samples, "samples") if r.repeats is not None else (r.questions, "questions")
    if r.repeats is not None and r.repeats.questions != r.questions:
        raise ValueError(f"repeated samples of {r.repeats.questions} questions for {r.questions}")
    if sum(t.labels.values()) != judged or t.answerable + t.unanswerable != judged:
        raise ValueError(f"the labels ({sum(t.labels.values())}) and the answerable and unanswerable {what} "
                         f"({t.answerable + t.unanswerable}) do not add up to the {judged} {what}")
    if t.answered + t.refused != judged:
        raise ValueError(f"answered ({t.answered}) and refused ({t.refused}) do not add up to the {judged} {what}")
    if wants.rows and len(r.rows) != r.questions:
        raise ValueError(f"{len(r.rows)} rows for {r.questions} questions")


def _read_rows(encoded: list[Any], spill: SpillFolder | None) -> RowFile:
    """Read a partial's rows (in gold order: each place after the one before), letting go of each
    one's JSON as it is read; with ``spill``, every row goes to a file there."""
    writer = RowWriter(None, "") if spill is None else spill.writer("partial")
    last, before = -1, None
    try:
        for n, v in enumerate(encoded):
            row = _read_row(v)
            if type(row.qid) is not str or type(row.answerable) is not bool:
                raise ValueError(f"row {n + 1}: a qid that is not text or an answerable that is not true or false")
            if type(row.place) is not int or row.place < 0:
                raise ValueError(f"row {n + 1} (question {quote(row.qid)}): its place {show_value(row.place)} is no "
                                 "place in the gold set")
            if row.place <= last:
                raise ValueError(f"row {n + 1} (question {quote(row.qid)}) is out of gold order: it comes after "
                                 f"question {quote(before)}")
            last, before = row.place, row.qid
            writer.append(row)
            encoded[n] = None
        return writer.finish(spill_rest=True)
    finally:
        writer.close()


def _decode(data: dict[str, Any], spill: SpillFolder | None = None, rows: bool = True) -> Partial:
    settings = _settings(data["settings"])
    if settings.signature() != data["signature"]:
        raise ValueError("the signature does not match the settings")
    options = data["options"]
    wants = Wants(rows=bool(options["rows"]), by=tuple(options["by"]), samples=int(options["samples"]),
                  targets=tuple((str(m), Direction(d), _float(b)) for m, d, b in options["targets"]))
    if not rows and not wants.by:  # the rows are not needed: not read (a slice is made from them)
        wants = replace(wants, rows=False)
    parts, covers = int(data["parts"]), tuple(int(n) for n in data["covers"])
    if parts < 1 or not covers or list(covers) != sorted(set(covers)) or not 0 <= covers[0] <= covers[-1] < parts:
        raise ValueError(f"covers {list(covers)} is not a set of parts of {parts}")
    r = data["result"]
    families = list(enabled(settings.families))
    tally = AnswerTally()
    for name in _COUNTS:
        setattr(tally, name, int(r["tally"][name]))
    tally.labels = {label: int(r["tally"]["labels"][label.value]) for label in tally.labels}
    tally.shares = _read_moments(r["tally"]["shares"], settings.bootstrap, True)
    a = r["accounting"]
    accounting = Accounting(
        int(a["lines"]), int(a["unknown"]), int(a["duplicates"]), [(int(n), str(q)) for n, q in a["unknown_ids"]],
        [(int(n), str(q)) for n, q in a["duplicate_ids"]], int(a["unreadable"]), int(a["unreadable_bare"]),
        [(int(n), Unreadable(tuple(keys), bool(bare), str(like))) for n, keys, bare, like in a["unreadable_examples"]],
        int(a["bad_retrieved"]), [int(n) for n in a["bad_retrieved_lines"]], int(a["bad_refused"]),
        [int(n) for n in a["bad_refused_lines"]])
    result = PartResult(
        questions=int(r["questions"]), tally=tally, accounting=accounting,
        missing_ids=[(int(n), str(q)) for n, q in r["missing_ids"]],
        rows=_read_rows(r["rows"], spill) if wants.rows else RowFile(),
        columns=[_read_totals(c, settings.bootstrap, spread(family, settings))
                 for c, family in zip(r["columns"], families, strict=True)],
        digests=None if r["digests"] is None else (str(r["digests"][0]), str(r["digests"][1])),
        samples={name: [(_float(key), str(qid), Sample(str(qid), question, claim, _float(value)))
                        for key, qid, question, claim, value in picks] for name, picks in r["samples"].items()},
        scores={name: ScoreTotals(_read_moments(t["values"], settings.bootstrap, True), _count(t["nulls"]))
                for name, t in r["scores"].items()},
        matched_scores=[str(k) for k in r["matched_scores"]],
        score_lines={k: int(n) for k, n in r["score_lines"].items()},
        trace_format=str(r["trace_format"]), mapped_found={k: int(n) for k, n in r["mapped_found"].items()},
        gold_keys={k: (str(f), int(n)) for k, (f, n) in r["gold_keys"].items()},
        trace_keys={k: (str(f), int(n)) for k, (f, n) in r["trace_keys"].items()},
        gold_ragas=bool(r["gold_ragas"]),
        operations=_read_operations(r["operations"], int(r["questions"]) if not settings.sampled else sum(
            tally.labels.values())),
        repeats=_read_repeats(r.get("repeats"), settings),
    )
    _check(result, wants)
    return Partial(parts, covers, settings, wants, _read_source(data["gold"]),
                   {int(part): _read_source(source) for part, source in data["traces"].items()},
                   None if data["scores"] is None else _read_source(data["scores"]), result)
