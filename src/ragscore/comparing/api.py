"""ragscore compare and power from Python: ``compare``, ``compare_several`` and ``power``, and their results."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Final

from ragscore.comparing.power_report import render_power_markdown
from ragscore.comparing.several_report import render_several_html, render_several_markdown
from ragscore.config import Config, for_gold, judged, load_run_scores
from ragscore.errors import InputError, UsageError
from ragscore.keywords import check_jobs, configured
from ragscore.loaders.records import Records, Source, TraceSource, as_input, as_traces
from ragscore.loaders.shards import input_notes
from ragscore.reports.document import input_paths
from ragscore.reports.reported import Renderer, Reported
from ragscore.results import Evaluation, Wants

if TYPE_CHECKING:
    from ragscore.comparison import Paired
    from ragscore.loaders.scores import ScoreFile


@dataclass
class Comparison:
    """A candidate run compared with a baseline: every metric's change, the paired tests, the regression gates."""

    document: dict[str, Any] = field(repr=False)
    baseline: Evaluation | None  # None when the baseline came from a report
    candidate: Evaluation
    regressions: list[Any]
    fixed: list[str]
    broken: list[str]
    read_as: tuple[str, str] | None = None  # (baseline, candidate) formats, when "auto" read them differently
    confidence: float = 0.95  # of the intervals and tests: 1 - confidence is their significance level
    corpora: str | None = None  # how the two runs' corpora differ (a baseline report made with another --corpus)
    chunkings: str | None = None  # ... and their chunkings (a baseline report made with another --chunks)
    judges: str | None = None  # how the runs' LLM judges differ (compared all the same: allow_judge_change)
    flips: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)  # qid: labels before and after, meaning

    @property
    def passed(self) -> bool:
        """Whether every regression gate passed."""
        return bool(self.document["pass"])

    @property
    def deltas(self) -> dict[str, Any]:
        """Every metric's change, interval and p-value, as the JSON report has them."""
        return dict(self.document["metrics"])

    def render(self, format: str = "json") -> Iterator[str]:
        """Yield the comparison in ``format`` (json or markdown), as the command line writes it."""
        from ragscore.comparing.report import render_compare_markdown
        from ragscore.reports.json_report import render_json

        if format == "json":
            return render_json(self.document)
        if format == "markdown":
            return render_compare_markdown(self.document, 1 - self.confidence)
        if format == "pr-comment":
            return self.comment()
        if format == "badge":
            return self.badge()
        raise UsageError(f"unknown comparison format {format!r} (formats: json, markdown, pr-comment, badge)")

    def report(self, format: str = "json") -> str:
        """Return the comparison in ``format``: the command line's bytes."""
        return "".join(self.render(format))

    def comment(self, key: str | None = None) -> Iterator[str]:
        """Yield the comparison as a pull-request comment (``--format pr-comment``); ``key``: its marker's key, else
        the gold file's name without its extensions."""
        from ragscore.comparing.report import render_compare_comment

        return render_compare_comment(self.document, self.flips, key, 1 - self.confidence)

    def badge(self, metric: str | None = None) -> Iterator[str]:
        """Yield a shields.io endpoint badge of the verdict, or of ``metric``'s candidate value coloured by its
        regression gate."""
        from ragscore.reports.badge import metric_badge, verdict_badge

        if metric is None:
            return verdict_badge(self.passed)
        values = {name: m["candidate"] for name, m in self.document["metrics"].items()}
        return metric_badge(metric, values, {name: r["status"] for name, r in self.document["regressions"].items()})

    def notes(self) -> list[str]:
        """The notes the command line prints on standard error (without its "ragscore: " prefix)."""
        from ragscore.reports.common import fmt

        notes = input_notes(*(ev.traces for ev in (self.baseline, self.candidate) if ev is not None))
        if self.read_as is not None:
            notes.append(f"the baseline's traces were read as {self.read_as[0]}, the candidate's as {self.read_as[1]} "
                         "(--trace-format auto)")
        from ragscore.reports.console import ids_note, no_citations_note

        for which, ev in (("baseline", self.baseline), ("candidate", self.candidate)):
            ids = None if ev is None else ids_note(ev)
            if ids is not None:
                notes.append(f"the {which}'s traces: {ids}")
            if ev is not None and ev.tally.cites_nothing:  # each run decides by its own traces
                notes.append(f"the {which}'s traces: {no_citations_note(ev.settings, ev.repeats is not None)}")
        if self.corpora is not None:
            notes.append(f"the runs used different corpora: {self.corpora}; the metrics that read passage texts or "
                         "document spans (grounding, evidence) compare different data, not only different runs")
        if self.chunkings is not None:
            notes.append(f"the runs used different chunkings (--chunks): {self.chunkings}; the metrics that read chunk "
                         "ids as spans (evidence, and retrieval judged by gold spans) compare different data, not only "
                         "different runs")
        if self.judges is not None:
            notes.append(f"the runs were judged differently: {self.judges} (--allow-judge-change); the judge's scores "
                         "compare different judges, not only different runs")
        differing = [what for what, note in (("corpora", self.corpora), ("chunkings", self.chunkings),
                                             ("judges", self.judges)) if note is not None]
        differ = f" (the {' and the '.join(differing)} differ)" if differing else ""
        notes += [f"REGRESSION {r.metric}: worse by {fmt(r.worse_by)} (allowed {r.allowed:g}){differ}"
                  for r in self.regressions if r.status == "fail"]
        if self.document["mcnemar"] is None:  # repeated samples: correctness is a pass rate
            notes.append(f"{'pass' if self.passed else 'FAIL'}: compared over repeated samples (pass@k and pass^k "
                         "per question)")
        else:
            notes.append(f"{'pass' if self.passed else 'FAIL'}: {len(self.fixed)} questions fixed, "
                         f"{len(self.broken)} broken")
        return notes


def compare(
    gold: Source,
    baseline: TraceSource | None,
    candidate: TraceSource,
    *,
    baseline_report: str | os.PathLike[str] | None = None,
    config: Config | None = None,
    jobs: int | None = None,
    scores: str | os.PathLike[str] | None = None,
    baseline_scores: str | os.PathLike[str] | None = None,
    allow_judge_change: bool = False,
    **settings: Any,
) -> Comparison:
    """Compare a candidate run with a baseline run (traces) or a baseline report (``baseline_report``,
    a JSON report made with per-question results): paired tests per metric, McNemar on per-question
    correctness, and the ``[regression]`` gates. ``scores`` and ``baseline_scores`` are each run's --scores file
    (the baseline report holds its own); two runs judged by different LLM judges (``ragscore judge``: endpoint,
    model or rubric) are refused unless ``allow_judge_change``."""
    from ragscore.comparing.paired import score_pair
    from ragscore.comparing.report import build_compare_document
    from ragscore.comparison import (
        check_regressions,
        compare_runs,
        mcnemar,
        regression_power,
    )
    from ragscore.parallel import choose_jobs

    check_jobs(jobs)
    if (baseline is None) == (baseline_report is None):
        raise UsageError("compare: give the baseline's traces or its report (baseline_report=), not both")
    if baseline_scores is not None and baseline is None:
        raise UsageError("compare: baseline_scores goes with the baseline's traces (a baseline report holds its own "
                         "scores)")
    if baseline is not None and (scores is None) != (baseline_scores is None):
        # Else the scores of one run are compared with nothing: their metrics left out, their regression gates
        # skipped, without a word.
        given, lacking = (("candidate", "baseline") if scores is not None else ("baseline", "candidate"))
        raise UsageError(f"compare: the {given}'s scores are given (--scores, --baseline-scores) but not the "
                         f"{lacking}'s: give each run's scores file, or neither")
    gold_in, candidate_in = as_input(gold, "gold"), as_traces(candidate)
    config = for_gold(configured(config, settings), gold_in)
    files = tuple(None if path is None else load_run_scores(path, config) for path in (baseline_scores, scores))
    judges = _judges(files[0], files[1], allow_judge_change) if baseline is not None else None
    config = judged(config, files[1])
    run_settings = config.settings
    read_as = None
    baseline_inputs: dict[str, Any] = {}
    if baseline is not None:
        baseline_in = as_traces(baseline, "baseline")
        specs = [x for x in (gold_in, baseline_in, candidate_in) if not isinstance(x, Records)]
        count = choose_jobs(jobs, *specs) if len(specs) == 3 else 1
        # Both runs in one pass over the gold set, question by question, without per-question rows.
        baseline_ev, candidate_ev, paired = score_pair(gold_in, baseline_in, candidate_in, run_settings, count,
                                                       config.test != "bootstrap", files)  # type: ignore[arg-type]
        _check_regression_names(config, candidate_ev.metrics())
        baseline_metrics = baseline_ev.metrics()
        baseline_input = _input_of(baseline_ev.traces, baseline_ev.digests[1])
        if baseline_ev.settings.trace_format != candidate_ev.settings.trace_format:
            read_as = (baseline_ev.settings.trace_format, candidate_ev.settings.trace_format)
    else:
        candidate_ev, baseline_metrics, baseline_input, paired, baseline_inputs, judges = _against_report(
            config, gold_in, candidate_in, os.fspath(baseline_report), jobs,  # type: ignore[arg-type]
            files[1], allow_judge_change)
        baseline_ev = None
    deltas = compare_runs(baseline_metrics, candidate_ev.metrics(), paired, run_settings, config.test,
                          config.correction)
    # With samples a question's correctness is a pass rate, not a yes or no: McNemar does not apply.
    test = None if run_settings.sampled else mcnemar(paired)
    regressions = check_regressions(deltas, config.regression, config.require_significance, run_settings.confidence,
                                    config.directions)
    inputs = {
        "gold": _input_of(candidate_ev.gold, candidate_ev.digests[0]),
        "baseline": baseline_input,
        "trace": _input_of(candidate_ev.traces, candidate_ev.digests[1]),
    }
    read = input_paths(candidate_ev)
    inputs.update({side: read[side] for side in ("corpus", "chunks") if side in read})
    corpora = _corpora(baseline_inputs.get("corpus"), inputs.get("corpus")) if baseline_ev is None else None
    chunkings = (_corpora(baseline_inputs.get("chunks"), inputs.get("chunks"), "chunks") if baseline_ev is None
                 else None)
    power = regression_power(paired, config.regression, run_settings.confidence)
    doc = build_compare_document(inputs, run_settings, deltas, test, regressions, config.test, config.correction,
                                 power)
    return Comparison(doc, baseline_ev, candidate_ev, regressions, test.fixed if test else [],
                      test.broken if test else [], read_as, run_settings.confidence, corpora, chunkings, judges,
                      paired.flips or {})


def _judge_shown(judge: Mapping[str, str] | None) -> str:
    """A judge as a note names it: its model at its endpoint, its rubric's sha256 (shortened)."""
    from ragscore.quoting import quote

    if not judge:
        return "none named (scores without ragscore judge's header)"
    return (f"{quote(judge.get('model'))} at {quote(judge.get('endpoint'))} (rubric sha256 "
            f"{quote(judge.get('rubric'))[1:13]})")


def _judges(baseline: ScoreFile | None, candidate: ScoreFile | None, allowed: bool) -> str | None:
    """How the two runs' judges differ (None: they do not, or one run's scores name no judge and share no name with
    the other's); refused unless ``allowed``."""
    if baseline is None or candidate is None:
        return None
    before = baseline.judge.signed() if baseline.judge is not None else None
    after = candidate.judge.signed() if candidate.judge is not None else None
    if not _judged_differently(before, after, set(baseline.names) & set(candidate.names)):
        return None
    note = f"the baseline's {_judge_shown(before)}, the candidate's {_judge_shown(after)}"
    if not allowed:
        raise UsageError(f"compare: the runs' scores were judged differently ({note}): a changed judge shifts every "
                         "score; rejudge both with one judge, or give --allow-judge-change to compare them anyway")
    return note


def _judged_differently(before: Mapping[str, str] | None, after: Mapping[str, str] | None, shared: set[str]) -> bool:
    """Whether two runs' scores come from different judges: two judges that differ, or a judge's scores against
    scores of the same name that name none (``shared``: the names both runs' scores have)."""
    if before == after:
        return False
    return (before is not None and after is not None) or bool(shared)


def _corpora(baseline: Any, candidate: Any, records: str = "documents") -> str | None:
    """Say how a baseline report's corpus (its ``inputs.corpus``; or chunking, ``inputs.chunks`` with ``records``
    "chunks") and the candidate's differ; None when they do not (the same sha256, or neither run read one)."""
    def shown(corpus: Any) -> str:
        if not isinstance(corpus, dict):
            return "none"
        from ragscore.quoting import quote  # a path from a report: quoted, escaped

        return (f"{quote(corpus.get('path'))} (sha256 {quote(corpus.get('sha256'))[1:13]}, {corpus.get(records)} "
                f"{records})")

    same = (baseline is None and candidate is None or isinstance(baseline, dict) and isinstance(candidate, dict)
            and baseline.get("sha256") == candidate.get("sha256"))
    return None if same else f"the baseline's {shown(baseline)}, the candidate's {shown(candidate)}"


def _against_report(config: Config, gold_in: Any, candidate_in: Any, baseline_report: str, jobs: int | None,
                    scores: ScoreFile | None = None, allow_judge_change: bool = False,
                    ) -> tuple[Evaluation, dict[str, float | None], dict[str, Any], Paired, dict[str, Any], str | None]:
    """Score the candidate with its per-question rows (and its --scores file) and pair it with a committed baseline
    report, checked to be of the same gold set and scoring: the candidate's evaluation, the baseline's metrics and
    input, the pairs, the baseline's inputs (its report's ``inputs``: ``corpus`` and ``chunks`` when it read them),
    and how the runs' judges differ (allowed)."""
    from ragscore.comparing.paired import session_groups
    from ragscore.comparison import pair_runs, run_from_evaluation, run_from_report
    from ragscore.loaders.report import load_report
    from ragscore.parallel import choose_jobs
    from ragscore.parallel import score as score_parts
    from ragscore.reports.document import display_path

    run_settings = config.settings
    specs = [x for x in (gold_in, candidate_in) if not isinstance(x, Records)]
    count = choose_jobs(jobs, *specs) if len(specs) == 2 else 1
    candidate_ev = score_parts(gold_in, candidate_in, run_settings, Wants(rows=True, scores=scores), count)
    _check_regression_names(config, candidate_ev.metrics())
    candidate_run = run_from_evaluation(candidate_ev)
    report, doc = load_report(baseline_report)
    if doc["inputs"]["gold"]["sha256"] != candidate_ev.digests[0]:
        raise InputError(report.name, "the baseline report was not made with this gold set (its gold sha256 differs)")
    before = doc["settings"].get("judge") if isinstance(doc.get("settings"), dict) else None
    before = before if isinstance(before, dict) else None
    after = dict(run_settings.judge) if run_settings.judge is not None else None
    judges = None
    shared = set(scores.names) & set(doc.get("metrics") or ()) if scores is not None else set()
    if scores is not None and _judged_differently(before, after, shared):
        judges = f"the baseline's {_judge_shown(before)}, the candidate's {_judge_shown(after)}"
        if not allow_judge_change:
            raise InputError(report.name, f"the baseline report's scores were judged differently ({judges}): a "
                                          "changed judge shifts every score; rejudge with one judge, or give "
                                          "--allow-judge-change to compare them anyway")
    _check_same_scoring(doc["signature"], candidate_ev.settings.signature(), report.name,
                        ("judge",) if judges is not None else ())
    baseline_run = run_from_report(doc, report.name)
    lacking = [metric for metric in config.regression if metric not in baseline_run.metrics]
    if lacking:
        raise InputError(report.name, f"the baseline report lacks {', '.join(lacking)}, which [regression] gates: "
                                      "remake it with the same --metrics")
    rows = list(candidate_ev.rows or ())
    paired = pair_runs(baseline_run, candidate_run, [row.qid for row in rows], run_settings,
                       config.test != "bootstrap" or candidate_ev.turns is not None)
    if candidate_ev.turns is not None:  # the tests pair whole sessions
        paired = replace(paired, groups=session_groups([row.place for row in rows], candidate_ev.turns))
    return (candidate_ev, baseline_run.metrics, {"path": display_path(report), "sha256": report.sha256}, paired,
            doc["inputs"], judges)


def _input_of(file: Any, digest: str) -> dict[str, Any]:
    from ragscore.reports.document import input_entry

    return input_entry(file, digest)


def _check_regression_names(config: Config, metrics: Iterable[str]) -> None:
    """Refuse a regression bound on a name the run never produced that looks like a typo of a known one."""
    from ragscore.gates import unknown_gate_metric

    bounds = [(metric, *config.regression_at.get(metric, ("gates.toml", None))) for metric in config.regression]
    typo = unknown_gate_metric(bounds, metrics, config.known_names)
    if typo is not None:
        raise typo


# Signature parts that do not change a score (or that differ legitimately between two reports).
_NOT_SCORING: Final = ("ragscore", "metrics", "ci")


# How the inputs were read, as a signature leaves it out when they were read as the contract: a
# report read another way (a format, a mapping, refusal patterns) differs in these.
_READ_AS_CONTRACT: Final = {"trace": "native", "trace_fields": "{}", "gold_fields": "{}", "refusal_patterns": "[]",
                             "repeats": "last"}


def _check_same_scoring(baseline: str, candidate: str, source: str, allowed: tuple[str, ...] = ()) -> None:
    """Refuse a baseline report scored with other settings (k, refusal tokens, cutoffs, ...), but the ``allowed``
    parts."""
    from ragscore.quoting import shorten, visible

    def parts(signature: str) -> dict[str, str]:
        pairs = (part.partition(":") for part in signature.split("|"))
        return {**_READ_AS_CONTRACT, **{key: value for key, _, value in pairs
                                         if key not in _NOT_SCORING and key not in allowed}}

    before, after = parts(baseline), parts(candidate)
    differing = sorted(key for key in before.keys() & after.keys() if before[key] != after[key])
    if differing:
        raise InputError(source, "the baseline report was scored with other settings ("
                                 + ", ".join(f"{key}: {visible(shorten(before[key]))} vs {visible(shorten(after[key]))}"
                                             for key in differing) + ")")


@dataclass
class RunsTable(Reported):
    """Several runs on one gold set compared pair by pair: a table of values marked with the runs
    each is significantly better than, and each pair's wins, ties and losses (no gate: it passes)."""

    left_out: list[str] = field(default_factory=list, repr=False)  # what the runs' folders and globs left out
    KIND: ClassVar[str] = "comparison"
    RENDERERS: ClassVar[dict[str, Renderer]] = {
        "markdown": render_several_markdown,
        "html": render_several_html,
    }

    def notes(self) -> list[str]:
        """What the runs' folders and globs left out, then one line per pair: its wins, ties and losses."""
        from ragscore.reports.common import clean  # run names come from file names or --names
        from ragscore.reports.console import plural

        return self.left_out + [clean(f"{p['baseline']} vs {p['candidate']}: {plural(p['wins'], 'win', 'wins')}, "
                                      f"{plural(p['ties'], 'tie', 'ties')}, {plural(p['losses'], 'loss', 'losses')}")
                                for p in self.document["pairs"]]


def compare_several(
    gold: Source,
    runs: Sequence[TraceSource],
    *,
    names: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    config: Config | None = None,
    jobs: int | None = None,
    **settings: Any,
) -> RunsTable:
    """Compare several runs on one gold set, every pair as ``compare`` compares a baseline and a
    candidate (``test=`` and ``correction=`` as there), in a table of ``columns`` (default:
    precision, chr, under_refusal, over_refusal)."""
    from ragscore.comparing.paired import session_groups
    from ragscore.comparing.several import DEFAULT_COLUMNS, MAX_RUNS
    from ragscore.comparing.several import compare_several as compare_pairs
    from ragscore.comparing.several_report import build_several_document
    from ragscore.comparison import run_from_evaluation
    from ragscore.parallel import choose_jobs
    from ragscore.parallel import score as score_parts

    check_jobs(jobs)
    if not 2 <= len(runs) <= MAX_RUNS:
        raise UsageError(f"compare: give from 2 to {MAX_RUNS} runs, got {len(runs)}")
    gold_in = as_input(gold, "gold")
    config = for_gold(configured(config, settings), gold_in)
    inputs = [as_traces(run, f"run {i + 1}") for i, run in enumerate(runs)]
    evaluations = []
    for run_in in inputs:
        specs = [x for x in (gold_in, run_in) if not isinstance(x, Records)]
        count = choose_jobs(jobs, *specs) if len(specs) == 2 else 1
        evaluations.append(score_parts(gold_in, run_in, config.settings, Wants(rows=True), count))
    shown = list(names) if names is not None else _run_names([_input_of(ev.traces, ev.digests[1])["path"]
                                                             for ev in evaluations])
    if len(shown) != len(runs) or len(set(shown)) != len(shown):
        raise UsageError(f"compare: expected {len(runs)} distinct run names, got {', '.join(shown)}")
    metrics = evaluations[0].metrics()
    chosen = list(columns) if columns is not None else [c for c in DEFAULT_COLUMNS if c in metrics]
    unknown = [c for c in chosen if c not in metrics]
    if unknown:
        from ragscore.suggest import did_you_mean

        raise UsageError(f"compare: the runs report no metric {unknown[0]!r}{did_you_mean(unknown[0], list(metrics))}")
    rows = list(evaluations[0].rows or ())
    turns = evaluations[0].turns
    pairs = compare_pairs([run_from_evaluation(ev) for ev in evaluations], [row.qid for row in rows],
                          config.settings, chosen, config.test, config.correction,
                          None if turns is None else session_groups([row.place for row in rows], turns))
    described = [{"name": name, **_input_of(ev.traces, ev.digests[1]), "metrics": ev.metrics()}
                 for name, ev in zip(shown, evaluations, strict=True)]
    doc = build_several_document(config.settings, _input_of(evaluations[0].gold, evaluations[0].digests[0]),
                                 described, chosen, pairs, config.test, config.correction)
    return RunsTable(doc, input_notes(*inputs))


def _run_names(paths: Sequence[str]) -> list[str]:
    """Name runs by their file names without the extension (their paths, when two would share one)."""
    stems = [Path(path).name.split(".")[0] or path for path in paths]
    return stems if len(set(stems)) == len(stems) else list(paths)


@dataclass
class PowerReport(Reported):
    """How many questions a run's comparisons need: per metric, the change its size detects and
    the questions a given change needs (no gate: it passes)."""

    left_out: list[str] = field(default_factory=list, repr=False)  # what the traces' folder or glob left out
    KIND: ClassVar[str] = "power"
    RENDERERS: ClassVar[dict[str, Renderer]] = {
        "markdown": render_power_markdown}

    def notes(self) -> list[str]:
        """What the traces' folder or glob left out, then one line per metric: what this run's size
        detects, and what the change asked for needs."""
        from ragscore.comparing.power_report import power_notes

        return self.left_out + power_notes(self.document)


def power(
    gold: Source,
    traces: TraceSource,
    *,
    detect: float | None = None,
    target: float = 0.8,
    columns: Sequence[str] | None = None,
    config: Config | None = None,
    jobs: int | None = None,
    **settings: Any,
) -> PowerReport:
    """For each metric (``columns``; default: the gated ones, else precision, chr, under_refusal and
    over_refusal), the smallest change a paired comparison of a run like this one detects at its
    size (the run's confidence, power ``target``), and the questions needed to detect ``detect``
    (default: the metric's [regression] bound, else 0.05)."""
    from ragscore.comparing.power_report import build_power_document
    from ragscore.comparing.several import DEFAULT_COLUMNS
    from ragscore.comparison import run_from_evaluation
    from ragscore.metrics.names import lookup
    from ragscore.metrics.power import detectable, needed, spread_of_one_run
    from ragscore.parallel import choose_jobs
    from ragscore.parallel import score as score_parts

    check_jobs(jobs)
    if detect is not None and not 0 < detect:
        raise UsageError(f"power: expected a positive change to detect, got {detect!r}")
    if not 0 < target < 1:
        raise UsageError(f"power: expected a power between 0 and 1, got {target!r}")
    gold_in, trace_in = as_input(gold, "gold"), as_traces(traces)
    config = for_gold(configured(config, settings), gold_in)
    specs = [x for x in (gold_in, trace_in) if not isinstance(x, Records)]
    ev = score_parts(gold_in, trace_in, config.settings, Wants(rows=True),
                     choose_jobs(jobs, *specs) if len(specs) == 2 else 1)
    run = run_from_evaluation(ev)
    metrics = ev.metrics()

    def per_question(name: str) -> bool:
        spec = lookup(name)
        return spec is None or spec.kind in ("rate", "mean")

    gated = [g.metric for g in config.gates if g.metric in metrics and per_question(g.metric)]
    chosen = list(columns) if columns is not None else (gated or [c for c in DEFAULT_COLUMNS if c in metrics])
    unknown = [c for c in chosen if c not in metrics or not per_question(c)]
    if unknown:
        raise UsageError(f"power: no per-question values of {unknown[0]!r} (a metric of the run with per-question "
                         "values, such as precision or ndcg@10)")
    alpha = 1 - config.settings.confidence
    rows = {}
    for name in chosen:
        values = [v for per in run.values.values() if (v := per.get(name)) is not None]
        sigma = spread_of_one_run(values)
        change = detect if detect is not None else config.regression.get(name, 0.05)
        need = needed(change, sigma, alpha, target) if sigma else None
        rows[name] = {"value": metrics[name], "questions": len(values), "sd": sigma,
                      "detectable": detectable(sigma, len(values), alpha, target) if sigma else None,
                      "detect": change, "needed": None if need is None else math.ceil(need - 1e-9)}
    doc = build_power_document(config.settings, _input_of(ev.gold, ev.digests[0]), _input_of(ev.traces, ev.digests[1]),
                               target, rows)
    return PowerReport(doc, input_notes(trace_in))
