"""Score a baseline and a candidate trace file against one gold set, side by side.

Each worker loads its share of the gold set once and judges both trace files against it, so
question ``i`` of a worker is the same question in both runs. It keeps a 2-byte code per
question and run (``metrics.answer.pack``) and the few per-question values a code does not
imply; the parent counts the pairs of codes, which is all the paired tests of the answer
metrics need (``compare.Paired``). Nothing holds a row per question, so a million questions
compare in about the memory of one scoring run.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from itertools import chain
from typing import Final

from ragscore.comparison import Paired
from ragscore.errors import InputError, SideInputError
from ragscore.evaluate import detected, error_key, load_part_gold, no_cycle_collection, open_input, score_traces
from ragscore.finish import merge
from ragscore.labels import LABEL_MEANINGS
from ragscore.loaders.chunks import load_scoring_chunks
from ragscore.loaders.jsonl import InputFile, NeedsOneProcess
from ragscore.loaders.records import Records
from ragscore.loaders.scores import ScoreFile
from ragscore.metrics.answer import answer_metric_names, code_passes, code_values, unpack
from ragscore.metrics.sessions import Turn
from ragscore.metrics.stats import PairSums, resampling_is_cheap
from ragscore.parallel import run_parts
from ragscore.results import Evaluation, Packed, PartResult, Spec, Wants
from ragscore.settings import Settings

_WANTS = Wants(packed=True)


@dataclass(slots=True)
class PairedPart:
    """One worker's share of both runs, and the questions whose correctness changed."""

    baseline: PartResult = field(default_factory=PartResult)
    candidate: PartResult = field(default_factory=PartResult)
    places: array[int] = field(default_factory=lambda: array("q"))  # gold place of each question, in order
    fixed: list[tuple[int, str]] = field(default_factory=list)   # (place, qid)
    broken: list[tuple[int, str]] = field(default_factory=list)
    flips: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # qid: labels before, after; the reason
    one_process: bool = False
    digests: tuple[str, str, str] | None = None  # gold, baseline, candidate: when read whole


Scores = tuple[ScoreFile | None, ScoreFile | None]  # each run's --scores file: the baseline's, the candidate's
NO_SCORES: Final[Scores] = (None, None)


def run_wants(scores: Scores) -> tuple[Wants, Wants]:
    """What each run's part keeps: its packed values, its --scores file joined (the baseline's, the candidate's)."""
    return (_WANTS if scores[0] is None else Wants(packed=True, scores=scores[0]),
            _WANTS if scores[1] is None else Wants(packed=True, scores=scores[1]))


def compare_part(
    gold_spec: Spec, baseline_spec: Spec, trace_spec: Spec, settings: Settings, part: int = 0, parts: int = 1,
    scores: Scores = NO_SCORES,
) -> PairedPart:
    """Judge worker ``part``'s questions in both runs; input errors come back as data."""
    hashed = parts == 1  # with several parts the parent hashes the inputs
    files = (open_input(gold_spec, hashed), open_input(baseline_spec, hashed), open_input(trace_spec, hashed))
    return compare_files(*files, settings, part, parts, scores)


def compare_files(
    gold_file: InputFile | Records, baseline_file: InputFile | Records, trace_file: InputFile | Records,
    settings: Settings, part: int = 0, parts: int = 1, scores: Scores = NO_SCORES,
) -> PairedPart:
    """Judge part ``part`` of the questions in both runs, from inputs opened for it (see ``compare_part``)."""
    out = PairedPart()
    hashed = parts == 1
    base_wants, cand_wants = run_wants(scores)
    runs = ((out.candidate, trace_file, cand_wants), (out.baseline, baseline_file, base_wants))
    phase = 0
    try:
        if parts > 1 and any(s is not None and s.join == "question" for s in scores):
            raise NeedsOneProcess  # scores joined by question text: one process holds every question
        with no_cycle_collection():
            joined = next((w for w in (cand_wants, base_wants) if w.scores is not None and w.scores.join == "question"),
                          cand_wants)
            gold = load_part_gold(gold_file, settings, joined, part, parts)
            for result, _, _ in runs:
                result.questions = len(gold.items)
            chunks = load_scoring_chunks(settings.chunks) if settings.chunks is not None else None
            for result, _, _ in runs:
                result.chunks = chunks.use if chunks is not None else None
            # The candidate first: its errors are reported before the baseline's.
            for phase, (result, trace_file, wants) in enumerate(runs, 1):  # noqa: B007 - the except reads phase
                score_traces(gold, trace_file, settings, wants, part, parts, result, chunks=chunks)
    except NeedsOneProcess:
        out.one_process = True
        return out
    except InputError as exc:
        # A gold error belongs to both runs; merge() raises it (phase 0) before any trace error.
        for result in (out.candidate, out.baseline) if phase == 0 else (runs[phase - 1][0],):
            failed = exc if phase == 0 or isinstance(exc, SideInputError) else detected(exc, settings.trace_format,
                                                                                        result.trace_format)
            result.error = error_key(failed, min(phase, 1), runs[phase - 1][1].located(failed) if phase else failed)
        return out
    out.places = array("q", gold.places)
    base, cand = _both_packed(out)
    for position, (b, c) in enumerate(zip(base.codes, cand.codes, strict=True)):
        if settings.sampled:
            break  # a question's correctness is a pass rate: no McNemar
        if code_passes(b) != code_passes(c):
            item = gold.items[position]
            (out.broken if code_passes(b) else out.fixed).append((gold.places[position], item.qid))
            after = unpack(c)[0].label  # the code keeps the label, not the texts a full reason quotes
            out.flips[item.qid] = (unpack(b)[0].label.value, after.value, LABEL_MEANINGS[after])
    if hashed:
        out.digests = (gold_file.sha256, runs[1][1].sha256, runs[0][1].sha256)
    return out


def score_pair(
    gold_spec: Spec, baseline_spec: Spec, trace_spec: Spec, settings: Settings, jobs: int,
    keep_columns: bool = False, scores: Scores = NO_SCORES,
) -> tuple[Evaluation, Evaluation, Paired]:
    """Score both runs (with ``jobs`` processes) and line them up question by question
    (``keep_columns``: keep each metric's per-question values however many questions there are; ``scores``: each
    run's --scores file, the baseline's and the candidate's)."""
    specs = (gold_spec, baseline_spec, trace_spec)
    paths = [spec for spec in specs if not isinstance(spec, Records)]  # workers split files, not records in memory
    parts: list[PairedPart] = []
    files: tuple[InputFile | Records, ...] | None = None
    if jobs > 1 and len(paths) == len(specs):
        parts, read = run_parts(partial(compare_part, *specs, settings, parts=jobs, scores=scores), jobs, paths)
        files = read
        if any(p.one_process for p in parts):  # a trace joins by question text: one process holds all
            parts, files = [], None
    # No digests only when a part stopped at an input error, which the merges below raise.
    if not parts:
        files = (open_input(gold_spec), open_input(baseline_spec), open_input(trace_spec))
        parts = [compare_files(*files, settings, scores=scores)]
        digests = parts[0].digests or ("", "", "")
    elif files is not None:
        digests = (files[0].sha256, files[1].sha256, files[2].sha256)
    else:
        files, digests = (open_input(gold_spec), open_input(baseline_spec), open_input(trace_spec)), ("", "", "")
    gold, baseline_file, trace_file = files
    # Errors surface here, the candidate's (and the gold set's) first.
    base_wants, cand_wants = run_wants(scores)
    flips = {qid: flip for p in parts for qid, flip in p.flips.items()}
    candidate = merge([p.candidate for p in parts], gold, trace_file, settings, cand_wants, (digests[0], digests[2]))
    baseline = merge([p.baseline for p in parts], gold, baseline_file, settings, base_wants, (digests[0], digests[1]))
    cites = (not baseline.tally.cites_nothing, not candidate.tally.cites_nothing)
    # With sessions the tests resample whole sessions: each metric's values are kept, however many questions.
    paired = replace(_pair(parts, settings, keep_columns or settings.session is not None, cites), flips=flips)
    if candidate.turns is not None:  # a session either run's traces name (the candidate's first)
        places = sorted(place for p in parts for place in p.places)
        paired = replace(paired, groups=session_groups(places, [*(baseline.turns or ()), *candidate.turns]))
    return baseline, candidate, paired


def session_groups(places: Sequence[int], turns: Sequence[Turn]) -> tuple[tuple[int, ...], ...]:
    """The indices (into questions at ``places``, in order) of each session's questions, in the order of its first
    question; a question without a session is one of its own."""
    session_of = {t.place: t.session for t in turns}
    groups: dict[object, list[int]] = {}
    for index, place in enumerate(places):
        named = session_of.get(place)
        groups.setdefault(("session", named) if named is not None else ("place", place), []).append(index)
    return tuple(tuple(g) for g in groups.values())


def _pair(
    parts: list[PairedPart], settings: Settings, keep_columns: bool = False, cites: tuple[bool, bool] = (True, True),
) -> Paired:
    """Turn the parts' codes and values into the paired sums (and, when cheap, the columns);
    ``cites`` says whether the baseline and the candidate cite anything (``code_values``)."""
    names = answer_metric_names(settings)
    packed = [_both_packed(p) for p in parts]
    code_pairs: Counter[tuple[int, int]] = Counter()
    for base, cand in packed:
        code_pairs.update(zip(base.codes, cand.codes, strict=True))
    tables = tuple({code: code_values(code, settings, cited) for pair in code_pairs for code in pair}
                   for cited in cites)
    # Per-question values beyond the codes: the same names in every part, except external scores,
    # which a part (or a run) may lack: it has no value for any of its questions then.
    floats = list(dict.fromkeys(name for pair in packed for run in pair for name in run.floats))
    for pair in packed:
        for run in pair:
            size = len(run.codes)
            for name in floats:
                if name not in run.floats:
                    run.floats[name] = array("d", [math.nan]) * size
    sums: dict[str, PairSums] = {}
    for i, name in enumerate(names):
        if name in floats:
            continue  # not implied by the code (citation_precision)
        sums[name] = PairSums.of_counts(
            (_int(tables[0][b][i]), _int(tables[1][c][i]), times) for (b, c), times in code_pairs.items()
        )
    for name in floats:
        sums[name] = PairSums.of(
            array("d", chain.from_iterable(b.floats[name] for b, _ in packed)),
            array("d", chain.from_iterable(c.floats[name] for _, c in packed)),
        )
    n = sum(len(p.places) for p in parts)
    columns = ratios = None
    if keep_columns or resampling_is_cheap(n, settings.bootstrap):
        columns = _columns(parts, packed, names, floats, tables)
        ratios = _ratios(parts, packed)
    fixed = [qid for _, qid in heapq.merge(*(p.fixed for p in parts))]
    broken = [qid for _, qid in heapq.merge(*(p.broken for p in parts))]
    ordered = {name: sums[name] for name in (*names, *floats) if name in sums}  # report order
    return Paired(n, ordered, columns, fixed, broken, ratios)


def _both_packed(part: PairedPart) -> tuple[Packed, Packed]:
    """Give a part's packed baseline and candidate (``_WANTS`` asks for both)."""
    base, cand = part.baseline.packed, part.candidate.packed
    assert base is not None and cand is not None
    return base, cand


def _columns(
    parts: list[PairedPart], packed: list[tuple[Packed, Packed]], names: tuple[str, ...], floats: list[str],
    tables: tuple[dict[int, tuple[float | None, ...]], ...],
) -> dict[str, tuple[list[float | None], list[float | None]]]:
    """Spell out every tested metric's values in both runs, question by question in gold order."""
    order = heapq.merge(*([(place, k, i) for i, place in enumerate(p.places)] for k, p in enumerate(parts)))
    at = [(k, i) for _, k, i in order]
    columns: dict[str, tuple[list[float | None], list[float | None]]] = {}
    for side in (0, 1):
        runs = [pair[side] for pair in packed]
        codes = [tables[side][runs[k].codes[i]] for k, i in at]
        for j, name in enumerate(names):
            if name not in floats:
                columns.setdefault(name, ([], []))[side].extend(values[j] for values in codes)
        for name in floats:
            column = [runs[k].floats[name][i] for k, i in at]
            columns.setdefault(name, ([], []))[side].extend(None if v != v else v for v in column)
    return columns


def _ratios(parts: list[PairedPart], packed: list[tuple[Packed, Packed]]
            ) -> dict[str, tuple[list[tuple[float, float]], list[tuple[float, float]]]] | None:
    """Spell out each rate of the runs' counts, question by question in gold order: (count, denominator)."""
    if any(run.ratios is None for pair in packed for run in pair):
        return None
    order = heapq.merge(*([(place, k, i) for i, place in enumerate(p.places)] for k, p in enumerate(parts)))
    at = [(k, i) for _, k, i in order]
    out: dict[str, tuple[list[tuple[float, float]], list[tuple[float, float]]]] = {}
    for name in packed[0][0].ratios or {}:
        sides = []
        for side in (0, 1):
            columns = [pair[side].ratios[name] for pair in packed]  # type: ignore[index]  # checked above
            sides.append([(columns[k][0][i], columns[k][1][i]) for k, i in at])
        out[name] = (sides[0], sides[1])
    return out


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)
