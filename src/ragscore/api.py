"""The Python API: score a run, read its results, render its reports. The command line calls this.

    >>> import ragscore
    >>> run = ragscore.score("examples/gold.jsonl", "examples/trace.jsonl")
    >>> run.passed, run.metrics["precision"]
    (True, 1.0)

``gold`` and ``traces`` are paths (``"-"`` for standard input) or iterables of already-parsed
records (dicts: a DataFrame's ``to_dict("records")``, a generator); errors in those point at
"record N". ``traces`` may also be a glob, a folder or a list of paths: the files are read in
order as one stream, as ``--trace`` given several times reads them. Settings come from
``./pyproject.toml`` and ``./gates.toml`` as for the command line (``load_config`` reads them
once; pass its result as ``config=``), and keyword settings override them:
``score(gold, traces, k=10, gates={"precision": 0.9}, metrics=["retrieval"])``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ragscore.config import Config, for_gold, scored_with
from ragscore.config import load_config as _load_config
from ragscore.errors import UsageError
from ragscore.keywords import check_jobs, configured, keyword_overrides, slice_paths
from ragscore.keywords import load_config as load_config  # the public API's home for it
from ragscore.loaders.records import Records, Source, TraceSource, as_input, as_traces, no_trace_records
from ragscore.loaders.shards import Shards, input_notes
from ragscore.reports.common import FORMATS
from ragscore.results import Evaluation, Wants, metric_names

if TYPE_CHECKING:
    from ragscore.diagnose import Diagnosis
    from ragscore.gates import GateResult
    from ragscore.loaders.jsonl import InputFile
    from ragscore.loaders.scores import ScoreFile
    from ragscore.partial_schema import Source as PartialSource
    from ragscore.partials import Partial
    from ragscore.slices import SliceResult


@dataclass
class Run:
    """One scored run: its metrics, gates, diagnoses and reports."""

    evaluation: Evaluation = field(repr=False)
    config: Config = field(repr=False)
    gate_results: list[GateResult]
    diagnoses: list[Diagnosis]
    slices: dict[str, dict[str, SliceResult]]
    passed: bool
    document: dict[str, Any] = field(repr=False)
    per_question: bool = False
    scores_file: ScoreFile | None = None
    html_rows: int = 1000  # questions of each label the HTML report lists (reports.html.DEFAULT_HTML_ROWS)

    def __repr__(self) -> str:
        counts = self.document["counts"]
        return (f"<ragscore.Run {'PASS' if self.passed else 'FAIL'}: {counts['total']} questions, "
                f"precision {self.document['precision']}, chr {self.document['chr']}>")

    @property
    def metrics(self) -> dict[str, float | None]:
        """Every metric by name (None where it is undefined)."""
        return dict(self.document["metrics"])

    @property
    def intervals(self) -> dict[str, tuple[float, float] | None]:
        """The confidence interval of every metric that has one."""
        return {name: None if pair is None else (pair[0], pair[1]) for name, pair in self.document["intervals"].items()}

    @property
    def gates(self) -> list[GateResult]:
        """The result of every gate, in the report's order."""
        return list(self.gate_results)

    @property
    def labels(self) -> dict[str, int]:
        """How many questions got each label."""
        return dict(self.document["labels"])

    @property
    def settings(self) -> dict[str, Any]:
        """Every setting the run was scored with, as the report records them."""
        return dict(self.document["settings"])

    def questions(self) -> Iterator[dict[str, Any]]:
        """Iterate over the per-question results (label, reason, metrics, ...), in gold order."""
        if self.evaluation.rows is None:
            raise UsageError("this run kept no per-question rows: score with per_question=True (or keep_rows=True)")
        return iter(self.document["questions"])

    def explain(self, qid: str) -> str:
        """Say why question ``qid`` got its label (score with ``explain=[qid]``)."""
        from ragscore.reports.explain import render_explanation

        if qid not in self.evaluation.explained:
            raise UsageError(f"no explanation kept for {qid!r}: score with explain=[{qid!r}]")
        ev = self.evaluation
        return render_explanation(ev.explained[qid], ev.settings, ev.traces)

    def summary(self) -> dict[str, Any]:
        """The report document as the JUnit report and GitHub's annotations read it: without the per-question
        results unless the run was made with them (``per_question=True``)."""
        doc = self.document
        return doc if self.per_question else {key: value for key, value in doc.items() if key != "questions"}

    def comment(self, key: str | None = None) -> Iterator[str]:
        """Yield the run as a pull-request comment (``--format pr-comment``); ``key``: its marker's key, else the gold
        file's name without its extensions."""
        from ragscore.reports.pr_comment import render_score_comment

        return render_score_comment(self.document, key)

    def badge(self, metric: str | None = None) -> Iterator[str]:
        """Yield a shields.io endpoint badge (JSON) of the verdict, or of ``metric`` coloured by its gate."""
        from ragscore.reports.badge import gate_statuses, metric_badge, verdict_badge

        if metric is None:
            return verdict_badge(self.passed)
        return metric_badge(metric, self.document["metrics"], gate_statuses(self.document["gates"]))

    def render(self, format: str = "json", *, colour: bool = False, html_rows: int | None = None) -> Iterator[str]:
        """Yield the report in ``format`` piece by piece, exactly as the command line writes it (``html_rows``: the
        questions of each label the HTML report lists, else the run's ``html_rows``); ``pr-comment`` and ``badge``
        as ``comment()`` and ``badge()`` give them."""
        if format == "pr-comment":
            return self.comment()
        if format == "badge":
            return self.badge()
        if format not in FORMATS:
            raise UsageError(f"unknown report format {format!r} (formats: {', '.join(FORMATS)}, pr-comment, badge)")
        if format in ("markdown", "html") and self.evaluation.rows is None:
            raise UsageError(f"a {format} report lists the questions: score with keep_rows=True")
        if format == "json":
            from ragscore.reports.json_report import render_json

            return render_json(self.document, questions=self.per_question)
        if format == "markdown":
            from ragscore.reports.markdown import render_markdown

            return render_markdown(self.document)
        if format == "text":
            from ragscore.reports.text import render_text

            return render_text(self.document, colour=colour)
        if format == "html":
            from ragscore.reports.html import render_html

            return render_html(self.document, self.html_rows if html_rows is None else html_rows)
        from ragscore.reports.junit import render_junit

        return iter([render_junit(self.summary())])

    def report(self, format: str = "json") -> str:
        """Return the report in ``format`` (json, markdown, text, html, junit): the command line's bytes."""
        return "".join(self.render(format))

    def notes(self) -> list[str]:
        """The notes the command line prints on standard error (without its "ragscore: " prefix)."""
        from ragscore.reports.common import diagnosis_heading
        from ragscore.reports.console import (
            accounting_notes,
            format_notes,
            gate_lines,
            key_notes,
            repeat_notes,
            slice_notes,
        )

        ev, config = self.evaluation, self.config
        slice_failed = [f"{r.gate.metric}[{path}={label}]" for path, groups in self.slices.items()
                        for label, s in groups.items() for r in s.gates if r.status.value == "fail"]
        notes = input_notes(ev.traces) + format_notes(config.settings, ev.settings, ev) + key_notes(ev)
        notes += accounting_notes(ev, self.scores_file)
        if ev.accounting.refusal_like:  # answers that read like refusals: a refusal pattern may be missing
            from ragscore.metrics.answer import refusal_like_note
            from ragscore.reports.common import clean

            acc = ev.accounting
            notes.append(clean(refusal_like_note(acc.refusal_like, acc.refusal_like_ids, ev.settings.refusal_patterns)))
        if ev.repeats is not None:
            from ragscore.gates import pass_bound

            notes += repeat_notes(ev.repeats, ev.settings.pass_k, pass_bound(self.gate_results))
        notes += slice_notes(self.slices, config.slice_min_n)
        notes += [f"diagnosis: {d.severity} {diagnosis_heading(d.as_dict())}" for d in self.diagnoses]
        notes += gate_lines(self.gate_results, self.passed, slice_failed)
        return notes


def score(
    gold: Source,
    traces: TraceSource,
    *,
    config: Config | None = None,
    scores: str | os.PathLike[str] | None = None,
    per_question: bool = False,
    only_failures: bool = False,
    by: Sequence[str] = (),
    explain: Sequence[str] = (),
    keep_rows: bool = True,
    jobs: int | None = None,
    **settings: Any,
) -> Run:
    """Score traces against a gold set, check the gates and build the report.

    ``per_question`` puts the questions in the JSON report (``only_failures``: only those not
    OK); ``by`` slices every metric by gold fields; ``explain`` keeps what ``Run.explain`` needs;
    ``keep_rows=False`` keeps no per-question rows (no Markdown or HTML report then; kept, past
    4,096 per process they wait in temporary files, about 0.7 KB of disk each with every family
    on: ``ragscore.rows``); ``jobs`` processes (None: all cores for inputs over 16 MB).
    """
    from ragscore.loaders.gold import load_gold
    from ragscore.parallel import choose_jobs
    from ragscore.parallel import score as score_parts
    from ragscore.quoting import quote
    from ragscore.suggest import did_you_mean

    gold_in, trace_in = as_input(gold, "gold"), as_traces(traces)
    config = for_gold(configured(config, settings), gold_in)
    check_jobs(jobs)
    explain = list(dict.fromkeys([explain] if isinstance(explain, str) else explain))
    per_question = per_question or only_failures
    by = slice_paths(by)
    scores_file = _scores(scores, config) if scores is not None else None
    config = _judged(config, scores_file)
    wants = _wants(config, per_question or bool(by) or keep_rows, by, scores_file, frozenset(explain))
    # A mistyped qid is worth an error before the run, not after it (unless the gold set can be
    # read only once: a pipe, standard input, records).
    if explain and not isinstance(gold_in, Records) and _rereadable(gold_in):
        known = load_gold(gold_in).by_qid
        for qid in explain:
            if qid not in known:
                raise UsageError(f"--explain: no gold question has qid {quote(qid)}" + did_you_mean(qid, list(known)))
    specs = [x for x in (gold_in, trace_in) if not isinstance(x, Records)]
    count = choose_jobs(jobs, *specs) if len(specs) == 2 else 1
    ev = score_parts(gold_in, trace_in, config.settings, wants, count)
    for qid in explain:  # a gold set read once is known only now
        if qid not in ev.explained:
            hint = did_you_mean(qid, list(load_gold(gold_in).by_qid)) if isinstance(gold_in, str) and _rereadable(
                gold_in) else ""
            raise UsageError(f"--explain: no gold question has qid {quote(qid)}" + hint)
    return _run_of(ev, config, wants, per_question, only_failures, scores_file)


def _run_of(ev: Evaluation, config: Config, wants: Wants, per_question: bool, only_failures: bool,
            scores_file: ScoreFile | None) -> Run:
    """Gate, diagnose, slice and report a judged run (scored in one go, or merged from partials)."""
    from ragscore.diagnose import diagnose
    from ragscore.gates import evaluate_gates, gates_pass, unknown_gate_metric
    from ragscore.intervals import compute_intervals
    from ragscore.reports.document import build_document
    from ragscore.slices import build_slices

    metrics = ev.metrics()
    typo = unknown_gate_metric((*config.gates, *config.slice_gates), metrics, config.known_names)
    if typo is not None:
        raise typo
    results = evaluate_gates(config.gates, metrics, config.settings.strict)
    diagnoses = diagnose(metrics, config.rules, config.settings.k, ev.samples, not ev.tally.cites_nothing,
                         bool(ev.accounting.retrieving or not ev.accounting.lines))
    slices = build_slices(ev, wants.by, config.slice_gates, config.slice_min_n) if wants.by else {}
    slice_results = [r for groups in slices.values() for s in groups.values() for r in s.gates]
    passed = gates_pass(results) and gates_pass(slice_results)
    doc = build_document(ev, results, passed, compute_intervals(ev), slices, questions=wants.rows,
                         only_failures=only_failures, diagnoses=diagnoses, scores_file=scores_file)
    return Run(ev, config, results, diagnoses, slices, passed, doc, per_question, scores_file)


def _wants(config: Config, rows: bool, by: tuple[str, ...], scores_file: ScoreFile | None,
           explain: frozenset[str] = frozenset()) -> Wants:
    """What a run keeps beyond its totals: rows, slices, and the worst questions of every metric with a rule."""
    from ragscore.diagnose import sample_targets
    from ragscore.metrics.names import lookup

    # Metrics with a rule: the run's own, then scores from other evaluators (by name, or "@K" for
    # every cutoff of one; the workers match those to the scores they find).
    candidates = (*metric_names(config.settings),
                  *(name for name in config.rules
                    if not name.endswith("@K") or lookup(name.replace("@K", "@1")) is None))
    return Wants(rows=rows, explain=explain, by=by, samples=config.samples,
                 targets=sample_targets(tuple(dict.fromkeys(candidates)), config.rules) if config.samples else (),
                 scores=scores_file)


def _rereadable(spec: str) -> bool:
    from ragscore.loaders.jsonl import InputFile

    return InputFile(spec).rereadable


def _scores(path: str | os.PathLike[str], config: Config) -> ScoreFile:
    """Load a --scores file; names gated or given a rule must hold numbers."""
    from ragscore.config import load_run_scores

    return load_run_scores(path, config)


def _judged(config: Config, scores_file: ScoreFile | None) -> Config:
    """The configuration naming the judge of the --scores file (``ragscore.config.judged``)."""
    from ragscore.config import judged

    return judged(config, scores_file)


# --- partials: a run scored part by part (on several machines), then merged ----------------------------

def owner(qid: str, parts: int) -> int:
    """Return the part (0 to ``parts`` - 1) that scores question ``qid``: route its traces there.

    The split ``--jobs`` uses: the CRC-32 of the qid's UTF-8 bytes, modulo ``parts``.
    """
    from ragscore.loaders.jsonl import owner as owner_of

    if not isinstance(qid, str):
        raise TypeError(f"qid: expected a string, got {type(qid).__name__}")
    _check_part((0, parts))
    return owner_of(qid, parts)


def _check_part(part: object) -> tuple[int, int]:
    from ragscore.partial_schema import MAX_PARTS  # owner() never gives a question a part past it
    from ragscore.quoting import show_value

    if (not isinstance(part, tuple) or len(part) != 2
            or any(isinstance(x, bool) or not isinstance(x, int) for x in part) or not 0 <= part[0] < part[1]):
        raise UsageError(f"part: expected (index, parts) with 0 <= index < parts, got {show_value(part)}")
    if part[1] > MAX_PARTS:
        raise UsageError(f"part: expected at most {MAX_PARTS:,} parts, got {part[1]:,}")
    return part[0], part[1]


def partial(
    gold: Source,
    traces: TraceSource,
    part: tuple[int, int] = (0, 1),
    *,
    config: Config | None = None,
    scores: str | os.PathLike[str] | None = None,
    per_question: bool = False,
    by: Sequence[str] = (),
    keep_rows: bool = False,
    **settings: Any,
) -> Partial:
    """Score part ``part`` = (index, parts) of a run: the questions whose ``owner(qid, parts)`` is
    ``index``, and their traces. Files are read whole (each part skips the other parts' lines);
    records (an engine's partition) must hold this part's traces only. Merge the parts with
    ``Partial.merge`` and report with ``finalize``: the same report as ``score`` in one process.

    ``per_question``, ``by`` and ``keep_rows`` keep the per-question rows that per-question, slice,
    Markdown and HTML reports need (a part's rows are held in memory and written to its JSON).
    """
    from ragscore.evaluate import open_input, score_files
    from ragscore.partials import Partial

    index, parts = _check_part(part)
    gold_in, trace_in = as_input(gold, "gold"), as_traces(traces)
    config = for_gold(configured(config, settings), gold_in)
    by = slice_paths(by)
    scores_file = _scores(scores, config) if scores is not None else None
    config = _judged(config, scores_file)
    wants = _wants(config, per_question or bool(by) or keep_rows, by, scores_file)
    gold_file, trace_file = open_input(gold_in), open_input(trace_in)
    result = score_files(gold_file, trace_file, config.settings,
                         replace(wants, routed=isinstance(trace_in, Records)), index, parts)
    if result.one_process:
        raise UsageError("these inputs cannot be scored in parts: traces without a qid (joined to their question by "
                         "its text), spans (openinference, otel-genai), a ragas CSV export, JSON that is not JSON "
                         "Lines (one array, or records over several lines), a --scores file joined by question text, "
                         "or a \"qid\" key given twice need every gold item in one process; make one "
                         "partial of the whole run (--part 1/1, or part=(0, 1))")
    if result.error is not None:
        raise result.error.raised()
    if not result.accounting.lines and (parts == 1 or _no_record(trace_file)):  # else another part holds them
        raise no_trace_records(trace_file)
    result.digests = (gold_file.sha256, trace_file.sha256)
    return Partial(parts, (index,), config.settings, replace(wants, scores=None), _source_of(gold_file),
                   {index: _source_of(trace_file)}, None if scores is None else _scores_source(os.fspath(scores)),
                   result)


def _no_record(file: InputFile | Records) -> bool:
    """Tell whether a trace input holds no line that is not blank (a file read again; records given to
    the Python API hold this part's traces only, and standard input cannot be read again: not known)."""
    from ragscore.loaders.input_file import InputFile, peek

    if isinstance(file, Records) or not file.rereadable:
        return False
    first, _ = peek(InputFile(file.spec, hashed=False).raw_lines())
    return not first


def _source_of(file: Any) -> PartialSource:
    """Name an input read by a partial as the merged report will."""
    from ragscore.partial_schema import Source as PartialSource
    from ragscore.reports.common import shown_path
    from ragscore.reports.document import display_path

    if isinstance(file, Records):
        return PartialSource(file.name, file.sha256, records=True)
    if isinstance(file.spec, Shards):
        return PartialSource(display_path(file), file.sha256, specs=tuple(map(shown_path, file.spec.specs)),
                             files=tuple((shown_path(path), digest) for path, digest in file.members),
                             starts=tuple(file.starts))
    return PartialSource(display_path(file), file.sha256)


def _scores_source(path: str) -> PartialSource:
    from ragscore.loaders.jsonl import InputFile
    from ragscore.partial_schema import Source as PartialSource
    from ragscore.reports.common import shown_path

    return PartialSource(shown_path(path), InputFile(path).digest_whole())


def finalize(
    merged: Partial,
    *,
    config: Config | None = None,
    scores: str | os.PathLike[str] | None = None,
    per_question: bool = False,
    only_failures: bool = False,
    **settings: Any,
) -> Run:
    """Report a run from its partials, merged (``Partial.merge``): gates, diagnoses, slices and every
    report format, byte for byte as ``score`` gives them in one process.

    The scoring settings are the partials'; ``config`` (else ``./gates.toml`` and
    ``./pyproject.toml``) and keyword settings (``gates``, ``strict``) give the gates and the
    diagnosis rules. ``scores`` is the --scores file the partials were made with, when they were.
    """
    from ragscore.finish import finish
    from ragscore.loaders.jsonl import InputFile
    from ragscore.partials import missing_parts, trace_source

    lacking = missing_parts(merged)
    if lacking is not None:
        raise UsageError(f"merge: {lacking}: a report needs every part")
    config = _merge_config(merged, config, settings)
    per_question = per_question or only_failures
    if per_question and not merged.wants.rows:
        raise UsageError("merge: the partials keep no per-question rows: make them with per-question rows "
                         "(ragscore partial --per-question, or --rows)")
    if (scores is None) != (merged.scores is None):
        raise UsageError("merge: the partials were made with a --scores file: give it to merge too" if scores is None
                         else "merge: the partials were made without a --scores file")
    scores_file = None
    if scores is not None:
        scores_file = _scores(scores, config)
        config = _judged(config, scores_file)
        assert merged.scores is not None
        if InputFile(os.fspath(scores)).digest_whole() != merged.scores.sha256:
            raise UsageError(f"merge: {os.fspath(scores)} is not the --scores file the partials were made with "
                             f"({merged.scores.path}: another sha256)")
    wants = _wants(config, merged.wants.rows, merged.wants.by, scores_file)
    if (wants.samples, wants.targets) != (merged.wants.samples, merged.wants.targets):
        raise UsageError("merge: the diagnosis rules ([diagnose] of the gates file) are not those the partials "
                         "were made with: merge with the same gates file")
    traces = trace_source(merged)
    ev = finish(merged.result, _stub(merged.gold, "gold"), _stub(traces, "trace"), config.settings, wants,
                (merged.gold.sha256, traces.sha256))
    return _run_of(ev, config, wants, per_question, only_failures, scores_file)


def _merge_config(merged: Partial, config: Config | None, settings: Mapping[str, Any]) -> Config:
    """The gates and rules of a merge, over the partials' scoring settings."""
    from ragscore.metrics.families import FAMILIES

    s = merged.settings
    scoring = [name for name in settings if name not in ("gates", "strict")]
    if scoring:
        raise UsageError(f"finalize: {scoring[0]} is a scoring setting: the partials were scored with theirs (give "
                         "it to partial); finalize takes gates and strict")
    if config is None:
        base = scored_with(s)
        overrides = keyword_overrides(settings, base)
        config = _load_config(overrides, None, None).with_origin(None, None, overrides)
    else:
        config = configured(config, settings)
    extra = [name for name in FAMILIES if name in config.settings.families and name not in s.families]
    if extra:
        raise UsageError(f"merge: the gates need the {', '.join(extra)} metrics, which the partials were not "
                         f"scored with: make the partials with --metrics {','.join((*s.families, *extra))}")
    if config.settings.k != s.k:
        raise UsageError(f"merge: the gates are read with k {config.settings.k}, the partials were scored with k {s.k}")
    return replace(config, settings=replace(s, strict=config.settings.strict))


def _stub(source: PartialSource, role: str) -> Any:
    """An input of a merged run as the reports name it (never read again)."""
    from ragscore.loaders.jsonl import InputFile

    if source.records:
        return Records((), role, name=source.path)
    if source.specs:
        file = InputFile(Shards(tuple(path for path, _ in source.files), source.specs))
        file.members, file.starts = list(source.files), list(source.starts)
        return file
    return InputFile(source.path)
