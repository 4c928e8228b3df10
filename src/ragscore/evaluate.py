"""Join traces to the gold set, judge every question, and account for every trace line.

The work can be split by question: worker ``part`` of ``parts`` keeps the gold items whose qid
it owns (``loaders.jsonl.owner``) and scores only the trace lines for those questions, so the
workers share nothing and their results simply add up (``ragscore.finish``). With ``parts == 1``
the same code scores everything in one pass.
"""

from __future__ import annotations

import gc
import math
import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress
from operator import eq
from typing import Final

from ragscore.diagnose.samples import Picked, with_texts, worst_questions
from ragscore.errors import InputError, SideInputError
from ragscore.external import ScoreColumns, ScoreTotals
from ragscore.finish import (
    merge,
    per_question_metric,
)
from ragscore.loaders.chunks import ChunkIndex, load_scoring_chunks
from ragscore.loaders.corpus import Corpus, CorpusError, load_corpus, passage_texts, wanted
from ragscore.loaders.gold import (
    KEEP_EXTRA,
    KEEP_QUESTION,
    KEY_SAMPLE_LINES,
    GoldItem,
    GoldSet,
    check_spans,
    line_of,
    load_gold,
    questions_at,
    slice_labels,
    span_documents,
)
from ragscore.loaders.jsonl import InputFile, NeedsOneProcess, describe, is_mine, objects_at, owner
from ragscore.loaders.near_miss import TRACE_FIELDS, near_misses
from ragscore.loaders.provider_responses import ProviderResponse, provider_response
from ragscore.loaders.records import Records
from ragscore.loaders.shapes import TraceShape, open_records
from ragscore.loaders.tool_calls import ReadCalls, trace_calls
from ragscore.loaders.trace import DOCUMENT_ID_PATHS, TraceView, parse_trace
from ragscore.metrics import METRICS
from ragscore.metrics.answer import (
    LABEL_ORDER,
    AnswerTally,
    Label,
    Outcome,
    answer_metric_names,
    code_passes,
    code_values,
    judge_for,
    missing_outcome,
    pack,
    question_values,
    refusal_like,
    run_bits,
    unpack,
)
from ragscore.metrics.families import (
    Columns,
    Family,
    SampleColumns,
    averaged,
    enabled,
    first_lines,
    grounding_fractions,
    spread,
    with_chunks,
)
from ragscore.metrics.grounding import Findings, grounding_findings
from ragscore.metrics.moments import Moments, summarise
from ragscore.metrics.repeats import QuestionSamples, Repeats, repeat_metric_names, summarise_questions
from ragscore.metrics.sessions import BAD_SESSION, Turn, bootstrap_key, session_key
from ragscore.metrics.stats import resampling_is_cheap
from ragscore.metrics.tools import ROW as TOOLS_ROW
from ragscore.operations import RECORD_KEYS as OPERATION_KEYS
from ragscore.operations import OperationColumns
from ragscore.quoting import quote
from ragscore.results import (
    CLAIM_PICKS,
    EXAMPLES,
    Evaluation,
    Explained,
    Packed,
    PartError,
    PartResult,
    Spec,
    Wants,
)
from ragscore.rows import QuestionRow, RowWriter, SpillFolder
from ragscore.settings import Settings


def _position_by_question(gold: GoldSet, view: TraceView, source: str, parts: int) -> int | None:
    """Find the gold item of a trace that has no qid by its exact question text."""
    if parts > 1:
        raise NeedsOneProcess  # a worker holds only part of the gold set
    assert view.question is not None  # parse_trace guarantees a qid or a question
    try:
        return gold.index_of_question(view.question)
    except LookupError:
        qids = [item.qid for item in gold.items if item.question == view.question]
        listed = ", ".join(map(quote, qids[:EXAMPLES])) + (", ..." if len(qids) > EXAMPLES else "")
        raise InputError(
            source,
            f"the question text matches {len(qids)} gold items ({listed}); give the trace a \"qid\"",
            view.line,
        ) from None


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Pause the cycle collector while building acyclic data (it rescans every item, for nothing)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_part_gold(gold_file: InputFile | Records, settings: Settings, wants: Wants, part: int, parts: int) -> GoldSet:
    """Load worker ``part``'s gold items, keeping the fields the metrics and reports need."""
    keep = frozenset(name for family in enabled(settings.families) for name in family.keep)
    # A split run never joins by question text; its few quoted questions are read again, unless
    # the gold set cannot be read again (records, standard input).
    if parts == 1 or wants.rows or wants.explain or not gold_file.rereadable:
        keep |= {KEEP_QUESTION}
    if wants.by or settings.session is not None:  # slices and sessions read gold fields beyond the contract
        keep |= {KEEP_EXTRA}
    return load_gold(gold_file, part=part, parts=parts, keep=keep, fields=settings.gold_fields,
                     trace_format=settings.trace_format)


def score_part(
    gold_spec: Spec, trace_spec: Spec, settings: Settings, wants: Wants, part: int = 0, parts: int = 1,
    asked: str | None = None, spill: str | None = None,
) -> PartResult:
    """Score worker ``part``'s share of the questions; errors come back as data, not raised.

    ``asked`` is the trace format the user asked for, when the parent resolved "auto" for the
    workers; ``spill`` the parent's folder for the rows (``ragscore.rows``).
    """
    # With several parts the parent hashes the inputs, so the workers need not.
    return score_files(open_input(gold_spec, parts == 1), open_input(trace_spec, parts == 1), settings, wants, part,
                       parts, asked, spill)


def score_files(
    gold_file: InputFile | Records, trace_file: InputFile | Records, settings: Settings, wants: Wants, part: int = 0,
    parts: int = 1, asked: str | None = None, spill: str | SpillFolder | None = None,
) -> PartResult:
    """Score part ``part`` of the questions from inputs opened for it (see ``score_part``); past a
    few thousand, the rows asked for go to files in ``spill`` (None: they stay in memory)."""
    result = PartResult()
    phase = 0
    try:
        if parts > 1 and wants.scores is not None and wants.scores.join == "question":
            raise NeedsOneProcess  # scores joined by question text: one process holds every question
        with no_cycle_collection():
            gold = load_part_gold(gold_file, settings, wants, part, parts)
            result.questions = len(gold.items)
            result.gold_keys, result.gold_ragas = gold.extra_keys, gold.ragas
            chunks = load_scoring_chunks(settings.chunks) if settings.chunks is not None else None
            result.chunks = chunks.use if chunks is not None else None
            phase = 1
            score_traces(gold, trace_file, settings, wants, part, parts, result, spill, chunks)
        if parts == 1:
            result.digests = (gold_file.sha256, trace_file.sha256)
    except NeedsOneProcess:
        result.one_process = True
    except InputError as exc:
        if phase and not isinstance(exc, SideInputError):
            exc = detected(exc, asked or settings.trace_format, result.trace_format)
        result.error = error_key(exc, phase, trace_file.located(exc) if phase else exc)
    return result


def open_corpus(traces: InputFile | Records, settings: Settings, part: int, parts: int,
                joined: bool = True, documents: frozenset[str] = frozenset()) -> Corpus | None:
    """Read what a part's traces need of the corpus (``--corpus``; all of it when the traces cannot be read
    twice), and the texts of ``documents`` (the gold spans'); None without one. ``joined=False``: traces joined
    to no question (monitor's)."""
    if settings.corpus is None:
        return None
    corpus = InputFile(settings.corpus)
    if settings.corpus == "-" or os.path.exists(settings.corpus) and not corpus.rereadable:
        # Every part of a run and both runs of a comparison read it: standard input or a pipe gives one reading.
        raise CorpusError(corpus.name, "a corpus is read by every part of a run and by each run compared: give a "
                                       "file, not standard input or a pipe")
    ids: set[str] | None = None
    keys: set[bytes] | None = None
    if isinstance(traces, InputFile) and traces.rereadable:  # read apart: the run's digest is of one reading
        again = InputFile(traces.spec, hashed=False)
        _, shape, records = open_records(again, settings.trace_format, settings.trace_fields, part, parts)
        ids, keys = wanted(records, traces.name, None if shape is None else shape.document_id, part, parts, joined)
    return load_corpus(corpus, ids, keys, documents)


def detected(exc: InputError, asked: str, used: str) -> InputError:
    """Say, in an error about a trace, which format "auto" read the traces in (when not the contract)."""
    if asked != "auto" or used == "native":
        return exc
    return InputError(exc.source, f"{exc.message} (read as {used}, detected from the first record; "
                                  "--trace-format names the format)", exc.line, exc.column)


def error_key(exc: InputError, phase: int, shown: InputError | None = None) -> PartError:
    """Describe an input error so that errors sort by file (``phase``), then by position in the
    stream; ``shown`` is the error as it is raised (at its own file's line, of several files)."""
    shown = shown or exc
    return PartError(phase, exc.line or 0, exc.column or 0, shown.source, shown.message, shown.line, shown.column)


NO_WANTS: Final = Wants()  # the totals only
_NOT_JUDGED: Final = 0xFFFF  # no trace seen yet (pack() codes and run_bits use 14 bits)


@dataclass(slots=True)
class _Judged:
    """What the join keeps of this part's questions, by gold position, until they are tallied.

    Per question only a 2-byte code and a float (a later duplicate overwrites them); whole
    outcomes only when a report lists or explains the questions; what the diagnoses quote of
    their worst questions: the claims, or (files read by several workers, which can read them
    again) the trace line of each question, 8 bytes instead.
    """

    codes: array[int]                     # pack()'s code; _NOT_JUDGED until a trace is seen
    shares: array[float]                  # the citation share (NaN: none)
    outcomes: list[Outcome | None] | None
    families: list[Family]
    columns: list[Columns]                # one per enabled optional family
    external: ScoreColumns                # scores from other evaluators
    operations: OperationColumns          # latency, tokens and cost, when the traces carry them
    claims: list[str | None] | None
    trace_lines: array[int] | None
    answers: list[tuple[str | None, tuple[str, ...]] | None] | None  # claim and citations, for the rows
    findings: list[Findings | None] | None  # --metrics grounding's findings in each answer, for the rows
    views: dict[int, TraceView] = field(default_factory=dict)  # the questions to explain: the last trace
    passages: dict[int, tuple[str, ...]] = field(default_factory=dict)  # ... and its passages' texts
    documents: Mapping[str, str] | None = None  # the texts of the gold spans' documents (--corpus)
    responses: dict[int, ProviderResponse | None] = field(default_factory=dict)  # ... and its provider response
    tool_calls: dict[int, ReadCalls] = field(default_factory=dict)  # ... and its tool calls
    # --session: a question's session named by its trace (when its gold item names none), and with samples the
    # samples whose label and tool use were both correct, and all of them.
    sessions: dict[int, str] = field(default_factory=dict)
    turn_passed: array[int] | None = None
    turn_samples: array[int] | None = None
    seen: dict[int, int] = field(default_factory=dict)         # ... and how many lines they had
    shape: TraceShape | None = None       # how a mapped trace format is read (None: the contract)
    repeats: Repeats | None = None        # each question's samples (repeats = "samples")
    sampled_columns: list[SampleColumns] | None = None  # ... and the families' sums over them, until finished


def _judged(questions: int, settings: Settings, wants: Wants, parts: int, rereadable: bool = True,
            chunks: ChunkIndex | None = None) -> _Judged:
    """Allocate the per-question state of a part with ``questions`` gold items."""
    families = with_chunks(enabled(settings.families), chunks)
    columns = [Columns(f.width(settings)) for f in families]
    sampled_columns = [SampleColumns(f.width(settings)) for f in families] if settings.sampled else None
    for c in sampled_columns or columns:
        c.reserve(questions)
    return _Judged(
        codes=array("H", [_NOT_JUDGED]) * questions,
        shares=array("d", [math.nan]) * questions,
        outcomes=[None] * questions if wants.rows or wants.explain else None,
        families=families,
        columns=columns,
        external=ScoreColumns(questions, sampled=settings.sampled),
        operations=OperationColumns(questions, sampled=settings.sampled),
        # A part of a split file reads the few claims it quotes again; records and standard input
        # cannot be read again.
        claims=[None] * questions if wants.samples and (parts == 1 or not rereadable) else None,
        trace_lines=array("q", [0]) * questions if wants.samples and parts > 1 and rereadable else None,
        answers=[None] * questions if wants.rows else None,
        findings=[None] * questions if wants.rows and "grounding" in settings.families else None,
        repeats=Repeats.of(questions, settings) if settings.sampled else None,
        sampled_columns=sampled_columns,
        turn_passed=array("q", [0]) * questions if settings.session is not None and settings.sampled else None,
        turn_samples=array("q", [0]) * questions if settings.session is not None and settings.sampled else None,
    )


def score_traces(
    gold: GoldSet, traces: InputFile | Records, settings: Settings, wants: Wants, part: int, parts: int,
    result: PartResult, spill: str | SpillFolder | None = None, chunks: ChunkIndex | None = None,
) -> None:
    """Judge every trace line of this part against ``gold``; add the findings to ``result``; ``chunks``: the
    chunking the traces' chunk ids are spans of (``--chunks``)."""
    corpus = open_corpus(traces, settings, part, parts,
                         documents=span_documents(gold.items) if settings.corpus is not None else frozenset())
    if corpus is not None:
        check_spans(gold, corpus.documents)
    judged = _judged(len(gold.items), settings, wants, parts, traces.rereadable, chunks)
    judged.documents = corpus.documents if corpus is not None else None
    result.trace_format, judged.shape, records = open_records(traces, settings.trace_format, settings.trace_fields,
                                                              part, parts)
    _join(gold, traces.name, records, judged, settings, wants, part, parts, result, corpus)
    if corpus is not None:
        result.corpus = corpus.use
    _judge_missing(gold, judged, settings, result)
    if settings.session is not None:
        result.turns = _turns(gold, judged, settings.session)
    _tally(judged, result.tally)
    sampled = _finish_samples(gold, judged, settings) if judged.repeats is not None else None
    if wants.scores is not None:
        result.matched_scores = judged.external.put_file(gold.items, wants.scores)
    score_columns = judged.external.finish()
    result.score_lines = judged.external.first_lines
    if judged.outcomes is not None:
        _rows_and_explained(gold, judged, score_columns, wants, result, sampled,
                            RowWriter(spill, f"part-{part}.rows") if wants.rows else None)
    if wants.packed:
        result.packed = _packed(judged, score_columns, settings, sampled)
    if wants.samples:
        result.samples = _samples(gold, traces, judged, score_columns, settings, wants, sampled)
    _summarise(gold, judged, score_columns, settings, result)
    if sampled is not None:
        resample = resampling_is_cheap(gold.total, settings.bootstrap)
        keys = None if settings.session is None else _session_keys(gold, judged, settings.session)
        result.repeats = summarise_questions(sampled, [item.qid for item in gold.items], gold.places, settings,
                                             resample, keys)  # with sessions: resampled whole
    if judged.shape is not None:
        result.mapped_found = {concept: judged.shape.found.get(concept, 0) for concept in judged.shape.mapped}
        result.document_ids = dict(sorted(judged.shape.document_ids.items()))


def _join(
    gold: GoldSet, name: str, records: Iterable[tuple[int, int, object, object, bytes | None]], judged: _Judged,
    settings: Settings, wants: Wants, part: int, parts: int, result: PartResult, corpus: Corpus | None = None,
) -> None:
    """Join each trace line to its gold question and judge it: the one pass over the traces.

    Everything the loop touches is bound to a local first: it runs once per trace line.
    """
    items, by_qid, not_judged = gold.items, gold.by_qid, _NOT_JUDGED
    codes, shares, outcomes, claims, trace_lines = (judged.codes, judged.shares, judged.outcomes, judged.claims,
                                                    judged.trace_lines)
    external, families, views, seen, shape = judged.external, judged.families, judged.views, judged.seen, judged.shape
    answers, findings = judged.answers, judged.findings
    # Each sample adds to its question's sums; else a later line replaces the question's row.
    columns: Sequence[Columns | SampleColumns] = judged.sampled_columns or judged.columns
    operations, operation_keys, repeats = judged.operations, OPERATION_KEYS, judged.repeats
    accounting, trace_keys = result.accounting, result.trace_keys
    note_duplicate, note_unreadable, note_bad_retrieved = (accounting.note_duplicate, accounting.note_unreadable,
                                                           accounting.note_bad_retrieved)
    refusals, judge = settings.refusal_forms(), judge_for(settings)
    explain_at = {by_qid[q] for q in wants.explain if q in by_qid}
    document_id = DOCUMENT_ID_PATHS if shape is None else shape.document_id
    resolve = corpus.resolve if corpus is not None else None
    session = settings.session
    for line, _column, record, obj, key in records:
        view = parse_trace(obj, name, line, document_id)
        if shape is not None and shape.sources:
            view = view._replace(claim_from=shape.relabel(view.claim_from),
                                 refused_from=shape.relabel(view.refused_from),
                                 citations_from=shape.relabel(view.citations_from))
        qid = view.qid
        if parts > 1 and qid is not None and not is_mine(key, qid, part, parts):
            if wants.routed:
                raise InputError(name, f"the trace of qid {quote(qid)} belongs to part {owner(qid, parts) + 1} of "
                                       f"{parts}, not {part + 1}: route each trace to ragscore.owner(qid, {parts})",
                                 line)
            continue
        # Counted by the worker that owns the line (another one may have parsed it too).
        if shape is not None and type(obj) is dict:
            shape.count_ids(obj)
        if resolve is not None:  # passage texts (and ids for texts) from the corpus
            view, obj = resolve(view, obj)  # type: ignore[arg-type]  # parse_trace checked: a dict
        if view.claim_from is None and view.refused_from is None:
            note_unreadable(view, obj if shape is None else record, obj)
        if view.retrieved_bad:
            note_bad_retrieved(line)
        if view.refused_bad:
            accounting.note_bad_refused(line)
        if line <= KEY_SAMPLE_LINES and shape is None and type(obj) is dict:
            near_misses(obj, line, trace_keys, TRACE_FIELDS)
        accounting.lines += 1
        position = by_qid.get(qid) if qid is not None else _position_by_question(gold, view, name, parts)
        if position is None:
            accounting.note_unknown(view)
            continue
        item = items[position]
        texts = bool(obj.get("retrieved_chunks"))  # type: ignore[attr-defined]
        if texts and item.chunks is None and not view.retrieved and not view.retrieved_bad:
            note_bad_retrieved(line)  # texts without ids, and no gold chunks to match them to: unreadable
        accounting.note_retrieval(view, obj if shape is None else record, texts and item.chunks is not None)
        if codes[position] != not_judged and repeats is None:
            note_duplicate(line, item.qid)
            external.clear(position)  # the later line replaces the whole trace, its scores too
            operations.clear(position)
        scores = obj.get("scores")  # type: ignore[attr-defined]
        if scores is not None:
            external.put_trace(position, scores, name, line)
        if not operation_keys.isdisjoint(obj):  # type: ignore[arg-type]
            operations.put(position, obj)  # type: ignore[arg-type]
        if claims is not None:
            claims[position] = view.claim
        elif trace_lines is not None:
            trace_lines[position] = line
        if answers is not None:
            answers[position] = (view.claim if view.claim_from is not None else None, tuple(view.citations))
        outcome = judge(item, view, settings, refusals)
        if findings is not None:
            findings[position] = grounding_findings(
                view.claim, view.retrieved, view.citations, passage_texts(obj),  # type: ignore[arg-type]  # a dict
                view.question if view.question is not None else item.question) if outcome.answered else None
        if outcome.answered and view.refused is None and view.claim_from is not None:
            like = refusal_like(view.claim)
            if like is not None:
                accounting.note_refusal_like(line, item.qid, like)
        codes[position] = pack(outcome, item.answerable) | run_bits(outcome, item.answerable, view, settings)
        shares[position] = math.nan if outcome.cite_share is None else outcome.cite_share
        if outcomes is not None:
            outcomes[position] = outcome
        # Once per trace line: no strict= keyword (it costs every call); columns has one entry per family.
        for family, c in zip(families, columns):  # noqa: B905
            c.put(position, family.values(item, view, obj, outcome.answered, settings))  # type: ignore[arg-type]
        if session is not None:
            _session_turn(judged, position, item, obj, session, codes[position], families, columns, name, line)
        if position in explain_at:
            views[position] = view
            judged.passages[position] = tuple(passage_texts(obj))  # type: ignore[arg-type]  # a dict
            judged.responses[position] = provider_response(obj)  # type: ignore[arg-type]
            judged.tool_calls[position] = trace_calls(obj)  # type: ignore[arg-type]  # a dict
            seen[position] = seen.get(position, 0) + 1
        if repeats is not None:  # a sample of the question: its answer metrics add to the question's
            repeats.add(position, codes[position], outcome.cite_share)


def _session_turn(judged: _Judged, position: int, item: GoldItem, obj: object, session: str, code: int,
                  families: Sequence[Family], columns: Sequence[Columns | SampleColumns], source: str,
                  line: int) -> None:
    """Note a trace line's part in its question's session: the session its trace names (when the gold item names
    none) and, with samples, whether this sample's label and tool use were both correct."""
    if _gold_session(item, session) is None:
        named = session_key(_field(obj, session))
        if named is BAD_SESSION:
            raise InputError(source, f"expected {quote(session)} to name a session (text or an integer), got "
                                     f"{describe(_field(obj, session))}", line)
        if named is not None:
            judged.sessions[position] = named  # type: ignore[assignment]  # text
    if judged.turn_passed is not None and judged.turn_samples is not None:
        judged.turn_samples[position] += 1
        judged.turn_passed[position] += code_passes(code) and _tools_correct(item, families, columns, position,
                                                                             last=True)


def _field(obj: object, path: str) -> object:
    """A record's value at a dotted path (None: none there)."""
    value = obj
    for key in path.split("."):
        value = value.get(key) if type(value) is dict else None
    return value


def _gold_session(item: GoldItem, path: str) -> str | None:
    """The session a gold item names (read at ``_turns``, which refuses a value that names none)."""
    named = session_key(_field(item.extra or {}, path))
    return named if isinstance(named, str) else None


def _tools_correct(item: GoldItem, families: Sequence[Family], columns: Sequence[Columns | SampleColumns],
                   position: int, last: bool = False) -> bool:
    """Whether a question's tool use is correct: no gold tool calls, or its trajectory matches by tool_match (the
    tools family's ``tool_use_accuracy``; ``last``: of the sample just added)."""
    if item.tools is None:
        return True
    for family, c in zip(families, columns, strict=True):
        if family.name == "tools":
            row: Sequence[float] | None
            if last and isinstance(c, SampleColumns):
                row = c.values[len(c.values) - c.width:]
            else:
                row = c.row(position) if isinstance(c, Columns) else None
            return row is not None and row[TOOL_USE] == 1.0
    return True  # the family is off: tool use is not judged


TOOL_USE: Final = TOOLS_ROW.index("tool_use_accuracy")  # where a tools row says whether the tool use is correct


def _turns(gold: GoldSet, judged: _Judged, session: str) -> list[Turn]:
    """Each question of this part that has a session, as a turn of it (metrics/sessions.py); a session or a
    ``turn`` that is neither is an error at its gold line."""
    out = []
    for position, item in enumerate(gold.items):
        extra = item.extra or {}
        value = _field(extra, session)
        key = session_key(value)
        turn = extra.get("turn")
        bad = (f"expected {quote(session)} to name a session (text or an integer), got {describe(value)}"
               if key is BAD_SESSION else
               f'expected "turn" to be a whole number of at least 0 (the question\'s turn in its session), got '
               f"{describe(turn)}" if turn is not None and (type(turn) is not int or turn < 0) else None)
        if bad is not None:
            raise InputError(gold.source.name, bad, line_of(gold.places[position]))
        if key is None:
            key = judged.sessions.get(position)
        if key is None:
            continue
        if judged.turn_samples is not None and judged.turn_passed is not None and judged.turn_samples[position]:
            total, passed = judged.turn_samples[position], judged.turn_passed[position]
        else:  # the question's one judgement (a question without a trace: as missing)
            total = 1
            passed = int(code_passes(judged.codes[position]) and _tools_correct(item, judged.families,
                                                                                 judged.columns, position))
        out.append(Turn(gold.places[position], key, turn, passed, total))  # type: ignore[arg-type]  # text
    return out


def _judge_missing(gold: GoldSet, judged: _Judged, settings: Settings, result: PartResult) -> None:
    """Judge each question that no trace line answered as a missing trace (a refusal)."""
    items, codes, outcomes = gold.items, judged.codes, judged.outcomes
    columns: Sequence[Columns | SampleColumns] = judged.sampled_columns or judged.columns
    for position, code in enumerate(codes):
        if code == _NOT_JUDGED:
            item = items[position]
            outcome = missing_outcome(item)
            codes[position] = pack(outcome, item.answerable)
            if outcomes is not None:
                outcomes[position] = outcome
            if len(result.missing_ids) < EXAMPLES:
                result.missing_ids.append((gold.places[position], item.qid))
            if judged.repeats is not None:  # one sample, judged MISSING_TRACE
                judged.repeats.add(position, codes[position], None)
            # Once per missing question: no strict= keyword (it costs every call); one column per family.
            for family, c in zip(judged.families, columns):  # noqa: B905
                c.put(position, family.values(item, None, None, False, settings))


def _tally(judged: _Judged, tally: AnswerTally) -> None:
    """Add every question's packed code to the tally (its citation shares: ``_summarise``); with
    samples, every sample's."""
    codes = judged.repeats.codes() if judged.repeats is not None else Counter(judged.codes)
    for code, times in codes.items():
        tally.add_packed(code, times)


def _finish_samples(gold: GoldSet, judged: _Judged, settings: Settings) -> list[QuestionSamples]:
    """Turn the samples' sums into each question's means: its samples, its families' rows and
    external scores, and (for diagnoses and compare) its citation share."""
    assert judged.repeats is not None and judged.sampled_columns is not None
    questions = len(gold.items)
    sampled = judged.repeats.questions()
    judged.columns = [c.finish(averaged(family, settings), questions, first_lines(family))
                      for family, c in zip(judged.families, judged.sampled_columns, strict=True)]
    judged.external.average()
    share_at = answer_metric_names(settings).index("citation_precision")
    judged.shares = array("d", (math.nan if (v := q.answer[share_at]) is None else v for q in sampled))
    return sampled


def _summarise(
    gold: GoldSet, judged: _Judged, score_columns: dict[str, tuple[array[float], int]], settings: Settings,
    result: PartResult,
) -> None:
    """Summarise the part's per-question values exactly (``metrics.moments``): all that the run's
    totals and intervals need of them, ready to add to the other parts'."""
    items, seed, resamples = gold.items, settings.seed, settings.bootstrap
    # Every part decides alike, by the whole gold set: a run of few enough questions is resampled.
    resample = resampling_is_cheap(gold.total, resamples)
    # With sessions, a question's bootstrap weights are its session's: whole sessions are resampled.
    keyed = _session_keys(gold, judged, settings.session) if settings.session is not None else None

    def qids(positions: Iterable[int]) -> list[str] | None:
        if not resample:
            return None
        return [items[p].qid for p in positions] if keyed is None else [keyed[p] for p in positions]

    def by_position(column: array[float]) -> Moments:
        values = array("d", compress(column, map(eq, column, column)))  # NaN: the question has no value
        keys = qids(compress(range(len(column)), map(eq, column, column)))
        return summarise([values], (True,), keys, seed, resamples)[0]

    result.operations = judged.operations.totals(result.tally.traced)
    result.tally.shares = by_position(judged.shares)
    result.scores = {name: ScoreTotals(by_position(column), nulls) for name, (column, nulls) in score_columns.items()}
    result.columns = [c.totals(spread(family, settings), qids(c.owners), seed, resamples, family.undefined)
                      for family, c in zip(judged.families, judged.columns, strict=True)]
    if keyed is not None and resample and judged.repeats is None:
        # Each answer metric's per-question values (then precision's by the claims alone, for a run that cites
        # nothing), so that its interval resamples sessions too (a rate's Wilson interval takes turns as
        # independent).
        rows = [(*code_values(code, settings), float(code >> 13 & 1) if code >> 3 & 1 else None)
                for code in judged.codes]
        width = len(answer_metric_names(settings)) + 1  # a part without questions: as many empty summaries
        result.answer_moments = [by_position(array("d", (math.nan if v is None else v for v in column)))
                                 for column in zip(*rows, strict=True)] if rows else [Moments()] * width


def _session_keys(gold: GoldSet, judged: _Judged, session: str) -> list[str]:
    """Each question's bootstrap key: its session (as the gold item or its trace names it), else its own qid."""
    out = []
    for position, item in enumerate(gold.items):
        key = _gold_session(item, session) or judged.sessions.get(position)
        out.append(bootstrap_key(key, item.qid))
    return out


def _rows_and_explained(
    gold: GoldSet, judged: _Judged, score_columns: dict[str, tuple[array[float], int]], wants: Wants,
    result: PartResult, sampled: list[QuestionSamples] | None, rows: RowWriter | None,
) -> None:
    """Write the per-question rows (when ``rows`` is given) and keep what ``--explain`` needs of
    the questions it names."""
    assert judged.outcomes is not None
    columns, answers = judged.columns, judged.answers
    shown = _shown_claim(judged.families)
    for position, (item, outcome) in enumerate(zip(gold.items, judged.outcomes, strict=True)):
        assert outcome is not None
        if rows is not None:
            family_rows = tuple(c.row(position) for c in columns)
            labels = tuple(slice_labels(item, path) for path in wants.by)
            answer = None if answers is None else answers[position]
            if answer is not None and answer[0] is not None:
                answer = (shown(answer[0]), answer[1])
            rows.append(QuestionRow(
                gold.places[position], item.qid, item.question, item.answerable, outcome, item.citations, item.rule,
                family_rows, labels,
                {name: value for name, (column, _) in score_columns.items() if (value := column[position]) == value},
                None if sampled is None else sampled[position],
                None if answer is None else answer[0], None if answer is None else answer[1],
                None if judged.findings is None else judged.findings[position],
            ))
        if item.qid in wants.explain:
            result.explained[item.qid] = Explained(item, outcome, judged.views.get(position),
                                                   judged.seen.get(position, 0),
                                                   None if sampled is None else sampled[position],
                                                   judged.passages.get(position, ()),
                                                   judged.responses.get(position),
                                                   _span_texts(item, judged.documents),
                                                   judged.tool_calls.get(position))
    if rows is not None:
        result.rows = rows.finish()


def _span_texts(item: GoldItem, documents: Mapping[str, str] | None) -> tuple[str, ...] | None:
    """The text of each of an item's gold spans (checked against the corpus already); None without a corpus."""
    if documents is None or not item.spans:
        return None
    return tuple(documents[doc][start:end] for doc, start, end, _ in item.spans)


def _packed(
    judged: _Judged, score_columns: dict[str, tuple[array[float], int]], settings: Settings,
    sampled: list[QuestionSamples] | None,
) -> Packed:
    """Keep each question's packed code and the per-question values it does not imply (for compare)."""
    floats = _per_question_floats(judged.families, judged.columns, judged.shares, len(judged.codes), settings)
    if sampled is not None:  # every answer metric is a mean over samples: none is implied by a code
        floats = _sampled_floats(sampled, settings) | floats
    floats.update((name, column) for name, (column, _) in score_columns.items())  # names vary by part
    ratios = None if sampled is not None else _ratio_columns(judged.families, judged.columns, len(judged.codes))
    return Packed(judged.codes, floats, ratios)


def _ratio_columns(families: list[Family], columns: list[Columns], questions: int
                   ) -> dict[str, tuple[array[float], array[float]]]:
    """Spell out, for each rate of the run's counts, every question's count and denominator (0 and 0 for a
    question without a row), so that a paired bootstrap can resample the questions (compare)."""
    out: dict[str, tuple[array[float], array[float]]] = {}
    for family, c in zip(families, columns, strict=True):
        if family.name != "grounding":
            continue
        names = METRICS.names("grounding")
        counts = {name: (array("d"), array("d")) for name in names}
        empty = dict.fromkeys(names, (0, 0))
        for position in range(questions):
            row = c.row(position)
            fractions = empty if row is None else grounding_fractions([round(v) for v in row])
            for name, (count, total) in fractions.items():
                counts[name][0].append(count)
                counts[name][1].append(total)
        out.update(counts)
    return out


def _sampled_floats(sampled: list[QuestionSamples], settings: Settings) -> dict[str, array[float]]:
    """Spell out each question's answer and repeat metrics, by metric (NaN: not counted)."""
    names = (*answer_metric_names(settings), *repeat_metric_names(settings))
    out = {name: array("d") for name in names if name != "min_pass_rate"}
    columns = list(out.values())
    nan = math.nan
    for q in sampled:
        # Once per question: no strict= keyword (it costs every call); columns has one array per value.
        for column, value in zip(columns, (*q.answer, *q.repeats)):  # noqa: B905
            column.append(nan if value is None else value)
    return out


def _samples(
    gold: GoldSet, traces: InputFile | Records, judged: _Judged, score_columns: dict[str, tuple[array[float], int]],
    settings: Settings, wants: Wants, sampled: list[QuestionSamples] | None,
) -> dict[str, list[Picked]]:
    """Pick the worst questions of each metric the diagnoses target, with their questions and claims."""
    items = gold.items
    targeted = {name for name, _, _ in wants.targets}
    floats = _per_question_floats(judged.families, judged.columns, judged.shares, len(items), settings, targeted)
    if sampled is not None:  # the answer metrics' values are means over samples, not implied by the codes
        floats = {name: column for name, column in _sampled_floats(sampled, settings).items()
                  if name in targeted} | floats
    floats.update((name, column) for name, (column, _) in score_columns.items())
    missing = LABEL_ORDER.index(Label.MISSING_TRACE)
    # Precision's worst questions by the claims alone too: finish() keeps these in a run that cites nothing.
    targets = wants.targets + tuple((CLAIM_PICKS, d, bound) for name, d, bound in wants.targets if name == "precision")
    found = worst_questions(
        targets, wants.samples, judged.codes,
        lambda code: (*question_values(*unpack(code), settings), float(code & 7 == missing),
                      float(code >> 13 & 1) if code >> 3 & 1 else None),
        (*answer_metric_names(settings), "missing", CLAIM_PICKS), floats, lambda p: items[p].qid,
    )
    positions = {p for picks in found.values() for _, _, p, _ in picks}
    if gold.questions_kept:
        questions = {p: items[p].question for p in positions}
    else:  # a split file's part keeps 8 bytes per question: the few quoted are read again
        assert isinstance(gold.source.spec, str)  # a gold set is one file
        again = questions_at(gold.source.spec, {gold.places[p] for p in positions})
        questions = {p: again.get(gold.places[p]) for p in positions}
    if judged.claims is not None:
        claims = {p: judged.claims[p] for p in positions}
    else:
        assert judged.trace_lines is not None
        claims = _claims_again(traces, judged.trace_lines, positions, judged.shape)
    shown = _shown_claim(judged.families)
    return with_texts(found, {p: (questions[p], None if claims[p] is None else shown(claims[p]))  # type: ignore[arg-type]
                              for p in positions})


def _shown_claim(families: list[Family]) -> Callable[[str], str]:
    """How reports show a claim: with --metrics grounding, each leaked value replaced by its kind (``[email]``),
    so that no report prints one; else as it is."""
    if any(family.name == "grounding" for family in families):
        from ragscore.metrics.leaks import masked

        return masked
    return str


def _claims_again(
    traces: InputFile | Records, trace_lines: array[int], positions: set[int], shape: TraceShape | None
) -> dict[int, str | None]:
    """Read the claims of a few questions from the trace file again."""
    objects = objects_at(InputFile(traces.spec, hashed=False), {trace_lines[p] for p in positions if trace_lines[p]})
    if shape is not None:  # a mapped format that could be split between workers: per-record
        objects = {line: shape.translate(obj, traces.name, line) for line, obj in objects.items()}
    claims = {line: parse_trace(obj, traces.name, line).claim for line, obj in objects.items()}
    return {p: claims.get(trace_lines[p]) for p in positions}


def _per_question_floats(
    families: list[Family], columns: list[Columns], shares: array[float], questions: int, settings: Settings,
    only: set[str] | None = None,
) -> dict[str, array[float]]:
    """Spell out the per-question values that the packed code does not imply, by metric."""
    floats = {"citation_precision": shares}
    nan = math.nan
    for family, c in zip(families, columns, strict=True):
        names = [name for name in family.names(settings)
                 if per_question_metric(name) and (only is None or name in only)]
        if not names:
            continue
        arrays = [array("d") for _ in names]
        for position in range(questions):
            values = family.question_metrics(c.row(position), settings)
            # Once per question: no strict= keyword (it costs every call); arrays has one array per name.
            for name, out in zip(names, arrays):  # noqa: B905
                value = values.get(name)
                out.append(nan if value is None else value)
        floats.update(zip(names, arrays, strict=True))
    return floats


def evaluate(gold_spec: Spec, trace_spec: Spec, settings: Settings, wants: Wants = NO_WANTS) -> Evaluation:
    """Score a trace file against a gold set in one process, in one streaming pass."""
    gold, traces = open_input(gold_spec), open_input(trace_spec)
    return merge([score_files(gold, traces, settings, wants, spill=SpillFolder())], gold, traces, settings, wants)


def open_input(spec: Spec, hashed: bool = True) -> InputFile | Records:
    """Open an input named by a path (or "-"); records given to the Python API are their own input."""
    return spec if isinstance(spec, Records) else InputFile(spec, hashed=hashed)
