"""Partial results: one part of the questions scored on its own, written as versioned JSON, and
merged with the other parts into the run that ``ragscore score`` gives in one process.

Part ``i`` of ``n`` holds the questions whose qid ``owner(qid, n)`` gives ``i`` (the split
``--jobs`` uses), and the trace lines for them. A partial keeps what the reports need of its
questions: integer counts, each metric's values summarised exactly (``metrics.moments``: their
count, sum and sum of squares as integers at a binary scale, least and greatest, and the sums of
the Poisson bootstrap's replicates while the questions are few), so that no grouping or order
of merging changes a bit, the statistics of corpus metrics, the worst-question candidates of
every diagnosis, the accounting with its examples, and, when asked for, the per-question rows.

The JSON is a contract: ``{"format": "ragscore-partial", "version": 4, ...}``; a reader refuses
another version. Floats are written as JSON numbers (shortest repr: read back bit for bit), NaN
as null, infinities as the strings "inf" and "-inf"; the integers of exact sums, which outgrow
the 53 bits other JSON readers keep, as hexadecimal strings ("0x1f", "-0x2").
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import count, islice, repeat
from typing import Any, Final

from ragscore.errors import InputError, UsageError
from ragscore.finish import combine
from ragscore.json_paths import Damaged
from ragscore.loaders.corpus import CorpusUse
from ragscore.loaders.gold import line_of
from ragscore.metrics.answer import Outcome
from ragscore.metrics.moments import Moments
from ragscore.metrics.repeats import RepeatTotals
from ragscore.operations import Operations
from ragscore.partial_schema import COUNTS, Source, decode
from ragscore.quoting import json_safe, show_value
from ragscore.results import PartResult, Wants
from ragscore.rows import QuestionRow, RowFile, Rows, SpillFolder
from ragscore.settings import Settings
from ragscore.version import __version__

FORMAT: Final = "ragscore-partial"
VERSION: Final = 4  # 4: the tally counts citing and claim_ok (issue 32)


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
        return len(self.covers) == self.parts  # covers: distinct parts, each below parts (read so, merged so)

    def to_json(self) -> str:
        """Write the partial as versioned JSON (one line)."""
        # json_safe: the input's text (qids, labels, claims) holds no raw DEL, C1 or U+2028 in the file either.
        return json_safe(json.dumps(_encode(self), ensure_ascii=False, allow_nan=False, separators=(",", ":"))) + "\n"

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
        except RecursionError:
            raise InputError(source, "not a ragscore partial: invalid JSON (nested too deeply to read)") from None
        except ValueError as exc:  # an integer of more digits than Python converts (4,300)
            detail = "a number has too many digits" if "digits" in str(exc) else str(exc)
            raise InputError(source, f"not a ragscore partial: invalid JSON ({detail})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(source, f'not a ragscore partial (expected "format": "{FORMAT}")')
        if data.get("version") != VERSION:
            raise InputError(source, f"a ragscore partial of version {show_value(data.get('version'))}; this ragscore "
                                     f"({__version__}) reads version {VERSION}: make the partials again with it")
        try:
            return cls(*decode(data, spill, rows))
        except Damaged as exc:
            raise InputError(source, f"a damaged ragscore partial: {exc}") from None


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
    _one_row_each(partials, names)
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


def _places(rows: RowFile | Rows) -> Iterator[int] | None:
    """The gold places of rows read from partials, in order (None: rows this process made)."""
    if isinstance(rows, RowFile):
        return None if rows.places is None else iter(rows.places)
    parts = [_places(part) for part in rows.parts]
    return None if any(p is None for p in parts) else heapq.merge(*parts)  # type: ignore[arg-type]


def _one_row_each(partials: Sequence[Partial], names: Sequence[str]) -> None:
    """Refuse partials that hold a row of the same question (each is in one part): rows that one
    of them was edited to hold. Rows this process made are not checked; nor are those not read."""
    held = [(places, name) for p, name in zip(partials, names, strict=True)
            if p.wants.rows and (places := _places(p.result.rows)) is not None]
    if len(held) < 2:
        return
    last, before = -1, ""
    tagged = [zip(places, repeat(name)) for places, name in held]
    for place, name in heapq.merge(*tagged):
        if place == last:
            raise UsageError(f"merge: {before} and {name} both hold the row of the question on line "
                             f"{line_of(place)} of the gold set: each question belongs to one part (a partial is "
                             "damaged or edited by hand)")
        last, before = place, name


def missing_parts(partial: Partial) -> str | None:
    """Name the parts a merged partial still lacks (None when it is complete)."""
    if partial.complete:
        return None
    held = set(partial.covers)
    missing = partial.parts - len(held)
    # The first few, found without counting up to ``parts`` (a partial may claim a billion).
    lacking = islice((str(part + 1) for part in count() if part not in held), min(missing, 10))
    shown = ", ".join(lacking) + (", ..." if missing > 10 else "")
    return f"part{'s' * (missing > 1)} {shown} of {partial.parts} missing"


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
    ca, cb = a.result.corpus, b.result.corpus
    if (ca is None) != (cb is None):
        return "one read a --corpus, the other none"
    if ca is not None and cb is not None and ca.sha256 != cb.sha256:
        return f"other corpora (sha256 {ca.sha256[:12]}… and {cb.sha256[:12]}…)"
    ka, kb = a.result.chunks, b.result.chunks
    if (ka is None) != (kb is None):
        return "one read a --chunks, the other none"
    if ka is not None and kb is not None and ka.sha256 != kb.sha256:
        return f"other chunkings (--chunks sha256 {ka.sha256[:12]}… and {kb.sha256[:12]}…)"
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


def _row(r: QuestionRow, grounded: bool = False) -> list[Any]:
    out = [r.place, r.qid, r.question, r.answerable, _outcome(r.outcome), list(r.citations), r.rule.name,
           [None if row is None else _nums(row) for row in r.family_rows], [list(s) for s in r.slices],
           {name: _num(v) for name, v in r.scores.items()}, r.claim, None if r.cited is None else list(r.cited)]
    if r.sampled is not None:  # repeated samples: the question's (a run without them writes what 0.1 wrote)
        q = r.sampled
        out.append([q.n, q.correct, list(q.labels), [None if v is None else _num(v) for v in q.answer],
                    [None if v is None else _num(v) for v in q.repeats]])
    if grounded:  # --metrics grounding: the answer's findings, last
        g = r.grounding
        out.append(None if g is None else [g.evidence, g.passages, g.numbers, [list(f) for f in g.items]])
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
            "tally": {**{name: getattr(r.tally, name) for name in COUNTS},
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
                "refusal_like": acc.refusal_like, "refusal_like_ids": [list(x) for x in acc.refusal_like_ids],
                "retrieving": acc.retrieving, "retrieval_fields": list(acc.retrieval_fields),
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
            "document_ids": dict(r.document_ids),
            "gold_keys": {key: list(v) for key, v in r.gold_keys.items()},
            "trace_keys": {key: list(v) for key, v in r.trace_keys.items()},
            "digests": None if r.digests is None else list(r.digests),
            "rows": [_row(row, "grounding" in p.settings.families) for row in r.rows],
            "operations": None if r.operations is None else _operations(r.operations),
            **({"repeats": _repeats(r.repeats)} if r.repeats is not None else {}),
            **({"corpus": _corpus(r.corpus)} if r.corpus is not None else {}),
            **({"chunks": r.chunks._asdict()} if r.chunks is not None else {}),
            **({"turns": [list(turn) for turn in r.turns]} if r.turns is not None else {}),
            **({"answer_moments": list(map(_moments, r.answer_moments))} if r.answer_moments is not None else {}),
        },
    }


def _corpus(use: CorpusUse) -> dict[str, Any]:
    return {"path": use.path, "sha256": use.sha256, "documents": use.documents, "identified": use.identified,
            "unmatched": use.unmatched, "unmatched_lines": list(use.unmatched_lines),
            "untexted": use.untexted, "untexted_lines": list(use.untexted_lines)}
