"""Join traces to the gold set, judge every question, and account for every trace line."""

from __future__ import annotations

from dataclasses import dataclass, field

from ragscore.errors import InputError
from ragscore.loaders.gold import GoldSet
from ragscore.loaders.jsonl import InputFile, iter_jsonl
from ragscore.loaders.trace import TraceView, parse_trace
from ragscore.metrics.answer import AnswerTally, Outcome, answer_metric_names, missing_outcome, score_question
from ragscore.metrics.registry import Direction, MetricSpec, register
from ragscore.settings import Settings

EXAMPLES = 5  # ids quoted in a one-line summary such as "3 unknown traces: a, b, c"

register(
    MetricSpec("missing", Direction.LOWER, "counts", "gold questions with no trace (scored as refusals)"),
    MetricSpec("unknown_traces", Direction.LOWER, "counts", "trace lines whose qid or question is not in the gold set"),
    MetricSpec("duplicate_traces", Direction.LOWER, "counts", "trace lines overridden by a later line for the same question"),
)

COUNT_METRICS = ("missing", "unknown_traces", "duplicate_traces")


@dataclass(slots=True)
class Accounting:
    """Where every trace line went: it counted, was overridden, or matched no question."""

    lines: int = 0
    unknown: int = 0
    duplicates: int = 0
    unknown_ids: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)

    def note_unknown(self, view: TraceView) -> None:
        """Count a trace that matches no gold question."""
        self.unknown += 1
        if len(self.unknown_ids) < EXAMPLES:
            self.unknown_ids.append(view.qid if view.qid is not None else repr(view.question))

    def note_duplicate(self, qid: str) -> None:
        """Count a trace line that a later one for the same question replaces."""
        self.duplicates += 1
        if len(self.duplicate_ids) < EXAMPLES and qid not in self.duplicate_ids:
            self.duplicate_ids.append(qid)


@dataclass(slots=True)
class Evaluation:
    """The judged run: one outcome per gold item (file order), the totals and the accounting."""

    gold: GoldSet
    traces: InputFile
    settings: Settings
    outcomes: list[Outcome]
    tally: AnswerTally
    accounting: Accounting
    views: dict[int, TraceView]  # the counting trace of each question asked to be explained
    view_lines: dict[int, int]   # how many trace lines each of those questions had

    def metrics(self) -> dict[str, float | None]:
        """Return every metric by name: answer metrics, then the counts."""
        values: dict[str, float | None] = self.tally.metrics(self.settings)
        values["missing"] = self.tally.missing
        values["unknown_traces"] = self.accounting.unknown
        values["duplicate_traces"] = self.accounting.duplicates
        return values


def metric_names(settings: Settings) -> tuple[str, ...]:
    """Name the metrics a run with these settings computes (known before any input is read)."""
    return answer_metric_names(settings) + COUNT_METRICS


def _position(gold: GoldSet, view: TraceView, source: str) -> int | None:
    if view.qid is not None:
        return gold.by_qid.get(view.qid)
    assert view.question is not None  # parse_trace guarantees a qid or a question
    try:
        return gold.index_of_question(view.question)
    except LookupError:
        qids = [item.qid for item in gold.items if item.question == view.question]
        listed = ", ".join(qids[:EXAMPLES]) + (", ..." if len(qids) > EXAMPLES else "")
        raise InputError(
            source,
            f"the question text matches {len(qids)} gold items ({listed}); give the trace a \"qid\"",
            view.line,
        ) from None


def evaluate(gold: GoldSet, traces: InputFile, settings: Settings, explain: frozenset[str] = frozenset()) -> Evaluation:
    """Score a trace file against a gold set in one streaming pass."""
    items = gold.items
    judged: list[Outcome | None] = [None] * len(items)
    accounting = Accounting()
    refusals = settings.refusal_forms()
    explain_at = {gold.by_qid[q] for q in explain if q in gold.by_qid}
    views: dict[int, TraceView] = {}
    view_lines: dict[int, int] = {}
    for line, _column, _text, obj in iter_jsonl(traces):
        accounting.lines += 1
        view = parse_trace(obj, traces.name, line)
        position = _position(gold, view, traces.name)
        if position is None:
            accounting.note_unknown(view)
            continue
        if judged[position] is not None:
            accounting.note_duplicate(items[position].qid)
        judged[position] = score_question(items[position], view, settings, refusals)
        if position in explain_at:
            views[position] = view
            view_lines[position] = view_lines.get(position, 0) + 1

    tally = AnswerTally()
    outcomes: list[Outcome] = []
    for item, outcome in zip(items, judged):
        if outcome is None:
            outcome = missing_outcome(item)
        tally.add(outcome, item, settings)
        outcomes.append(outcome)
    return Evaluation(gold, traces, settings, outcomes, tally, accounting, views, view_lines)
