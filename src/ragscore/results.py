"""What judging a run produces: the reports' wants, one part's result, the judged run and the
accounting of every trace line (``evaluate`` fills them in; partials, merge and the reports read them)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, NamedTuple

from ragscore.diagnose import Sample
from ragscore.diagnose.samples import Picked
from ragscore.errors import InputError
from ragscore.external import ScoreTotals
from ragscore.loaders.chunks import ChunksUse
from ragscore.loaders.corpus import CorpusUse
from ragscore.loaders.detect import detect, retrieval_field
from ragscore.loaders.gold import GoldItem
from ragscore.loaders.jsonl import InputFile
from ragscore.loaders.provider_responses import ProviderResponse
from ragscore.loaders.records import Records
from ragscore.loaders.shapes import PRESETS
from ragscore.loaders.shards import Shards
from ragscore.loaders.tool_calls import ReadCalls
from ragscore.loaders.trace import OWN_ID_PATHS, TraceView
from ragscore.metrics import METRICS
from ragscore.metrics.answer import CITING, AnswerTally, Outcome, answer_metric_names
from ragscore.metrics.families import Totals, enabled
from ragscore.metrics.moments import Moments
from ragscore.metrics.registry import Direction
from ragscore.metrics.repeats import QuestionSamples, RepeatTotals, repeat_metric_names
from ragscore.metrics.sessions import Session, Turn, session_metric_names, session_values
from ragscore.operations import Operations
from ragscore.rows import RowFile, Rows
from ragscore.settings import Settings

if TYPE_CHECKING:
    from ragscore.loaders.scores import ScoreFile


EXAMPLES = 5  # ids quoted in a one-line summary such as "3 unknown traces: a, b, c"


# An input: a path ("-": standard input), several trace files read as one, or records given to the Python API.
Spec = str | Shards | Records


COUNT_METRICS = METRICS.names("counts")


# The worst questions of precision counted by the claims alone (``claim_bit``), for a run that cites nothing.
CLAIM_PICKS: Final = "precision/claims"


def metric_names(settings: Settings) -> tuple[str, ...]:
    """Name the metrics a run with these settings computes (known before any input is read)."""
    optional = tuple(name for family in enabled(settings.families) for name in family.names(settings))
    return (answer_metric_names(settings) + repeat_metric_names(settings) + optional + session_metric_names(settings)
            + COUNT_METRICS)


@dataclass(frozen=True, slots=True)
class Wants:
    """What the reports will need beyond the totals, so nothing else is kept."""

    rows: bool = False
    explain: frozenset[str] = frozenset()
    by: tuple[str, ...] = ()  # gold fields to slice by (dotted paths)
    packed: bool = False      # each question's packed code and per-question values (for compare)
    samples: int = 0          # the worst questions to pick per metric in ``targets`` (diagnoses)
    targets: tuple[tuple[str, Direction, float], ...] = ()  # (metric, direction, bound past which to pick)
    scores: ScoreFile | None = None  # a --scores file to join to the questions
    routed: bool = False  # the traces were routed to their part already: one of another part is an error


class Explained(NamedTuple):
    """What ``--explain`` needs of one question."""

    item: GoldItem
    outcome: Outcome
    trace: TraceView | None
    lines: int  # how many trace lines the question had
    sampled: QuestionSamples | None = None  # its samples (repeats = "samples"): trace is the last one
    passages: tuple[str, ...] = ()  # the texts of the trace's retrieved passages (--metrics grounding's findings)
    response: ProviderResponse | None = None  # the provider response the trace keeps (its citations judged)
    span_texts: tuple[str, ...] | None = None  # the text of each gold span, from --corpus (None: no corpus)
    tool_calls: ReadCalls | None = None  # the tool calls the trace made (None: no trace)


_READ_KEYS: Final = ("retrieved_ids", "chunks", "scores", "tool_calls")  # what a trace without a claim may give


class Unreadable(NamedTuple):
    """What a note says of a trace with no claim and no refusal field."""

    keys: tuple[str, ...]  # the record's keys, as written
    bare: bool             # no retrieved list or scores either
    looks_like: str        # the trace format its keys suggest


@dataclass(slots=True)
class Accounting:
    """Where every trace line went: it counted, was overridden, or matched no question.

    The examples carry the trace line they were seen on, so that parts merge in file order.
    """

    lines: int = 0
    unknown: int = 0
    duplicates: int = 0
    unknown_ids: list[tuple[int, str]] = field(default_factory=list)
    duplicate_ids: list[tuple[int, str]] = field(default_factory=list)
    unreadable: int = 0        # traces with no field a claim or refusal comes from
    unreadable_bare: int = 0   # ... nor a retrieved list or scores: nothing in them is read
    unreadable_examples: list[tuple[int, Unreadable]] = field(default_factory=list)
    bad_retrieved: int = 0     # traces whose retrieved list has an entry without an id
    bad_retrieved_lines: list[int] = field(default_factory=list)
    bad_refused: int = 0       # traces whose "refused" field is not a boolean (read as absent)
    bad_refused_lines: list[int] = field(default_factory=list)
    refusal_like: int = 0      # answered claims that begin as refusals do (``refusal_like``)
    refusal_like_ids: list[tuple[int, str, str]] = field(default_factory=list)  # (line, qid, the pattern to add)
    retrieving: int = 0        # joined traces that retrieved something readable (ids, or texts the gold has)
    # Where traces that retrieved nothing readable likely keep it (``retrieval_field``), distinct, sorted.
    retrieval_fields: list[str] = field(default_factory=list)

    def note_unknown(self, view: TraceView) -> None:
        """Count a trace that matches no gold question."""
        self.unknown += 1
        if len(self.unknown_ids) < EXAMPLES:
            self.unknown_ids.append((view.line, view.qid if view.qid is not None else repr(view.question)))

    def note_unreadable(self, view: TraceView, record: object, native: object) -> None:
        """Count a trace that has no claim and no refusal field (scored as an empty answer)."""
        self.unreadable += 1
        bare = type(native) is dict and not any(key in native for key in _READ_KEYS)
        self.unreadable_bare += bare
        if len(self.unreadable_examples) < EXAMPLES:
            keys = tuple(record) if type(record) is dict else ()
            self.unreadable_examples.append((view.line, Unreadable(keys, bare, detect(record))))

    def note_bad_retrieved(self, line: int) -> None:
        """Count a trace whose retrieved list could not be read (read as nothing retrieved)."""
        self.bad_retrieved += 1
        if len(self.bad_retrieved_lines) < EXAMPLES:
            self.bad_retrieved_lines.append(line)

    def note_bad_refused(self, line: int) -> None:
        """Count a trace whose "refused" field is neither true nor false (the claim decides then)."""
        self.bad_refused += 1
        if len(self.bad_refused_lines) < EXAMPLES:
            self.bad_refused_lines.append(line)

    def note_refusal_like(self, line: int, qid: str, pattern: str) -> None:
        """Count an answered claim that reads like a refusal no token or pattern caught."""
        self.refusal_like += 1
        if len(self.refusal_like_ids) < EXAMPLES:
            self.refusal_like_ids.append((line, qid, pattern))

    def note_retrieval(self, view: TraceView, record: object, texts: bool) -> None:
        """Count a joined trace that retrieved something readable, or name where one that did not
        likely keeps it (``texts``: its retrieved texts are matched to the gold set's chunks)."""
        if view.retrieved or texts:
            self.retrieving += 1
        elif not view.retrieved_bad and not self.retrieving:  # the note is made only when none retrieved
            hint = retrieval_field(record)
            if hint is not None and hint not in self.retrieval_fields and len(self.retrieval_fields) < EXAMPLES:
                self.retrieval_fields = sorted((*self.retrieval_fields, hint))

    def note_duplicate(self, line: int, qid: str) -> None:
        """Count a trace line that a later one for the same question replaces."""
        self.duplicates += 1
        if len(self.duplicate_ids) < EXAMPLES and all(q != qid for _, q in self.duplicate_ids):
            self.duplicate_ids.append((line, qid))

    def __add__(self, other: Accounting) -> Accounting:
        return Accounting(
            self.lines + other.lines,
            self.unknown + other.unknown,
            self.duplicates + other.duplicates,
            sorted(self.unknown_ids + other.unknown_ids)[:EXAMPLES],
            _first_distinct(sorted(self.duplicate_ids + other.duplicate_ids)),
            self.unreadable + other.unreadable,
            self.unreadable_bare + other.unreadable_bare,
            sorted(self.unreadable_examples + other.unreadable_examples)[:EXAMPLES],
            self.bad_retrieved + other.bad_retrieved,
            sorted(self.bad_retrieved_lines + other.bad_retrieved_lines)[:EXAMPLES],
            self.bad_refused + other.bad_refused,
            sorted(self.bad_refused_lines + other.bad_refused_lines)[:EXAMPLES],
            self.refusal_like + other.refusal_like,
            sorted(self.refusal_like_ids + other.refusal_like_ids)[:EXAMPLES],
            self.retrieving + other.retrieving,
            sorted({*self.retrieval_fields, *other.retrieval_fields})[:EXAMPLES],
        )


def _first_distinct(pairs: list[tuple[int, str]]) -> list[tuple[int, str]]:
    seen: dict[str, tuple[int, str]] = {}
    for line, qid in pairs:
        seen.setdefault(qid, (line, qid))
    return list(seen.values())[:EXAMPLES]


class Packed(NamedTuple):
    """One part's questions in gold order, compactly: what a paired comparison needs of a run."""

    codes: array[int]            # pack()'s code per question
    floats: dict[str, array[float]]  # per-question values not implied by the code (NaN: not counted)
    # Rates of the run's counts (the grounding family's): each question's count and denominator (0 and 0: none).
    ratios: dict[str, tuple[array[float], array[float]]] | None = None


class PartError(NamedTuple):
    """An input error one part met, sortable into the order one process meets them: by file (``phase``: the
    gold set, then the traces), then by position in the stream; then what to raise (at its own file's line)."""

    phase: int
    stream_line: int
    stream_column: int
    source: str
    message: str
    line: int | None
    column: int | None

    def raised(self) -> InputError:
        return InputError(self.source, self.message, self.line, self.column)


@dataclass(slots=True)
class PartResult:
    """What one worker found: totals, examples, the rows asked for, or the first error."""

    questions: int = 0
    tally: AnswerTally = field(default_factory=AnswerTally)
    accounting: Accounting = field(default_factory=Accounting)
    missing_ids: list[tuple[int, str]] = field(default_factory=list)  # (place, qid)
    rows: RowFile | Rows = field(default_factory=RowFile)  # in gold order
    explained: dict[str, Explained] = field(default_factory=dict)
    columns: list[Totals] = field(default_factory=list)
    error: PartError | None = None  # the first input error this part met
    one_process: bool = False
    digests: tuple[str, str] | None = None  # sha256 of both inputs, when this part read them whole
    packed: Packed | None = None
    samples: dict[str, list[Picked]] = field(default_factory=dict)
    scores: dict[str, ScoreTotals] = field(default_factory=dict)
    matched_scores: list[str] = field(default_factory=list)  # keys of the --scores rows joined here
    score_lines: dict[str, int] = field(default_factory=dict)  # the trace line that named each score first
    trace_format: str = "native"  # the format the traces were read in ("auto" resolved)
    mapped_found: dict[str, int] = field(default_factory=dict)  # mapped concept -> records that had its path
    document_ids: dict[str, int] = field(default_factory=dict)  # document_id path -> retrieved objects it named
    gold_keys: dict[str, tuple[str, int]] = field(default_factory=dict)   # near misses: key -> (field, first line)
    trace_keys: dict[str, tuple[str, int]] = field(default_factory=dict)
    gold_ragas: bool = False  # the gold set was read as a ragas dataset
    operations: Operations | None = None  # latency, tokens and cost (None: no trace carries any)
    repeats: RepeatTotals | None = None   # the questions' samples (repeats = "samples")
    corpus: CorpusUse | None = None       # --corpus: what was read of it, and what it lacked
    chunks: ChunksUse | None = None       # --chunks: the chunking read
    turns: list[Turn] | None = None       # --session: each question that has a session, as a turn of it
    # --session, few enough questions to resample: each answer metric's values summarised with each question's
    # bootstrap weights drawn by its session (then precision by the claims alone)
    answer_moments: list[Moments] | None = None


@dataclass(slots=True)
class Evaluation:
    """The judged run, merged from its parts."""

    gold: InputFile | Records
    traces: InputFile | Records
    digests: tuple[str, str]
    settings: Settings
    questions: int
    tally: AnswerTally
    accounting: Accounting
    missing_ids: list[str]
    rows: RowFile | Rows | None  # in gold order; each pass reads them again (``ragscore.rows``)
    explained: dict[str, Explained]
    columns: list[Totals]
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    scores: dict[str, ScoreTotals] = field(default_factory=dict)  # external scores by name
    unmatched_scores: list[tuple[int, str]] = field(default_factory=list)  # (line, key) of --scores rows
    mapped_found: dict[str, int] = field(default_factory=dict)  # mapped concept -> records that had its path
    # a trace format's document_id path -> retrieved objects whose id it gave (none read as the native contract)
    document_ids: dict[str, int] = field(default_factory=dict)
    gold_keys: dict[str, tuple[str, int]] = field(default_factory=dict)   # near misses: key -> (field, first line)
    # (native traces only: mapped ones name their own)
    trace_keys: dict[str, tuple[str, int]] = field(default_factory=dict)
    gold_ragas: bool = False  # the gold set was read as a ragas dataset
    operations: Operations | None = None  # latency, tokens and cost (None: no trace carries any)
    repeats: RepeatTotals | None = None   # the questions' samples (repeats = "samples")
    corpus: CorpusUse | None = None       # --corpus: what was read of it, and what it lacked
    chunks: ChunksUse | None = None       # --chunks: the chunking read
    sessions: list[Session] | None = None  # --session: each session judged whole
    answer_moments: list[Moments] | None = None  # --session: see PartResult
    turns: list[Turn] | None = None  # --session: each question that has a session (its slices resample them)

    def family_totals(self, name: str) -> Totals | None:
        """The totals of the optional family of this name (None when it is off)."""
        for family, totals in zip(enabled(self.settings.families), self.columns, strict=True):
            if family.name == name:
                return totals
        return None

    def ids_read_elsewhere(self) -> dict[str, int]:
        """Where the trace format read retrieved objects' ids (path -> objects), when any came from a fallback: not
        the contract's own fields, nor the format's first place (LangChain's ``metadata.id``), but such as an
        OpenInference ``document.metadata.source`` or a llama-index node's ``id_``; else empty."""
        first = PRESETS.get(self.settings.trace_format, {}).get("document_id", ())[:1]
        if any(path not in OWN_ID_PATHS and path not in first for path in self.document_ids):
            return self.document_ids
        return {}

    def metrics(self) -> dict[str, float | None]:
        """Return every metric by name: answer metrics (with samples: means over each question's,
        then the metrics of samples), optional families, external scores, then counts."""
        values: dict[str, float | None]
        if self.repeats is not None:
            values = self.repeats.metrics(self.settings, answer_metric_names(self.settings))
            if self.tally.cites_nothing:  # each question's means counted its citations: undefined
                values.update(dict.fromkeys((*CITING, "precision")))
        else:
            values = self.tally.metrics(self.settings)
        for family, columns in zip(enabled(self.settings.families), self.columns, strict=True):
            values.update(family.summarise(columns, self.settings))
        for name, score in self.scores.items():
            values[name] = score.mean
        if self.operations is not None:
            values.update(self.operations.metrics())
        if self.sessions is not None:
            values.update(session_values(self.sessions, self.settings))
        values["missing"] = self.tally.missing
        values["unknown_traces"] = self.accounting.unknown
        values["duplicate_traces"] = self.accounting.duplicates
        return values
