"""Render the report document as one self-contained HTML page with inline SVG charts.

The page loads nothing: its Content-Security-Policy allows only the one inline style sheet and
the one inline script below (pinned by their SHA-256 hashes), so even markup that slipped past
escaping could neither run nor fetch anything. Every value from input is escaped anyway.

Chart scales: a gated metric whose value, threshold and warn level all lie in [0, 1] is drawn on
a 0–1 axis; a count metric (the ``counts`` family, such as ``missing``, or any integer value) and
any value outside [0, 1] get an axis of their own from 0 to a round number (1, 2, 5, 10, 20, ...)
at least as large as the value and thresholds, and that axis end is printed after the bar.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any, Final

from ragscore.gates import format_threshold
from ragscore.metrics.answer import PASSING_LABELS
from ragscore.metrics.names import lookup
from ragscore.quoting import visible
from ragscore.reports.common import cut_for_table, diagnosis_heading, fmt, gate_rule, gates_verdict, verdict

CSS: Final = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; padding: 0 1rem; color: #1a1a1a; }
h1 { margin-bottom: .25rem; }
h2 { margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: .25rem; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #ddd; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.verdict { font-size: 1.4rem; font-weight: bold; padding: .6rem 1rem; border-radius: .3rem; color: #fff; }
.verdict.pass { background: #2e7d32; }
.verdict.fail { background: #c62828; }
.status-pass { color: #2e7d32; font-weight: bold; }
.status-warn { color: #b35300; font-weight: bold; }
.status-fail { color: #c62828; font-weight: bold; }
.status-skipped, .status-unknown, .note { color: #666; }
table.questions td:nth-child(2), table.questions td:nth-child(4), table.questions td:nth-child(5) {
  max-width: 24rem; overflow-wrap: anywhere; }
td code { overflow-wrap: normal; }
td.word, td.word code, code.word { white-space: nowrap; }
svg.chart { max-width: 100%; height: auto; }
.scroll { overflow-x: auto; max-width: 100%; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 24rem), 1fr)); gap: .5rem 1.5rem; }
figure { margin: .5rem 0; }
figcaption { font-weight: bold; }
"""

# Shows the label filter (hidden without script, so no dead control) and keeps it in the URL
# fragment, so that file://report.html#HALLUCINATION opens filtered. Input never enters it.
SCRIPT: Final = """
(function () {
  var select = document.getElementById("label-filter");
  if (!select) { return; }
  var rows = document.querySelectorAll("#questions tbody tr");
  var shown = document.getElementById("shown");
  function apply(value) {
    var n = 0;
    rows.forEach(function (row) {
      row.hidden = value !== "" && row.dataset.label !== value;
      n += row.hidden ? 0 : 1;
    });
    shown.textContent = n + " of " + rows.length + " shown";
  }
  function fromHash() {
    var want = "";
    try { want = decodeURIComponent(location.hash.slice(1)); } catch (e) { want = ""; }
    var known = Array.prototype.some.call(select.options, function (o) { return o.value === want; });
    select.value = known ? want : "";
    apply(select.value);
  }
  select.addEventListener("change", function () {
    location.hash = select.value ? encodeURIComponent(select.value) : "";
    apply(select.value);
  });
  window.addEventListener("hashchange", fromHash);
  document.getElementById("filter").hidden = false;
  fromHash();
})();
"""


def csp_hash(text: str) -> str:
    """Return the CSP source expression ('sha256-…') that allows exactly this inline text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


CSP: Final = (
    f"default-src 'none'; style-src {csp_hash(CSS)}; script-src {csp_hash(SCRIPT)}; "
    "img-src 'none'; base-uri 'none'; form-action 'none'"
)

GATES_NOTE: Final = ('<p class="note">Bars are coloured by gate status; the solid line marks the threshold, the dashed '
                     "line the warn level. Rates share a 0–1 axis; counts have their own, printed after the "
                     "value.</p>\n")
STATUS_COLOURS: Final = {"pass": "#2e7d32", "warn": "#ed6c02", "fail": "#c62828", "skipped": "#9e9e9e"}
_GREY: Final = "#9e9e9e"
_PASSING: Final = frozenset(label.value for label in PASSING_LABELS)
_NEWLINES_RE: Final = re.compile(r"\r\n|\r|\n")

# Chart geometry, in SVG user units (the width/height attributes make it render without CSS).
LABEL_END: Final = 200  # metric names are right-aligned against this x
TRACK_X: Final = 208
TRACK_W: Final = 360
ROW_H: Final = 26
BAR_H: Final = 16
PAD: Final = 8
CHART_W: Final = TRACK_X + TRACK_W + 150


def esc(value: object) -> str:
    """Escape any value for HTML text or a quoted attribute; None shows as n/a.

    Control characters show as escapes (``\\x1b``, ``\\n``, ``\\u202e``): none reaches the page raw.
    A leading '#' becomes '&#35;' (the same character once parsed), so that escaped text never
    starts with the mark ``html_table`` reads as "a number": "#1" stays "#1", not a number 1.
    """
    if value is None:
        return "n/a"
    text = html.escape(visible(str(value)), quote=True)
    return "&#35;" + text[1:] if text.startswith("#") else text


def esc_lines(value: object) -> str:
    """Escape a multi-line text and keep its line breaks visible, as ``<br>``."""
    if value is None:
        return "n/a"
    return "<br>".join(esc(line) for line in _NEWLINES_RE.split(str(value)))


def yes_no(value: object) -> str:
    """Show a flag as yes/no (n/a when unknown)."""
    return "n/a" if value is None else ("yes" if value else "no")


def status_class(status: object) -> str:
    """Map a gate status to a fixed class name, so no input reaches an attribute unescaped or a style."""
    return f"status-{status}" if status in STATUS_COLOURS else "status-unknown"


def nice_ceiling(value: float) -> float:
    """Round up to 1, 2 or 5 times a power of ten (at least 1), for a readable axis end."""
    if value <= 1:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value)


def axis_end(name: str, gate: dict[str, Any]) -> float | None:
    """Choose a gate's axis end: None for the shared 0–1 axis, else a round number (see module doc)."""
    numbers = [n for n in (gate.get("value"), gate.get("threshold"), gate.get("warn")) if isinstance(n, (int, float))]
    spec = lookup(name)
    is_count = (spec is not None and spec.family == "counts") or (
        isinstance(gate.get("value"), int) and not isinstance(gate.get("value"), bool))
    if not is_count and all(0 <= n <= 1 for n in numbers):
        return None
    return nice_ceiling(max([1.0, *numbers]))


def _x(value: float, end: float) -> float:
    return TRACK_X + TRACK_W * min(max(value / end, 0.0), 1.0)


def _svg_open(rows: int, label: str) -> str:
    height = 2 * PAD + rows * ROW_H
    return (f'<svg class="chart" width="{CHART_W}" height="{height}" viewBox="0 0 {CHART_W} {height}" '
            f'role="img" aria-label="{esc(label)}" font-family="sans-serif" font-size="12">\n')


def _bar_row(i: int, name: str, width: float, colour: str, value_text: str, title: str, css: str) -> str:
    """Draw one row: the name, the grey track, the bar and the value; ``title`` is the tooltip."""
    y = PAD + i * ROW_H
    bar = (f'<rect class="bar" x="{TRACK_X}" y="{y + 3}" width="{width:.1f}" height="{BAR_H}" fill="{colour}"/>'
           if width > 0 else "")
    return (
        f'<g class="{css}"><title>{esc(title)}</title>'
        f'<text x="{LABEL_END}" y="{y + 15}" text-anchor="end">{esc(name)}</text>'
        f'<rect class="track" x="{TRACK_X}" y="{y + 3}" width="{TRACK_W}" height="{BAR_H}" fill="#eeeeee"/>'
        f'{bar}<text x="{TRACK_X + TRACK_W + 8}" y="{y + 15}">{value_text}</text>'
    )


def gate_chart(gates: dict[str, dict[str, Any]]) -> str:
    """Draw each gated metric as a bar coloured by status, with a marker line at its threshold."""
    out = [_svg_open(len(gates), "gated metrics against their thresholds")]
    for i, (name, gate) in enumerate(gates.items()):
        end = axis_end(name, gate)
        scale = 1.0 if end is None else end
        value = gate.get("value")
        colour = STATUS_COLOURS.get(gate.get("status", ""), _GREY)
        width = 0.0 if not isinstance(value, (int, float)) else _x(value, scale) - TRACK_X
        text = esc(fmt(value) if isinstance(value, (int, float)) else None)
        if end is not None:
            text += f' <tspan fill="#666">(axis 0–{format_threshold(end)})</tspan>'
        shown = fmt(value) if isinstance(value, (int, float)) else "n/a"
        title = f"{name}: {shown}, gate {gate_rule(gate)}: {gate.get('status')}"
        out.append(_bar_row(i, name, width, colour, text, title, "gate-row"))
        y = PAD + i * ROW_H
        for level, dash in ((gate.get("threshold"), ""), (gate.get("warn"), ' stroke-dasharray="3 2"')):
            if isinstance(level, (int, float)):
                x = _x(level, scale)
                out.append(f'<line class="threshold" x1="{x:.1f}" x2="{x:.1f}" y1="{y}" y2="{y + ROW_H - 2}" '
                           f'stroke="#1a1a1a" stroke-width="2"{dash}/>')
        out.append("</g>\n")
    out.append("</svg>\n")
    return "".join(out)


def label_chart(labels: dict[str, int]) -> str:
    """Draw the number of questions with each label: passing labels green, missing traces grey, the rest red."""
    end = max([1, *labels.values()])
    out = [_svg_open(len(labels), "questions per label")]
    for i, (label, count) in enumerate(labels.items()):
        colour = (STATUS_COLOURS["pass"] if label in _PASSING else _GREY if label == "MISSING_TRACE"
                  else STATUS_COLOURS["fail"])
        out.append(_bar_row(i, label, TRACK_W * count / end, colour, esc(count), f"{label}: {count}", "label-row")
                   + "</g>\n")
    out.append("</svg>\n")
    return "".join(out)


def html_table(header: list[str], rows: list[list[str]], table_id: str = "") -> str:
    """Build a table from already-escaped cells; a cell starting with '#' is a number, right-aligned.

    Only a literal '#' put before a formatted number marks one: ``esc`` never returns text that
    starts with '#', so an input string such as "#1" is a text cell, shown whole.
    """
    def td(c: str) -> str:
        return f'<td class="num">{c[1:]}</td>' if c.startswith("#") else f"<td>{c}</td>"
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(td(c) for c in row) + "</tr>\n" for row in rows)
    ident = f' id="{table_id}"' if table_id else ""
    # A wide table scrolls on its own, so that the page keeps a phone's width.
    return (f'<div class="scroll"><table{ident}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n'
            "</table></div>\n")


def page_head(title: str) -> str:
    """Open the page: its policy, style sheet and title (escaped already), up to the start of the body."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
    )


def verdict_html(doc: dict[str, Any]) -> str:
    """Say PASS or FAIL, and which gates failed (or how the gates ended)."""
    detail = gates_verdict(doc["gates"], lambda name: f"<code>{esc(name)}</code>")
    return (f'<p class="verdict {verdict(doc["pass"]).lower()}" id="verdict">{verdict(doc["pass"])}</p>\n'
            f'<p id="verdict-detail">{detail}.</p>\n')


def gates_section(gates: dict[str, dict[str, Any]], note: str = "") -> str:
    """Show the gates as a table and a chart (``note`` below the chart), or say there are none."""
    if not gates:
        return "<h2>Gates</h2>\n<p>No gates are set.</p>\n"
    return "<h2>Gates</h2>\n" + html_table(["metric", "rule", "value", "status", "source"], [
        [f"<code>{esc(name)}</code>", esc(gate_rule(g)), "#" + esc(fmt(g["value"])),
         f'<span class="{status_class(g["status"])}">{esc(g["status"])}</span>', esc(g.get("source"))]
        for name, g in gates.items()], "gates") + gate_chart(gates) + note


def footer(doc: dict[str, Any]) -> str:
    """Close the page's content with the version and the settings signature."""
    return (f'<footer>\n<p class="note">ragscore {esc(doc.get("version", ""))}; settings: '
            f'<code id="signature">{esc(doc["signature"])}</code></p>\n</footer>\n')


def _summary(doc: dict[str, Any]) -> str:
    c = doc["counts"]
    cells = [("questions", c["total"]), ("traced", c.get("traced")), ("answered", doc.get("answered")),
             ("refused", doc.get("refused")), ("answerable", doc.get("answerable")),
             ("unanswerable", doc.get("unanswerable")), ("missing", c["missing"]),
             ("trace lines", c.get("trace_lines")), ("unknown traces", c["unknown_traces"]),
             ("duplicate traces", c["duplicate_traces"])]
    cells += [(label, c[key]) for label, key in (("unreadable traces", "unreadable"),
                                                 ("unreadable retrieved lists", "unreadable_retrieved")) if c.get(key)]
    out = html_table([h for h, _ in cells], [["#" + esc(v) for _, v in cells]], "counts")
    inputs = doc.get("inputs", {})
    if inputs:
        rows = [[esc(role), f"<code>{esc(i.get('path'))}</code>", f"<code>{esc(i.get('sha256'))}</code>"]
                for role, i in inputs.items()]
        out += html_table(["input", "path", "sha256"], rows, "inputs")
    return out


def _metrics(metrics: dict[str, float | None], intervals: dict[str, list[float] | None]) -> str:
    """Every metric with its interval (as the Markdown report shows it: low–high; n/a when undefined,
    blank for a metric without one), its direction and meaning."""
    rows = []
    for name, value in metrics.items():
        spec = lookup(name)
        bounds = intervals.get(name)
        interval = "" if name not in intervals else "n/a" if bounds is None else f"{fmt(bounds[0])}–{fmt(bounds[1])}"
        rows.append([f"<code>{esc(name)}</code>", "#" + esc(fmt(value)), "#" + esc(interval) if interval else "",
                     esc(spec.direction.value if spec else ""), esc(spec.description if spec else "")])
    return html_table(["metric", "value", "interval", "better", "meaning"], rows, "metrics")


def _questions(doc: dict[str, Any], rows_per_label: int) -> Iterator[str]:
    sampled = "repeats" in doc  # a row shows its last sample; the labels count samples, the filter rows
    counts = doc["labels"]
    if sampled:
        shown = Counter(q["label"] for q in doc["questions"])
        counts = {label: shown[label] for label in counts}
    listed = {label: min(n, rows_per_label) for label, n in counts.items()}
    options = "".join(f'<option value="{esc(label)}">{esc(label)} ({esc(listed[label])})</option>'
                      for label, n in counts.items())
    note = ('<p class="note">With samples, a row shows its question\'s last sample; <em>correct</em> counts all of '
            "them, and the label filter counts rows.</p>\n" if sampled else "")
    yield ('<h2>Questions</h2>\n' + note + '<p id="filter" hidden><label for="label-filter">Label:</label> '
           f'<select id="label-filter"><option value="">all labels</option>{options}</select> '
           '<span id="shown"></span></p>\n'
           '<div class="scroll"><table id="questions" class="questions">\n<thead><tr><th>qid</th><th>question</th>'
           "<th>label</th><th>reason</th><th>claim</th><th>cited</th>"
           "<th>answered</th><th>hit</th>" + ("<th>correct</th>" if sampled else "") + "</tr></thead>\n<tbody>\n")
    left, skipped = dict(listed), Counter[str]()
    for q in doc["questions"]:
        if not left.get(q["label"], 0):  # a very large run: the first rows of each label, the rest in the JSON
            skipped[q["label"]] += 1
            continue
        left[q["label"]] -= 1
        correct = f'<td class="num">{q["samples"]["correct"]}/{q["samples"]["n"]}</td>' if sampled else ""
        yield (f'<tr data-label="{esc(q["label"])}"><td class="word"><code>{esc(q["qid"])}</code></td>'
               f'<td>{esc_lines(q.get("question", ""))}</td>'
               f'<td class="word"><code>{esc(q["label"])}</code></td><td>{esc_lines(q.get("reason", ""))}</td>'
               f"<td>{_claim(q.get('claim'))}</td><td>{_cited(q.get('cited'))}</td>"
               f'<td>{yes_no(q.get("answered"))}</td><td>{yes_no(q.get("hit"))}</td>{correct}</tr>\n')
    yield "</tbody>\n</table></div>\n"
    if skipped:
        yield (f'<p class="note" id="rows-cut">The table lists the first {rows_per_label:,} questions of each label, '
               "in gold order (--html-rows); left out: " + ", ".join(
                   f"<code>{esc(label)}</code> {n:,}" for label, n in skipped.items())
               + ". The JSON report (--per-question) lists every one.</p>\n")


def _claim(claim: object) -> str:
    """A claim in the question table: cut as the diagnoses cut it (the JSON report keeps it whole)."""
    return "" if not isinstance(claim, str) else esc_lines(cut_for_table(claim))


def _cited(cited: object) -> str:
    """The cited ids in the question table, each as code; "none" for a trace that cited nothing."""
    if not isinstance(cited, list):
        return ""
    return ", ".join(f"<code>{esc(c)}</code>" for c in cited) if cited else '<span class="note">none</span>'


def _diagnoses(diagnoses: list[dict[str, Any]]) -> str:
    """One block per diagnosis: the crossing, likely causes, what to try, and the worst questions."""
    out = ['<h2>Diagnosis</h2>\n<div id="diagnoses">\n']
    for d in diagnoses:
        severity = "fail" if d["severity"] == "critical" else "warn"
        out.append(f'<section class="diagnosis"><h3><span class="{status_class(severity)}">{esc(d["severity"])}</span> '
                   f"{esc(diagnosis_heading(d))}</h3>\n")
        for title, items in (("Likely causes", d["root_causes"]), ("Try", d["suggested_actions"])):
            if items:
                out.append(f"<p>{title}:</p>\n<ul>" + "".join(f"<li>{esc(i)}</li>" for i in items) + "</ul>\n")
        if d["low_samples"]:
            out.append(html_table(["worst questions", "question", "claim", "value"], [
                [f"<code>{esc(s['qid'])}</code>", esc_lines(cut_for_table(s["question"])),
                 esc_lines(cut_for_table(s["claim"])) if s["claim"] is not None else "(no trace)",
                 "#" + esc(fmt(s["value"]))]
                for s in d["low_samples"]]))
        out.append("</section>\n")
    out.append("</div>\n")
    return "".join(out)


DEFAULT_HTML_ROWS: Final = 1000  # questions of each label the question table lists (--html-rows)


def render_html(doc: dict[str, Any], rows_per_label: int = DEFAULT_HTML_ROWS) -> Iterator[str]:
    """Render the verdict, counts, gates with their chart, labels, metrics and questions, piece by piece;
    the question table lists the first ``rows_per_label`` questions of each label."""
    yield page_head(f"ragscore report: {verdict(doc['pass'])}") + "<h1>ragscore report</h1>\n"
    yield verdict_html(doc)
    yield "<h2>Summary</h2>\n" + _summary(doc)
    yield gates_section(doc["gates"], GATES_NOTE)
    if doc.get("diagnoses"):
        yield _diagnoses(doc["diagnoses"])
    yield "<h2>Labels</h2>\n" + label_chart(doc["labels"])
    yield "<h2>Metrics</h2>\n" + _metrics(doc["metrics"], doc.get("intervals", {}))
    if "repeats" in doc:  # repeated samples: how the metrics read them, and who is left out
        from ragscore.reports.markdown import repeats_notes

        yield "".join(f"<p>{esc(line)}</p>\n" for line in repeats_notes(doc["repeats"]))
    if "questions" in doc:
        yield from _questions(doc, rows_per_label)
    yield footer(doc)
    if "questions" in doc:  # the script only drives the question filter
        yield f"<script>{SCRIPT}</script>\n"
    yield "</body>\n</html>\n"
