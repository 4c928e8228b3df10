"""``ragscore.score_trec``: score TREC runs against qrels in Python, as ``ragscore trec`` does; ``ragscore.qrels``:
the qrels of one chunking, from a gold set's spans, as ``ragscore qrels`` writes them.

    >>> import ragscore
    >>> result = ragscore.score_trec("qrels.txt", ["run.txt"], measures=["ndcg_cut.10", "map"])
    >>> result.metrics["ndcg@10"], result.report("text")  # trec_eval's own output

The command line calls this: the measures (``-m``), ``per_query`` (``-q``), ``complete`` (``-c``),
``max_docs`` (``-M``) and ``level`` (``-l``) are trec_eval's; gates are read from ``[trec.gates]``
of ./gates.toml (or ``gates_file``) and ``gates``, as the command reads them.

    >>> qrels = ragscore.qrels("gold.jsonl", "chunks.jsonl")
    >>> qrels.text, qrels.topics["q1"], qrels.unmatched  # the file, q1's chunks and grades, who got no line
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ragscore.errors import UsageError
from ragscore.trec.chunk_qrels import ChunkQrels as ChunkQrels  # ragscore.ChunkQrels
from ragscore.trec.measures import parse_measures as parse_measures  # the suite checks a task's measures

if TYPE_CHECKING:
    from ragscore.gates import GateResult
    from ragscore.trec.files import Qrels, Run
    from ragscore.trec.scoring import Chosen, Scored, TrecSettings

FORMATS: Final = ("text", "json", "markdown", "html", "junit")


@dataclass
class TrecRun:
    """One or more TREC runs scored against qrels: trec_eval's values, the gates, the reports."""

    settings: TrecSettings = field(repr=False)
    qrels_spec: str = field(repr=False)
    qrels: Qrels = field(repr=False)
    runs: list[Run] = field(repr=False)
    scored: list[Scored] = field(repr=False)
    gate_results: list[list[GateResult]] = field(repr=False)
    asked: Chosen = field(repr=False)
    measures: tuple[str, ...] = ()  # the -m options as given
    per_query: bool = False

    @property
    def passed(self) -> bool:
        """Whether every run passed every gate (no gate: it passes)."""
        from ragscore.gates import gates_pass

        return all(gates_pass(r) for r in self.gate_results)

    @property
    def metrics(self) -> dict[str, float | int]:
        """The first run's values by name (score's names where score has them, trec_eval's otherwise)."""
        return dict(self.scored[0].metrics)

    @property
    def gates(self) -> list[GateResult]:
        """The first run's gate results."""
        return list(self.gate_results[0])

    @cached_property
    def document(self) -> dict[str, Any]:
        """The JSON report's data (``trec_report.schema.json``)."""
        from ragscore.trec.document import build_comparison_document, build_trec_document

        source = (self.qrels_spec, self.qrels.sha256)
        if len(self.scored) == 1:
            return build_trec_document(self.settings, source, self.scored[0], self.gate_results[0], self.per_query)
        return build_comparison_document(self.settings, source, self.qrels, self.scored, self.gate_results,
                                         self.per_query)

    def render(self, format: str = "json") -> Iterator[str]:
        """Yield the report in ``format``: text is trec_eval's output, the others ragscore's reports."""
        if format == "text":
            return iter([self._text()])
        if format not in FORMATS:
            raise UsageError(f"unknown trec report format {format!r} (formats: {', '.join(FORMATS)})")
        from ragscore.trec.report import render_trec

        return render_trec(self.document, format)

    def report(self, format: str = "json") -> str:
        """Return the report in ``format``: the command line's bytes."""
        return "".join(self.render(format))

    def _text(self) -> str:
        from ragscore.trec.measures import headed
        from ragscore.trec.scoring import columns, printed
        from ragscore.trec.text import render_text

        named = columns(self.asked, self.settings.level)
        head = headed(self.measures)
        shown = [dataclasses.replace(printed(s.evaluated, s.columns, named), headed=head) for s in self.scored]
        return render_text(shown, self.per_query, [n.trec or n.name for n in named])

    def notes(self, accounting: bool = True) -> list[str]:
        """Which judged queries a run ranks nothing for and which ranked ones no judgment names (with
        ``accounting``), then how each run's gates ended; a note names its run when there are several."""
        from ragscore.gates import gates_pass
        from ragscore.reports.common import clean
        from ragscore.reports.console import gate_lines
        from ragscore.trec.document import input_of, labels

        names = labels([s.run_id for s in self.scored], [input_of(s.spec, s.sha256)["path"] for s in self.scored])
        notes = []
        for label, run in zip(names, self.runs, strict=True) if accounting else ():
            missing = [qid for qid in self.qrels.topics if qid not in run.topics]
            unjudged = [qid for qid in run.topics if qid not in self.qrels.topics]
            if missing:
                notes.append(f"{label}: {len(missing)} judged {'query has' if len(missing) == 1 else 'queries have'} "
                             f"no ranking (missing: left out of the means as trec_eval leaves them; -c scores them "
                             f"0): {_listed(missing)}")
            if unjudged:
                notes.append(f"{label}: {len(unjudged)} ranked {'query has' if len(unjudged) == 1 else 'queries have'} "
                             f"no judgments (unjudged: ignored, as trec_eval ignores them): {_listed(unjudged)}")
        for label, results in zip(names, self.gate_results, strict=True) if any(self.gate_results) else ():
            lines = gate_lines(results, gates_pass(results))
            notes += lines if len(self.scored) == 1 else [f"{label}: {line}" for line in lines]
        return [clean(note) for note in notes]


def _listed(ids: list[str], limit: int = 5) -> str:
    return ", ".join(ids) if len(ids) <= limit else "e.g. " + ", ".join(ids[:limit])


def score_trec(
    qrels: str | os.PathLike[str],
    runs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    measures: Sequence[str] = (),
    per_query: bool = False,
    complete: bool = False,
    max_docs: int | None = None,
    level: int = 1,
    gates: str | None = None,
    gates_file: str | os.PathLike[str] | None = None,
    confidence: float = 0.95,
    bootstrap: int = 1000,
    seed: str = "0",
    cwd: str | os.PathLike[str] | None = None,
) -> TrecRun:
    """Score TREC runs (several: each compared with the first by paired tests) against TREC or BEIR qrels."""
    from ragscore.gates import evaluate_gates
    from ragscore.keywords import checked
    from ragscore.trec.config import gated, load_trec_gates
    from ragscore.trec.files import read_qrels, read_run
    from ragscore.trec.measures import parse_measures
    from ragscore.trec.scoring import OFFICIAL, TrecSettings, score_run, with_gated

    specs = [os.fspath(runs)] if isinstance(runs, (str, os.PathLike)) else [os.fspath(r) for r in runs]
    if not specs:
        raise UsageError("trec: give at least one run")
    if isinstance(measures, str):
        measures = [measures]
    if not all(isinstance(m, str) for m in measures):
        raise UsageError(f"measures: expected trec_eval measure names (strings), got {list(measures)!r}")
    if isinstance(level, bool) or not isinstance(level, int):
        raise UsageError(f"level: expected an integer, got {level!r}")
    if max_docs is not None and (isinstance(max_docs, bool) or not isinstance(max_docs, int) or max_docs < 1):
        raise UsageError(f"max_docs: expected a positive integer or None, got {max_docs!r}")
    confidence, bootstrap, seed = (checked("confidence", confidence), checked("bootstrap", bootstrap),
                                   checked("seed", seed))
    settings = TrecSettings(tuple(measures) or OFFICIAL, level, complete, max_docs, confidence, bootstrap, str(seed))
    asked = parse_measures(list(measures))
    gate_list = load_trec_gates(gates, None if gates_file is None else os.fspath(gates_file),
                                None if cwd is None else Path(cwd))
    chosen = with_gated(asked, gated(gate_list))
    qrels_spec = os.fspath(qrels)
    judged = read_qrels(qrels_spec)
    read = [read_run(spec, max_docs) for spec in specs]
    scored = [score_run(spec, judged, run, chosen, settings) for spec, run in zip(specs, read, strict=True)]
    results = [evaluate_gates(gate_list, s.metrics, False) for s in scored]
    return TrecRun(settings, qrels_spec, judged, read, scored, results, asked, tuple(measures), per_query)


def qrels(gold: str | os.PathLike[str], chunks: str | os.PathLike[str], *, min_overlap: int | None = None
          ) -> ChunkQrels:
    """The TREC qrels of one chunking (a chunks file, JSON Lines of ``{"id", "doc", "start", "end"}``): for each
    answerable question of the gold set with ``gold_spans``, the chunks that hold its gold evidence, graded, as
    score judges chunk ids (``min_overlap``: by at least so many gold characters instead); ``text`` is the file
    the command writes and ``notes()`` what it says on standard error."""
    from ragscore.trec.chunk_qrels import chunk_qrels

    return chunk_qrels(gold, chunks, min_overlap)
