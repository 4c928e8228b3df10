"""The reports of ``ragscore monitor``: its document (JSON), Markdown and OpenMetrics text.

OpenMetrics is the Prometheus text exposition format a scraper reads: one gauge family per
metric (latency in seconds), with the whole period's value and the last window's, whether the
run passed, and the drift tests' adjusted p-values; it ends with ``# EOF``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from ragscore.gates import GateResult
from ragscore.metrics.names import lookup
from ragscore.monitoring.windows import NAMES, Drift, WindowResult, window_label
from ragscore.reports.common import cell, code, cut_for_table, fmt, gate_rule, gate_table, verdict
from ragscore.version import __version__

PREFIX: Final = "ragscore_monitor_"
ALL: Final = "all"


def build_monitor_document(
    settings: Mapping[str, Any], inputs: Mapping[str, Any], counts: Mapping[str, int],
    metrics: Mapping[str, float | None], gates: list[GateResult], windows: Sequence[WindowResult],
    drift: Sequence[Drift] | None, baseline: Mapping[str, Any] | None, passed: bool, signature: str,
) -> dict[str, Any]:
    """Assemble the monitor report: verdict, the whole period, every window, then the drift tests."""
    return {
        "pass": passed,
        "schema": 1,
        "kind": "monitor",
        "version": __version__,
        "signature": signature,
        "settings": dict(settings),
        "inputs": dict(inputs),
        "counts": dict(counts),
        "metrics": dict(metrics),
        "gates": gate_table(gates),
        "windows": [
            {"start": window_label(w.start), "traces": w.traces, "small": w.small, "metrics": w.metrics,
             "gates": gate_table(w.gates)}
            for w in windows
        ],
        "baseline": None if baseline is None else dict(baseline),
        "drift": None if drift is None else [
            {"window": d.window, "metric": d.metric, "baseline": d.baseline, "current": d.current,
             "change": None if d.baseline is None or d.current is None else d.current - d.baseline, "z": d.z,
             "p_value": d.p_value, "p_adjusted": d.p_adjusted, "significant": d.significant, "bound": d.bound,
             "status": "skipped" if d.skipped else "fail" if d.failed else "changed" if d.significant else "pass"}
            for d in drift
        ],
    }


def _failed_gates(doc: Mapping[str, Any]) -> list[str]:
    failed = [f"{name}" for name, g in doc["gates"].items() if g["status"] == "fail"]
    failed += [f"{name}[{w['start']}]" for w in doc["windows"] for name, g in w["gates"].items()
               if g["status"] == "fail"]
    failed += [f"drift {d['metric']}[{d['window']}]" for d in doc["drift"] or () if d["status"] == "fail"]
    return failed


def monitor_verdict(doc: Mapping[str, Any]) -> str:
    """Say what failed (gates on the period or a window, drift), or that nothing did."""
    failed = _failed_gates(doc)
    if not failed:
        return "no gate failed and no rate drifted past its bound"
    shown = ", ".join(failed[:10]) + (f" and {len(failed) - 10} more" if len(failed) > 10 else "")
    return f"{len(failed)} failed: {shown}"


_COLUMNS: Final = ("refusal_rate", "compliance", "fabricated_citation_rate", "empty_retrieval_rate", "latency_p95")


def render_monitor_markdown(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render the monitor report for a pull request or a job summary."""
    settings, counts = doc["settings"], doc["counts"]
    yield f"# ragscore monitor\n\n**{verdict(doc['pass'])}**: {monitor_verdict(doc)}.\n\n"
    yield (f"{counts['traces']} traces in {counts['windows']} windows of {settings['window']} (UTC); "
           f"{counts['untimed']} without a timestamp, {counts['bad_time']} with one that cannot be read "
           "(counted in the whole period only).\n")
    if doc["gates"]:
        yield "\n## Gates (whole period)\n\n| metric | rule | value | status |\n|---|---|---|---|\n"
        for name, g in doc["gates"].items():
            yield f"| {code(name)} | {gate_rule(g)} | {fmt(g['value'])} | {g['status']} |\n"
    yield "\n## Whole period\n\n| metric | value | better |\n|---|---|---|\n"
    for name, value in doc["metrics"].items():
        spec = lookup(name)
        yield f"| {code(name)} | {fmt(value)} | {spec.direction.value if spec else ''} |\n"
    if doc["windows"]:
        yield ("\n## Windows\n\n| window | traces | " + " | ".join(code(n) for n in _COLUMNS) + " | gates |\n"
               + "|---|---|" + "---|" * len(_COLUMNS) + "---|\n")
        for w in doc["windows"]:
            gates = window_status(w)
            values = " | ".join(fmt(w["metrics"][n]) for n in _COLUMNS)
            yield f"| {w['start']} | {w['traces']} | {values} | {gates} |\n"
    if doc["drift"] is not None:
        changed = [d for d in doc["drift"] if d["significant"]]
        yield (f"\n## Drift from the baseline ({doc['baseline']['traces']} traces)\n\nTwo-proportion z-tests, "
               "Holm-corrected across every window and rate; a change fails when significant and past its bound.\n\n")
        if not changed:
            yield "No rate changed significantly.\n"
        else:
            yield ("| window | metric | baseline | now | change | p (Holm) | bound | status |\n"
                   "|---|---|---|---|---|---|---|---|\n")
            for d in changed:
                yield (f"| {d['window']} | {code(d['metric'])} | {fmt(d['baseline'])} | {fmt(d['current'])} | "
                       f"{d['change']:+.4f} | {d['p_adjusted']:.4g} | {fmt(d['bound'])} | {d['status']} |\n")


def window_status(window: Mapping[str, Any]) -> str:
    """Sum a window's gates up: fail, warn, pass, skipped (few traces), or nothing (no gate)."""
    statuses = {g["status"] for g in window["gates"].values()}
    for status in ("fail", "warn", "pass"):
        if status in statuses:
            return status
    return "skipped (few traces)" if statuses else ""


def score_names(doc: Mapping[str, Any]) -> list[str]:
    """The metrics of a monitor report that are scores from a --scores file (each a mean over the traces)."""
    return [name for name in doc["metrics"] if name not in NAMES]


def _sample(name: str, labels: Mapping[str, str], value: float) -> str:
    family = name if name.startswith(PREFIX) else PREFIX + name
    shown = ",".join(f'{key}="{_escape(v)}"' for key, v in labels.items())
    return f"{family}{{{shown}}} {_number(value)}\n" if shown else f"{family} {_number(value)}\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return repr(float(value)) if isinstance(value, float) else str(value)


_HELP: Final = {
    "refusal_rate": "traces that refuse, over traces",
    "compliance": "traces that refuse or carry a citations list, over traces",
    "fabricated_citation_rate": "answered traces citing an id they did not retrieve, over answered traces",
    "empty_retrieval_rate": "traces that retrieved nothing, over traces",
}
# OpenMetrics names: a gauge may not end in _total (a counter's suffix), and time is in seconds.
_RENAMED: Final = {"tokens_total": "tokens", "cost_total": "cost"}


def exposed(name: str) -> tuple[str, str | None, float]:
    """Name a metric as OpenMetrics does, with its unit and what to divide it by (milliseconds to seconds)."""
    if name.startswith("latency_"):
        return f"{PREFIX}{name}_seconds", "seconds", 1000.0
    return PREFIX + _RENAMED.get(name, name), None, 1.0


def render_openmetrics(doc: Mapping[str, Any]) -> Iterator[str]:
    """Write the whole period's metrics and the last window's as OpenMetrics gauges.

    Two samples per metric, ``scope="period"`` and ``scope="last_window"`` (the latest window in
    the traces; ``ragscore_monitor_last_window_start_seconds`` says which): a scraper sees a fixed
    set of series, never one per past window (those are in the JSON report).
    """
    last = doc["windows"][-1] if doc["windows"] else None
    scopes = [("period", doc["metrics"])] + ([("last_window", last["metrics"])] if last else [])
    scores = score_names(doc)
    if scores:  # --scores: one family, a series per score (a score's name may hold what a metric name may not)
        yield (f"# TYPE {PREFIX}score gauge\n# HELP {PREFIX}score the mean of a score from the --scores file over the "
               "traces that have it\n")
        for name in scores:
            for scope, metrics in scopes:
                value = metrics.get(name)
                if value is not None:
                    yield _sample("score", {"name": name, "scope": scope}, value)
    for name in NAMES:
        spec = lookup(name)
        family, unit, divisor = exposed(name)
        help_text = _HELP.get(name) or (spec.description if spec else name)
        if unit is not None:
            help_text = help_text.replace("in milliseconds", "in seconds")
        yield f"# TYPE {family} gauge\n" + (f"# UNIT {family} {unit}\n" if unit else "")
        yield f"# HELP {family} {_escape(help_text)}\n"
        for scope, metrics in scopes:
            value = metrics.get(name)
            if value is not None:
                yield _sample(family, {"scope": scope}, value / divisor if unit else value)
    if last is not None:
        start = datetime.strptime(last["start"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        yield (f"# TYPE {PREFIX}last_window_start_seconds gauge\n# UNIT {PREFIX}last_window_start_seconds seconds\n"
               f"# HELP {PREFIX}last_window_start_seconds when the last window began, in seconds since 1970\n")
        yield _sample("last_window_start_seconds", {}, int(start.timestamp()))
    yield f"# TYPE {PREFIX}pass gauge\n# HELP {PREFIX}pass 1 when no gate failed and no rate drifted past its bound\n"
    yield _sample("pass", {}, 1 if doc["pass"] else 0)
    if doc["drift"] is not None:
        yield (f"# TYPE {PREFIX}drift_p_adjusted gauge\n# HELP {PREFIX}drift_p_adjusted Holm-adjusted p-value of a "
               "rate's change from the baseline\n")
        wanted = {"all": "period", **({last["start"]: "last_window"} if last else {})}
        for d in doc["drift"]:
            if d["p_adjusted"] is not None and d["window"] in wanted:
                yield _sample("drift_p_adjusted", {"metric": d["metric"], "scope": wanted[d["window"]]},
                              d["p_adjusted"])
    yield "# EOF\n"


def untimed(counts: Mapping[str, Any]) -> str:
    """``; 3 without a timestamp, 1 with one that cannot be read (in the whole period only)``, or nothing."""
    parts = [f"{counts[key]:,} {what}" for key, what in (("untimed", "without a timestamp"),
                                                         ("bad_time", "with one that cannot be read")) if counts[key]]
    return f"; {', '.join(parts)} (in the whole period only)" if parts else ""


def render_monitor_comment(doc: Mapping[str, Any], key: str | None = None) -> Iterator[str]:
    """The monitored period as a pull-request comment: the verdict; the period's key metrics (the gated ones, the
    rates, latency p95 and any scores) against the baseline period and their gates; the windows that failed a gate
    and the rates that drifted, in a collapsed list; the marker (``key``, else the trace file's name)."""
    from ragscore.reports.pr_comment import (
        PATH,
        Listing,
        assemble,
        comment_key,
        counted,
        footer,
        key_of_path,
        short,
        table,
    )

    counts, gates = doc["counts"], doc["gates"]
    head: list[str | Listing] = [
        f"**ragscore monitor: {verdict(doc['pass'])}** · {cell(cut_for_table(monitor_verdict(doc), 2_000))}", "",
        f"{counts['traces']:,} traces of {short(doc['inputs']['trace']['path'], PATH)} in {counts['windows']:,} "
        f"windows of {code(doc['settings']['window'])}" + untimed(counts) + "."]
    baseline = (doc.get("baseline") or {}).get("metrics", {})
    names = [*gates, *(n for n in (*_COLUMNS, *score_names(doc)) if n not in gates)]
    metrics = []
    for name in names:
        gate = gates.get(name)
        metrics.append(f"| {code(name)} | {fmt(doc['metrics'].get(name))} | "
                       f"{fmt(baseline.get(name)) if baseline else ''} | {gate_rule(gate) if gate else ''} | "
                       f"{gate['status'] if gate else ''} |")
    head += ["", Listing("", table(["metric", "period", "baseline period", "gate", "status"]), metrics, "metrics")]
    failing = [w for w in doc["windows"] if any(g["status"] == "fail" for g in w["gates"].values())]
    drifted = [d for d in doc["drift"] or () if d["status"] == "fail"]
    listings = []
    if failing:
        rows = [f"| {w['start']} | {w['traces']:,} | "
                + ", ".join(f"{code(n)} {fmt(g['value'])}" for n, g in w["gates"].items() if g["status"] == "fail")
                + " |" for w in failing]
        listings.append(Listing(f"Windows that failed a gate: {len(rows):,}", table(["window", "traces", "failed"]),
                                rows, "windows"))
    if drifted:
        rows = [f"| {cell(d['window'])} | {code(d['metric'])} | {fmt(d['baseline'])} | {fmt(d['current'])} | "
                f"{fmt(d['p_adjusted'])} |" for d in drifted]
        listings.append(Listing(f"Rates that drifted past their bound: {len(rows):,}",
                                table(["window", "rate", "baseline", "now", "p (adjusted)"]), rows, "drifts"))
    summary = (f"{counted(len(failing), 'window', 'windows')} failed a gate, "
               f"{counted(len(drifted), 'rate', 'rates')} drifted")
    details = [(summary, listings)] if listings else []
    yield from assemble(head, details, footer(doc["signature"]),
                        comment_key(key, key_of_path(doc["inputs"]["trace"]["path"])))
