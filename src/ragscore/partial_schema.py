"""Reading a partial (``ragscore.partials``): every key checked for its type, its range and what
it must agree with, before anything is built from it.

A partial is a file that can be damaged, edited by hand or written by something else. ``ragscore
merge`` reads it as it reads any input: a value of the wrong type, out of range, or that no run
can make (a hit count above the answered count, trace lines that do not add up) is an input
error naming its key, as ``jq`` reaches it (``result.rows[3][4][1]``, with what it holds), never
a failure later, while the reports are written. Its settings are checked as a settings file's
``[scoring]`` (``config.py``), by the same readers. ``decode`` gives the fields a ``Partial`` is built
from; the inputs' ``Source`` and the tally's ``COUNTS`` are defined here, for both sides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Final, NamedTuple

from ragscore.config import apply_scoring
from ragscore.diagnose import Sample
from ragscore.errors import ConfigError
from ragscore.external import ScoreTotals
from ragscore.input_config import GOLD_CONCEPTS, fields_table, trace_format
from ragscore.json_paths import Damaged, Node, shown
from ragscore.labels import LABEL_ORDER
from ragscore.loaders.chunks import ChunksUse
from ragscore.loaders.corpus import CorpusUse
from ragscore.loaders.shapes import FORMATS, TRACE_CONCEPTS
from ragscore.metrics.answer import AnswerTally, answer_metric_names
from ragscore.metrics.families import Family, Totals, enabled, spread
from ragscore.metrics.moments import Moments, Replicates
from ragscore.metrics.registry import Direction
from ragscore.metrics.repeats import EXAMPLES, Below, RepeatTotals, column_names
from ragscore.metrics.sessions import Turn
from ragscore.metrics.stats import resampling_is_cheap
from ragscore.operations import CONCEPTS as OPERATION_CONCEPTS
from ragscore.operations import Operations, Sketch
from ragscore.partial_rows import (
    LABELS,
    RowReader,
    read_rows,
)
from ragscore.results import CLAIM_PICKS, Accounting, PartResult, Unreadable, Wants
from ragscore.results import EXAMPLES as ACCOUNTING_EXAMPLES
from ragscore.rows import SpillFolder
from ragscore.settings import SAMPLES, Settings
from ragscore.tables import SettingsTable

COUNTS: Final = tuple(name for name in AnswerTally.__dataclass_fields__ if name not in ("shares", "labels"))


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


# ragscore.owner(qid, n) is crc32(qid) % n: past 2**32 parts, no question belongs to a part.
MAX_PARTS: Final = 2**32
_MAX_SCALE: Final = 1074  # a double is an integer times 2**-1074 at least
# Every per-question value a run holds is at most this in magnitude (scores: loaders.scores.MAX_SCORE),
# so no sum of a partial can overflow a double.
_MAX_VALUE: Final = 1e15
_SHA256: Final = re.compile(r"[0-9a-f]{64}")


def _less(a: Node, b: Node) -> None:
    """Refuse a count ``a`` greater than the count ``b`` it is part of."""
    if a.value > b.value:
        raise a.fail(f"({a.value:,}) is greater than {b.named()} ({b.value:,})")


def _equal(total: int, what: str, node: Node) -> None:
    if node.value != total:
        raise node.fail(f"({node.value:,}) is not {what} ({total:,})")


# --- settings, options, sources ----------------------------------------------------------------


def _settings(node: Node) -> Settings:
    """Read the settings as a settings file's ``[scoring]``, ``[trace]`` and ``[gold.fields]`` are
    read, then check that they are written as ragscore writes them."""
    written = Settings().as_dict()
    fields = node.fields(list(written), ("repeats", "pass_k", "session", "judge"))
    data: dict[str, Any] = node.value
    source = "<partial>"
    scoring = {key: value for key, value in data.items()
               if key not in ("trace_format", "trace_fields", "gold_fields", "judge")}
    judge = None
    if "judge" in fields:
        parts = fields["judge"].fields(("endpoint", "model", "rubric"))
        judge = tuple((key, parts[key].text()) for key in ("endpoint", "model", "rubric"))
    try:
        settings = apply_scoring(Settings(), SettingsTable(scoring, source, "", "settings"))
        fmt = trace_format(data["trace_format"], lambda message: ConfigError(source, f'[settings] "trace_format": '
                                                                                     f"{message}"))
        mapped = {}
        for key, concepts in (("trace_fields", tuple(TRACE_CONCEPTS)), ("gold_fields", GOLD_CONCEPTS)):
            table = data[key]
            if type(table) is not dict:
                raise fields[key].expected("an object of concept: path")
            mapped[key] = fields_table(table, concepts, SettingsTable(table, source, "", f"settings.{key}").error)
    except ConfigError as exc:
        raise Damaged(exc.message) from None
    if ("repeats" in data or "pass_k" in data) and settings.repeats != SAMPLES:
        raise fields.get("repeats", fields.get("pass_k", node)).fail(
            'is written only with repeated samples (repeats = "samples", with pass_k)')
    if settings.repeats == SAMPLES and "pass_k" not in data:
        raise Node(None, node, "pass_k").fail('is missing (repeats = "samples")')
    settings = replace(settings, trace_format=fmt, trace_fields=mapped["trace_fields"],
                       gold_fields=mapped["gold_fields"], judge=judge)
    canonical = settings.as_dict()
    for key, field in fields.items():
        if canonical.get(key) != field.value:  # "metrics": ["all"], cutoffs out of order, a seed as a number
            raise field.fail("is not written as ragscore writes these settings")
    return settings


def _wants(node: Node) -> Wants:
    f = node.fields(("rows", "by", "samples", "targets"))
    targets = []
    for target in f["targets"].items():
        metric, direction, bound = target.record(("metric", "direction", "bound"), "a diagnosis target")
        targets.append((metric.text(), direction.choice({d.value: d for d in Direction}, '"higher" or "lower"'),
                        bound.number()))
    return Wants(rows=f["rows"].flag(), by=tuple(n.text() for n in f["by"].items()), samples=f["samples"].count(),
                 targets=tuple(targets))


def _source(node: Node) -> Source:
    f = node.fields(("path", "sha256"), ("records", "specs", "files", "starts"))
    records = f["records"].flag() if "records" in f else False
    if "records" in f and not records:
        raise f["records"].fail("is written only when true")
    several = [key for key in ("specs", "files", "starts") if key in f]
    if several and len(several) != 3:
        missing = next(key for key in ("specs", "files", "starts") if key not in f)
        raise Node(None, node, missing).fail('is missing (several files: "specs", "files" and "starts")')
    specs = tuple(n.text() for n in f["specs"].items()) if several else ()
    files = tuple((path.text(), digest.text()) for path, digest in (
        n.record(("path", "sha256"), "a file") for n in f["files"].items())) if several else ()
    starts = tuple(n.count() for n in f["starts"].items()) if several else ()
    if len(starts) != len(files):
        raise f["starts"].fail(f"holds {len(starts):,} lines for {len(files):,} files")
    sha256 = f["sha256"].text()
    if not records and not _SHA256.fullmatch(sha256):
        raise f["sha256"].expected("a sha256 in hexadecimal (64 digits)")
    return Source(f["path"].text(), sha256, records, specs, files, starts)


# --- summaries ----------------------------------------------------------------------------------


def _scale(node: Node) -> int:
    scale = node.count()
    if scale > _MAX_SCALE:
        raise node.fail(f"is a binary scale of {scale:,}, more than a double has ({_MAX_SCALE})")
    return scale


def _moments(node: Node, resamples: int, spread: bool) -> Moments:
    """Read a summary of values, refusing one that no run can make (its intervals could not be computed)."""
    f = node.fields(("n", "scale", "total", "squares", "low", "high", "replicates"))
    n = f["n"].count()
    if not n:
        if f["total"].value != "0x0" or f["squares"].value is not None or f["replicates"].value is not None:
            raise node.fail("is a summary of no value with sums")
        return Moments()
    scale, total = _scale(f["scale"]), f["total"].hexadecimal()
    squares = f["squares"].optional(Node.hexadecimal)
    low, high = f["low"].number(), f["high"].number()
    if not -_MAX_VALUE <= low <= high <= _MAX_VALUE:
        raise node.fail(f"holds values from {low!r} to {high!r}, not within ±{_MAX_VALUE:g}")
    if not Fraction(low) * n <= Fraction(total, 1 << scale) <= Fraction(high) * n:
        raise f["total"].fail("is a sum outside what its values can add up to")
    if (squares is None) == spread:
        raise f["squares"].fail("is missing: the sum of squares of a mean" if spread else
                                "is a sum of squares of a count")
    largest = max(abs(Fraction(low)), abs(Fraction(high)))
    if squares is not None and not Fraction(total, 1 << scale) ** 2 <= n * Fraction(squares, 1 << 2 * scale) <= (
            n * largest) ** 2:
        raise f["squares"].fail("is a sum of squares that its values cannot have")
    replicates = None
    if f["replicates"].value is not None:
        r = f["replicates"].fields(("scale", "sums", "weights"))
        if not spread or not resampling_is_cheap(n, resamples):
            raise f["replicates"].fail("are bootstrap replicates where there are none")
        sums = tuple(x.hexadecimal() for x in r["sums"].items())
        weights = tuple(w.count() for w in r["weights"].items())
        if len(sums) != resamples or len(weights) != resamples:
            raise f["replicates"].fail(f"hold {len(sums)} sums and {len(weights)} weights for {resamples} resamples")
        rscale = _scale(r["scale"])
        for index, (x, w) in enumerate(zip(sums, weights, strict=True)):
            if w > 5 * n or not Fraction(low) * w <= Fraction(x, 1 << rscale) <= Fraction(high) * w:
                raise Node(x, r["sums"], index).fail("is a replicate sum that its values cannot make")
        replicates = Replicates(rscale, sums, weights)
    return Moments(n, scale, total, squares, low, high, replicates)


def _statistics_from(family: Family, settings: Settings) -> int:
    """Where a family's row holds counts (the text family's corpus statistics) rather than values."""
    if family.name != "text":
        return family.width(settings)
    from ragscore.metrics.overlap import text_metric_names  # the text family is on: imported anyway

    return len(text_metric_names())


def _totals(node: Node, resamples: int, spread: tuple[bool, ...], questions: int, counts_from: int,
            undefined: bool = False) -> Totals:
    """Read one family's totals (``undefined``: the family leaves some values undefined, so a column may count fewer
    questions than the family)."""
    f = node.fields(("width", "counted", "columns"))
    width, counted = f["width"].count(), f["counted"].count(questions)
    columns = f["columns"].items()
    if width != len(spread) or len(columns) != width:
        raise node.fail(f"holds {len(columns)} columns of width {width}, for {len(spread)} values per question")
    summaries = tuple(_moments(c, resamples, s) for c, s in zip(columns, spread, strict=True))
    for index, (column, summary) in enumerate(zip(columns, summaries, strict=True)):
        if summary.n > counted if undefined else summary.n != counted:
            raise column.fail(f"counts {summary.n:,} questions, not its family's {counted:,}")
        if index >= counts_from and summary.n and summary.low < 0:
            raise column.fail(f"sums counts from {summary.low!r}: a count is never negative")
    return Totals(width, counted, summaries)


def _operations(node: Node, questions: int) -> Operations | None:
    if node.value is None:
        return None
    f = node.fields(("traced", "bad", "sums", "sketch"))
    traced, bad = f["traced"].count(questions), f["bad"].count()
    nodes = f["sums"].items()
    if len(nodes) != len(OPERATION_CONCEPTS):
        raise f["sums"].fail(f"holds {len(nodes)} sums, for {len(OPERATION_CONCEPTS)} measures")
    sums = tuple(_moments(m, 1, False) for m in nodes)
    for m, summary in zip(nodes, sums, strict=True):
        if summary.n > traced or summary.n and summary.low < 0:
            raise m.fail(f"sums {summary.n:,} values from {summary.low!r}, for {traced:,} traced questions")
    sketch = f["sketch"].fields(("zeros", "buckets"))
    buckets: dict[int, int] = {}
    for pair in sketch["buckets"].items():
        index, count = pair.record(("index", "count"), "a sketch bucket")
        # Values from 5e-324 to 1e15 fill buckets -37,300 to 1,730: beyond them, none (and γ**index overflows).
        if type(index.value) is not int or not -38_000 <= index.value <= 1_800:
            raise pair.fail(f"is a sketch bucket {shown(index.value)} that no value fills")
        if index.value in buckets:
            raise pair.fail(f"is the sketch bucket {index.value} again")
        buckets[index.value] = count.count()
    made = Sketch(buckets, sketch["zeros"].count())
    if made.count != sums[0].n:
        raise f["sketch"].fail(f"holds {made.count:,} latencies, for {sums[0].n:,}")
    return Operations(traced, bad, sums, None, made)


def _repeats(node: Node | None, settings: Settings, questions: int) -> RepeatTotals | None:
    if node is None:
        if settings.sampled:
            raise Damaged('"result.repeats" is missing: the partial was scored with repeats = "samples"')
        return None
    if not settings.sampled:
        raise node.fail("are repeated samples, in a partial scored without them")
    f = node.fields(("columns", "questions", "samples", "short", "single", "rates"))
    names = column_names(settings, answer_metric_names(settings))
    nodes = f["columns"].items()
    if len(nodes) != len(names):
        raise f["columns"].fail(f"holds {len(nodes)} summaries of repeated samples, for {len(names)} metrics")
    columns = tuple(_moments(m, settings.bootstrap, True) for m in nodes)
    f["questions"].count()
    _equal(questions, '"result.questions"', f["questions"])
    samples, single = f["samples"].count(), f["single"].count(questions)
    short = tuple(n.count(questions) for n in f["short"].items())
    if len(short) != len(settings.pass_k):
        raise f["short"].fail(f"holds {len(short)} counts, for {len(settings.pass_k)} values of pass_k")
    rates: dict[tuple[int, int], tuple[int, tuple[Below, ...]]] = {}
    for rate in f["rates"].items():
        c, n, count, first = rate.record(("correct", "samples", "questions", "first"), "a pass rate")
        key, times = (c.count(), n.count()), count.count()
        if key[1] < 1 or key[0] > key[1] or times < 1 or key in rates:
            raise rate.fail(f"is a pass rate {key[0]}/{key[1]} of {times} questions that cannot be")
        listed = first.items(min(times, EXAMPLES))
        if not listed:
            raise first.fail("names no question")
        rates[key] = (times, tuple(Below(place.count(), qid.text(), key[0], key[1]) for place, qid in (
            b.record(("place", "qid"), "a question below a pass rate") for b in listed)))
    if sum(count for count, _ in rates.values()) != questions:
        raise f["rates"].fail(f"count {sum(count for count, _ in rates.values()):,} questions, not {questions:,}")
    if samples < questions:
        raise f["samples"].fail(f"({samples:,}) is less than the questions ({questions:,})")
    for m, summary in zip(nodes, columns, strict=True):
        if summary.n > questions:
            raise m.fail(f"counts {summary.n:,} questions, of {questions:,}")
    return RepeatTotals(columns, questions, samples, short, single, dict(sorted(rates.items())))


# --- counts ---------------------------------------------------------------------------------------


def _tally(node: Node, resamples: int) -> tuple[AnswerTally, dict[str, Node]]:
    f = node.fields((*COUNTS, "labels", "shares"))
    tally = AnswerTally()
    for name in COUNTS:
        setattr(tally, name, f[name].count())
    labels = f["labels"].fields(list(LABELS))
    tally.labels = {label: labels[label.value].count() for label in LABEL_ORDER}
    tally.shares = _moments(f["shares"], resamples, True)
    if tally.shares.n and not 0 <= tally.shares.low <= tally.shares.high <= 1:
        raise f["shares"].fail("holds citation shares that are not from 0 to 1")
    return tally, {**f, **{f"labels.{key}": n for key, n in labels.items()}}


def _check_tally(t: dict[str, Node], judged: int, what: str) -> None:
    """Refuse counts that no run's questions add up to (``AnswerTally.add_packed`` counts them)."""
    for name in ("answerable", "answered"):  # each with its complement adds up to the questions
        other = {"answerable": "unanswerable", "answered": "refused"}[name]
        if t[name].value + t[other].value != judged:
            raise t[name].fail(f"({t[name].value:,}) and {t[other].named()} ({t[other].value:,}) do not add up to "
                               f"the {judged:,} {what}")
    for part, whole in (("hit", "answered"), ("hit", "answerable"), ("contained", "answered"),
                        ("contained", "answerable"), ("answered_unanswerable", "answered"),
                        ("answered_unanswerable", "unanswerable"), ("refused_answerable", "refused"),
                        ("refused_answerable", "answerable"), ("full_recall", "answerable"),
                        ("fabricated", "answered"), ("forbidden", "answered"), ("compliant", "traced"),
                        ("labels.OK", "answered"), ("missing", "refused"), ("citing", "answered"),
                        ("claim_ok", "answered")):
        _less(t[part], t[whole])
    answered_answerable = t["answered"].value - t["answered_unanswerable"].value
    for part in ("hit", "contained", "claim_ok"):  # counted over the answered answerable questions
        if t[part].value > answered_answerable:
            raise t[part].fail(f"({t[part].value:,}) is greater than the answered answerable {what} "
                               f"({answered_answerable:,})")
    if answered_answerable + t["refused_answerable"].value != t["answerable"].value:
        raise t["refused_answerable"].fail(f"({t['refused_answerable'].value:,}) and the answered answerable {what} "
                                           f"({answered_answerable:,}) do not add up to {t['answerable'].named()} "
                                           f"({t['answerable'].value:,})")
    labels = sum(t[f"labels.{label.value}"].value for label in LABEL_ORDER)
    if labels != judged:
        raise t["labels"].fail(f"add up to {labels:,}, not the {judged:,} {what}")
    _equal(t["labels.MISSING_TRACE"].value, t["labels.MISSING_TRACE"].named(), t["missing"])
    if t["traced"].value + t["missing"].value != judged:
        raise t["traced"].fail(f"({t['traced'].value:,}) and {t['missing'].named()} ({t['missing'].value:,}) do not "
                               f"add up to the {judged:,} {what}")


def _accounting(node: Node, traced: int) -> Accounting:
    f = node.fields(("lines", "unknown", "duplicates", "unknown_ids", "duplicate_ids", "unreadable",
                     "unreadable_bare", "unreadable_examples", "bad_retrieved", "bad_retrieved_lines", "bad_refused",
                     "bad_refused_lines", "refusal_like", "refusal_like_ids", "retrieving", "retrieval_fields"))
    lines = f["lines"].count()
    for name in ("unknown", "duplicates", "unreadable", "bad_retrieved", "bad_refused", "refusal_like"):
        f[name].count()
        _less(f[name], f["lines"])
    f["unreadable_bare"].count()
    _less(f["unreadable_bare"], f["unreadable"])
    # Each line owned by the part matched no question, was replaced by a later one, or is the trace of a question.
    if f["unknown"].value + f["duplicates"].value + traced != lines:
        raise f["lines"].fail(f"({lines:,}) is not the unknown ({f['unknown'].value:,}) and duplicate "
                              f"({f['duplicates'].value:,}) traces and the traced questions ({traced:,})")

    def examples(key: str, count: str) -> list[Node]:
        listed = f[key].items(min(ACCOUNTING_EXAMPLES, f[count].value))
        return listed

    def ids(key: str, count: str) -> list[tuple[int, str]]:
        return [(line.count(), qid.text()) for line, qid in (
            n.record(("line", "qid"), "an example") for n in examples(key, count))]

    unreadable = []
    for n in examples("unreadable_examples", "unreadable"):
        line, keys, bare, like = n.record(("line", "keys", "bare", "looks_like"), "an unreadable trace")
        unreadable.append((line.count(), Unreadable(tuple(k.text() for k in keys.items()), bare.flag(), like.text())))
    return Accounting(
        lines, f["unknown"].value, f["duplicates"].value, ids("unknown_ids", "unknown"),
        ids("duplicate_ids", "duplicates"), f["unreadable"].value, f["unreadable_bare"].value, unreadable,
        f["bad_retrieved"].value, [n.count() for n in examples("bad_retrieved_lines", "bad_retrieved")],
        f["bad_refused"].value, [n.count() for n in examples("bad_refused_lines", "bad_refused")],
        f["refusal_like"].value, [(line.count(), qid.text(), pattern.text()) for line, qid, pattern in (
            n.record(("line", "qid", "pattern"), "an example") for n in examples("refusal_like_ids", "refusal_like"))],
        _retrieving(f["retrieving"], f["lines"]), [n.text() for n in f["retrieval_fields"].items(ACCOUNTING_EXAMPLES)])


def _retrieving(node: Node, lines: Node) -> int:
    """Read the count of traces that retrieved something readable (at most the part's lines)."""
    count = node.count()
    _less(node, lines)
    return count


def _samples(node: Node, wants: Wants) -> dict[str, list[tuple[float, str, Sample]]]:
    targets = {metric for metric, _, _ in wants.targets}
    if "precision" in targets:  # its worst questions by the claims alone are kept too
        targets.add(CLAIM_PICKS)
    out: dict[str, list[tuple[float, str, Sample]]] = {}
    for name, picks in node.mapping():
        if name not in targets:
            raise picks.fail("are the worst questions of a metric that no diagnosis target names")
        out[name] = []
        for pick in picks.items():
            key, qid, question, claim, value = pick.record(("key", "qid", "question", "claim", "value"),
                                                           "a diagnosis sample")
            for number in (key, value):
                if not -_MAX_VALUE <= number.number() <= _MAX_VALUE:
                    raise number.expected(f"a number within ±{_MAX_VALUE:g}")
            out[name].append((key.number(), qid.text(), Sample(qid.value, question.optional_text(),
                                                                claim.optional_text(), value.number())))
    return out


# --- rows ---------------------------------------------------------------------------------------


# --- the partial -------------------------------------------------------------------------------

_TOP: Final = ("format", "version", "ragscore", "signature", "parts", "covers", "settings", "options", "gold", "traces",
               "scores", "result")
_RESULT: Final = ("questions", "trace_format", "gold_ragas", "tally", "accounting", "missing_ids", "columns", "samples",
                  "scores", "matched_scores", "score_lines", "mapped_found", "document_ids", "gold_keys", "trace_keys",
                  "digests", "rows", "operations")


class Decoded(NamedTuple):
    """A partial's fields, checked (``Partial`` is built from them, in field order)."""

    parts: int
    covers: tuple[int, ...]
    settings: Settings
    wants: Wants
    gold: Source
    traces: dict[int, Source]
    scores: Source | None
    result: PartResult


def decode(data: Any, spill: SpillFolder | None = None, rows: bool = True) -> Decoded:
    """Check every key of a partial's JSON, then give its fields (``Damaged`` names the first key that is
    wrong)."""
    top = Node(data).fields(_TOP)
    top["ragscore"].text()
    settings = _settings(top["settings"])
    if top["signature"].value != settings.signature():
        raise top["signature"].fail("does not match the settings")
    wants = _wants(top["options"])
    if not rows and not wants.by:  # the rows are not needed: not read (a slice is made from them)
        wants = replace(wants, rows=False)
    parts = top["parts"].count(MAX_PARTS)
    if parts < 1:
        raise top["parts"].expected("a count of parts, at least 1")
    covers = tuple(n.count(parts - 1) for n in top["covers"].items(parts))
    if not covers or list(covers) != sorted(set(covers)):
        raise top["covers"].fail(f"({list(covers)[:10]}) is not a set of parts in increasing order")
    traces = {}
    for key, source in top["traces"].mapping():
        if not key.isdigit() or key != str(int(key)) or int(key) not in covers:
            raise source.fail(f'is not the traces of a part the partial covers ("covers": {list(covers)[:10]})')
        traces[int(key)] = _source(source)
    if len(traces) != len(covers):
        raise top["traces"].fail(f"name the traces of {len(traces):,} parts, for the {len(covers):,} it covers")
    if len({source.records for source in traces.values()}) > 1:
        raise top["traces"].fail("are trace files in some parts and records in others")
    gold, scores = _source(top["gold"]), top["scores"].optional(_source)
    return Decoded(parts, covers, settings, wants, gold, dict(sorted(traces.items())), scores,
                   _result(top["result"], settings, wants, spill))


def _result(node: Node, settings: Settings, wants: Wants, spill: SpillFolder | None) -> PartResult:
    r = node.fields(_RESULT, ("repeats", "corpus", "chunks", "turns", "answer_moments"))
    questions = r["questions"].count()
    tally, counts = _tally(r["tally"], settings.bootstrap)
    repeats = _repeats(r.get("repeats"), settings, questions)
    # With repeated samples the tally counts samples (a question without a trace: one).
    judged, what = (repeats.samples, "samples") if repeats is not None else (questions, "questions")
    _check_tally(counts, judged, what)
    families = list(enabled(settings.families))
    columns = r["columns"].items()
    if len(columns) != len(families):
        raise r["columns"].fail(f"holds {len(columns)} families' totals, for the {len(families)} of the settings")
    totals = [_totals(c, settings.bootstrap, spread(family, settings), questions, _statistics_from(family, settings),
                      family.undefined) for c, family in zip(columns, families, strict=True)]
    scores = {name: _score_totals(t, settings.bootstrap, questions) for name, t in r["scores"].mapping()}
    missing = r["missing_ids"].items(min(ACCOUNTING_EXAMPLES, tally.missing))
    result = PartResult(
        questions=questions, tally=tally, accounting=_accounting(r["accounting"], tally.traced),
        missing_ids=[(place.count(), qid.text()) for place, qid in (
            n.record(("place", "qid"), "a question without a trace") for n in missing)],
        columns=totals,
        digests=r["digests"].optional(_digests),
        samples=_samples(r["samples"], wants),
        scores=scores,
        matched_scores=[k.text() for k in r["matched_scores"].items()],
        score_lines={k: n.count() for k, n in r["score_lines"].mapping()},
        trace_format=r["trace_format"].choice({f: f for f in FORMATS}, "a trace format (" + ", ".join(FORMATS) + ")"),
        mapped_found={k: n.count() for k, n in r["mapped_found"].mapping()},
        document_ids={k: n.count() for k, n in r["document_ids"].mapping()},
        gold_keys={k: _near_miss(n) for k, n in r["gold_keys"].mapping()},
        trace_keys={k: _near_miss(n) for k, n in r["trace_keys"].mapping()},
        gold_ragas=r["gold_ragas"].flag(),
        operations=_operations(r["operations"], judged),
        repeats=repeats,
        corpus=_corpus(r["corpus"]) if "corpus" in r else None,
        chunks=_chunks(r["chunks"]) if "chunks" in r else None,
        turns=_turns(r, settings, questions),
        answer_moments=[_moments(m, settings.bootstrap, True) for m in r["answer_moments"].items(
            len(answer_metric_names(settings)) + 1)] if "answer_moments" in r else None,
    )
    if result.answer_moments is not None and (settings.session is None or len(result.answer_moments) != len(
            answer_metric_names(settings)) + 1):
        raise r["answer_moments"].fail("are written only with a session field, one for each answer metric and "
                                       "one for precision by the claims alone")
    if wants.rows:  # last, as they may be many (and go to disk): a merge that lists no question reads none
        result.rows = read_rows(r["rows"], spill, RowReader(settings, wants, r["rows"], totals, scores))
        if len(result.rows) != questions:
            raise r["rows"].fail(f"holds {len(result.rows):,} rows, for {questions:,} questions")
    return result


def _corpus(node: Node) -> CorpusUse:
    f = node.fields(("path", "sha256", "documents", "identified", "unmatched", "unmatched_lines", "untexted",
                     "untexted_lines"))
    return CorpusUse(f["path"].text(), f["sha256"].text(), f["documents"].count(), f["identified"].count(),
                     f["unmatched"].count(),
                     [n.count() for n in f["unmatched_lines"].items(ACCOUNTING_EXAMPLES)], f["untexted"].count(),
                     [n.count() for n in f["untexted_lines"].items(ACCOUNTING_EXAMPLES)])


def _turns(r: dict[str, Node], settings: Settings, questions: int) -> list[Turn] | None:
    """Read a part's turns (--session): each question of it that has a session, in file order."""
    if settings.session is None:
        if "turns" in r:
            raise r["turns"].fail("are written only with a session field (settings.session)")
        return None
    if "turns" not in r:
        raise Node(None, None, "result.turns").fail("is missing (settings.session is given)")
    out = []
    for node in r["turns"].items(questions):
        place, session, turn, passed, total = node.record(Turn._fields, "a turn")
        number = None if turn.value is None else turn.count()
        samples = total.count()
        right = passed.count(samples)
        if not samples or samples != 1 and settings.repeats != SAMPLES:
            raise total.expected("a count of samples of at least 1" if settings.repeats == SAMPLES
                                 else "1 (without repeated samples a question is judged once)")
        out.append(Turn(place.count(), session.text(), number, right, samples))
    if [t.place for t in out] != sorted({t.place for t in out}):
        raise r["turns"].fail("are not in file order, each place once")
    return out


def _chunks(node: Node) -> ChunksUse:
    f = node.fields(ChunksUse._fields)
    return ChunksUse(f["path"].text(), f["sha256"].text(), f["chunks"].count())


def _digests(node: Node) -> tuple[str, str]:
    gold, traces = node.record(("gold", "traces"), "the digests")
    return gold.text(), traces.text()


def _score_totals(node: Node, resamples: int, questions: int) -> ScoreTotals:
    f = node.fields(("values", "nulls"))
    values = _moments(f["values"], resamples, True)
    if values.n > questions:  # a question's score (with samples: their mean)
        raise f["values"].fail(f"counts {values.n:,} scores, for {questions:,} questions")
    return ScoreTotals(values, f["nulls"].count())


def _near_miss(node: Node) -> tuple[str, int]:
    field, line = node.record(("field", "line"), "a near miss")
    return field.text(), line.count()


# The integer counts of an AnswerTally (its shares and labels are written apart).
