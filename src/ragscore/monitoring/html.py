"""The HTML report of ``ragscore monitor``: the verdict, the whole period, a line chart per metric
over the windows (its gate and the baseline's value drawn across), every window, and the drift.

The page is the score report's: self-contained, with the same policy (no script, no request),
every value from the input escaped, the charts inline SVG.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from ragscore.metrics.names import lookup
from ragscore.monitoring.report import monitor_verdict, score_names, window_status
from ragscore.monitoring.windows import NAMES
from ragscore.reports.charts import Plot, broken_line
from ragscore.reports.common import fmt, gate_rule, verdict
from ragscore.reports.html import esc, gates_section, html_table, nice_ceiling, page_head, status_class

PLOT: Final = Plot(width=720, height=170, left=56, right=16, top=14, bottom=34)
LINE: Final = "#1565c0"
GATE: Final = "#c62828"
BASELINE: Final = "#616161"


def _unit(name: str) -> bool:
    """Whether a metric lies from 0 to 1 (its chart's axis ends at 1)."""
    spec = lookup(name)
    return spec is not None and spec.kind == "rate"


def line_chart(name: str, points: Sequence[tuple[str, float | None]], gates: Mapping[str, Any],
               baseline: float | None) -> str:
    """Draw one metric over the windows: a line through the windows that have a value, a solid line
    at its gate's threshold, a dashed one at the baseline period's value."""
    values = [v for _, v in points if v is not None]
    gate = gates.get(name)
    marks = [*values, *([gate["threshold"]] if gate else []), *([baseline] if baseline is not None else [])]
    top = 1.0 if _unit(name) else nice_ceiling(max(marks, default=1.0))
    width, height, left, right, top_edge, _ = PLOT
    n = len(points)

    def x(i: int) -> float:
        return PLOT.x(i, n)

    def y(value: float) -> float:
        return PLOT.y(value, 0.0, top)

    out = [f'<svg class="chart" role="img" aria-label="{esc(name)} per window" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
           *PLOT.axes(),
           f'<text x="{left - 6}" y="{top_edge + 4}" text-anchor="end" font-size="11">{esc(fmt(top))}</text>',
           f'<text x="{left - 6}" y="{top_edge + PLOT.plot_height + 4}" text-anchor="end" font-size="11">0</text>']
    if baseline is not None:
        out.append(f'<line x1="{left}" y1="{y(baseline):.1f}" x2="{width - right}" y2="{y(baseline):.1f}" '
                   f'stroke="{BASELINE}" stroke-dasharray="5 4"><title>baseline {esc(fmt(baseline))}</title></line>')
    if gate:
        out.append(f'<line x1="{left}" y1="{y(gate["threshold"]):.1f}" x2="{width - right}" '
                   f'y2="{y(gate["threshold"]):.1f}" stroke="{GATE}"><title>gate {esc(gate_rule(gate))}</title></line>')
    # A window without a value breaks the line.
    out += broken_line([None if value is None else f"{x(i):.1f},{y(value):.1f}" for i, (_, value) in enumerate(points)],
                       f'fill="none" stroke="{LINE}" stroke-width="2"')
    for i, (label, value) in enumerate(points):
        if value is not None:
            out.append(f'<circle cx="{x(i):.1f}" cy="{y(value):.1f}" r="3" fill="{LINE}">'
                       f"<title>{esc(label)}: {esc(fmt(value))}</title></circle>")
    if points:
        out.append(f'<text x="{left}" y="{height - 8}" font-size="11">{esc(points[0][0])}</text>')
        if len(points) > 1:
            out.append(f'<text x="{width - right}" y="{height - 8}" text-anchor="end" font-size="11">'
                       f"{esc(points[-1][0])}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_monitor_html(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render the monitor report as one self-contained page, piece by piece."""
    word = verdict(doc["pass"])
    yield page_head(f"ragscore monitor: {word}") + "<h1>ragscore monitor</h1>\n"
    yield (f'<p class="verdict {word.lower()}" id="verdict">{word}</p>\n'
           f'<p id="verdict-detail">{esc(monitor_verdict(doc))}.</p>\n')
    counts, settings = doc["counts"], doc["settings"]
    yield "<h2>Summary</h2>\n" + html_table(
        ["traces", "windows", "window", "without a timestamp", "unreadable timestamp", "no claim or refusal"],
        [["#" + esc(counts["traces"]), "#" + esc(counts["windows"]), esc(settings["window"]),
          "#" + esc(counts["untimed"]), "#" + esc(counts["bad_time"]), "#" + esc(counts["unreadable"])]], "summary")
    yield gates_section(dict(doc["gates"]))
    baseline = (doc.get("baseline") or {}).get("metrics", {})
    yield '<h2>Per window</h2>\n<p class="note">The solid red line is the gate, the dashed grey line the ' \
          "baseline period's value; times are window starts in UTC.</p>\n"
    for name in (*NAMES, *score_names(doc)):
        points = [(w["start"], w["metrics"].get(name)) for w in doc["windows"]]
        if not any(value is not None for _, value in points):
            continue
        yield f'<h3 id="chart-{esc(name)}"><code>{esc(name)}</code></h3>\n'
        yield line_chart(name, points, doc["gates"], baseline.get(name))
    yield "<h2>Windows</h2>\n" + html_table(
        ["window", "traces", "refusal_rate", "compliance", "latency_p95", "gates"],
        [[esc(w["start"]), "#" + esc(w["traces"]), "#" + esc(fmt(w["metrics"]["refusal_rate"])),
          "#" + esc(fmt(w["metrics"]["compliance"])), "#" + esc(fmt(w["metrics"]["latency_p95"])),
          _gate_cell(w)] for w in doc["windows"]], "windows")
    if doc["drift"] is not None:
        changed = [d for d in doc["drift"] if d["significant"]]
        yield "<h2>Drift from the baseline</h2>\n"
        if not changed:
            yield "<p>No rate changed significantly (two-proportion z-tests, Holm-corrected).</p>\n"
        else:
            yield html_table(["window", "metric", "baseline", "now", "p (Holm)", "status"], [
                [esc(d["window"]), f"<code>{esc(d['metric'])}</code>", "#" + esc(fmt(d["baseline"])),
                 "#" + esc(fmt(d["current"])), "#" + esc(f"{d['p_adjusted']:.3g}"),
                 f'<span class="{status_class("fail" if d["status"] == "fail" else "warn")}">{esc(d["status"])}</span>']
                for d in changed], "drift")
    yield (f'<footer>\n<p class="note">ragscore {esc(doc.get("version", ""))}; settings: '
           f'<code id="signature">{esc(doc["signature"])}</code></p>\n</footer>\n')
    yield "</body>\n</html>\n"


def _gate_cell(window: Mapping[str, Any]) -> str:
    status = window_status(window)
    return f'<span class="{status_class(status.split()[0])}">{esc(status)}</span>' if status else ""
