"""ragscore monitor from Python: ``monitor(traces, baseline)`` and its result."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from ragscore.config import Config, judged, load_run_scores
from ragscore.keywords import configured, gate_spec
from ragscore.loaders.records import TraceSource, as_traces
from ragscore.loaders.shards import input_notes
from ragscore.monitoring.html import render_monitor_html
from ragscore.monitoring.report import render_monitor_markdown, render_openmetrics
from ragscore.reports.reported import Renderer, Reported


@dataclass
class MonitorRun(Reported):
    """Production traces watched: every window's metrics and gates, the whole period's, and drift."""

    notes_: list[str] = field(default_factory=list, repr=False)
    KIND: ClassVar[str] = "monitor"
    RENDERERS: ClassVar[dict[str, Renderer]] = {
        "markdown": render_monitor_markdown,
        "html": render_monitor_html,
        "openmetrics": render_openmetrics,
    }

    @property
    def metrics(self) -> dict[str, float | None]:
        """The whole period's metrics."""
        return dict(self.document["metrics"])

    def notes(self) -> list[str]:
        """The notes the command line prints on standard error (without its "ragscore: " prefix)."""
        return list(self.notes_)

    def comment(self, key: str | None = None) -> Iterator[str]:
        """Yield the period as a pull-request comment (``--format pr-comment``); ``key``: its marker's key, else the
        trace file's name without its extensions."""
        from ragscore.monitoring.report import render_monitor_comment

        return render_monitor_comment(self.document, key)

    def badge(self, metric: str | None = None) -> Iterator[str]:
        """Yield a shields.io endpoint badge of the verdict, or of the period's ``metric`` coloured by its gate."""
        from ragscore.reports.badge import gate_statuses, metric_badge, verdict_badge

        if metric is None:
            return verdict_badge(self.passed)
        return metric_badge(metric, self.document["metrics"], gate_statuses(self.document["gates"]))

    def render(self, format: str = "json") -> Iterator[str]:
        """Yield the report in ``format`` (json, markdown, html, openmetrics; pr-comment and badge as ``comment()``
        and ``badge()`` give them)."""
        if format == "pr-comment":
            return self.comment()
        if format == "badge":
            return self.badge()
        return super().render(format)


def monitor(
    traces: TraceSource,
    baseline: TraceSource | None = None,
    *,
    window: str | None = None,
    min_n: int | None = None,
    gates: str | Mapping[str, Any] | None = None,
    strict: bool | None = None,
    config: Config | None = None,
    scores: str | os.PathLike[str] | None = None,
    **settings: Any,
) -> MonitorRun:
    """Watch production traces without gold: the gold-free metrics per time window and for the whole
    period, the gates on each, and (with ``baseline``, traces of an earlier period) each rate's
    drift. ``settings`` are those of ``score`` that read traces (refusal tokens and patterns,
    trace_format, fields); ``[monitor]`` in the settings files gives the window, gates and drift bounds.
    ``scores``: a --scores file (``ragscore judge`` writes one), joined to the traces by qid: each score is a
    metric, its mean over the traces that have it, per window and for the period (gated; not drift-tested)."""
    from ragscore.monitoring.notes import monitor_notes
    from ragscore.monitoring.report import build_monitor_document, monitor_verdict
    from ragscore.monitoring.windows import (
        GROUNDING,
        load_monitor_config,
        monitor_signature,
        observe,
        watch,
        window_seconds,
    )
    from ragscore.reports.common import shown_path
    from ragscore.reports.document import input_entry

    config = configured(config, settings)
    scores_file = load_run_scores(scores, config, monitored=True) if scores is not None else None
    config = judged(config, scores_file)
    score_names = scores_file.names if scores_file is not None else ()
    watching = load_monitor_config(config.cwd or Path.cwd(), config.gates_file, window, min_n,
                                   None if gates is None else gate_spec(gates), strict, score_names)
    width = window_seconds(watching.window)
    s = config.settings
    if "grounding" not in s.families and any(name in GROUNDING for name in (*(g.metric for g in watching.gates),
                                                                            *watching.drift)):
        s = replace(s, families=(*s.families, "grounding"))  # a gate or a drift bound on one turns the family on
    current = watch(as_traces(traces), s, width, scores=scores_file)
    # The baseline period is one window: only its rates are compared.
    before = (watch(as_traces(baseline, "baseline"), s, width, False, "--baseline", scores_file)
              if baseline is not None else None)
    base = before.total() if before is not None else None
    seen = observe(current, base, watching, s.confidence)
    assert current.source is not None
    inputs = {"trace": input_entry(current.source, current.source.sha256),
              "baseline": None if before is None or before.source is None else input_entry(before.source,
                                                                                           before.source.sha256)}
    if scores is not None:
        from ragscore.loaders.jsonl import InputFile

        scores_input = InputFile(os.fspath(scores), hashed=False)
        inputs["scores"] = {"path": shown_path(scores_input.name), "sha256": scores_input.digest_whole()}
    if current.corpus is not None:
        inputs["corpus"] = {"path": shown_path(current.corpus.path), "sha256": current.corpus.sha256,
                            "documents": current.corpus.documents}
    total = seen.total
    counts = {
        "traces": current.lines, "windows": len(seen.windows), "untimed": current.no_time.count,
        "bad_time": current.bad_time.count, "unreadable": current.unreadable.count,
        "unreadable_retrieved": current.bad_retrieved.count, "bad_refused": current.bad_refused.count,
        "bad_operations": total.bad,
        **({"unscored": current.unscored.count} if scores_file is not None else {}),
    }
    document_settings = {
        "window": watching.window, "window_seconds": width, "min_n": watching.min_n, "strict": watching.strict,
        "confidence": s.confidence, "drift": dict(sorted(watching.drift.items())),
        "refusal_tokens": list(s.refusal_tokens), "refusal_patterns": list(s.refusal_patterns),
        "trace_format": current.trace_format, "trace_fields": dict(s.trace_fields),
        **({"metrics": ["grounding"]} if current.grounded else {}),
        **({"judge": dict(s.judge)} if s.judge is not None else {}),
    }
    baseline_doc = None if base is None else {"traces": base.traces,
                                              "metrics": base.metrics(base.citing > 0, current.grounded, score_names)}
    doc = build_monitor_document(document_settings, inputs, counts, seen.metrics, seen.gates, seen.windows,
                                 seen.drift, baseline_doc, seen.passed,
                                 monitor_signature(watching, s, current.trace_format))
    left_out = input_notes(current.source, None if before is None else before.source)
    return MonitorRun(doc, left_out + monitor_notes(current, before, seen, watching.min_n, monitor_verdict(doc)))
