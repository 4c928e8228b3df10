"""The dashboard of ``ragscore dashboard``: every task's key metrics over the versions of a history,
and the latest run's breakdown, as one self-contained HTML page or as Markdown.

A trend chart is inline SVG: the values joined by a line (a version without a value breaks it),
the interval as a band where the run kept one, the gate's threshold as a dashed red line (as it
was at each version), and a significant change (a paired test, see ``suite.dashboard``) as a
ring with an arrow. Rates share a 0–1 axis; other values get an axis from 0 to a round number.
The page is the reports' own: the same policy (it loads nothing and runs no script), every value
from the history escaped; charts scale down to a phone's width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

from ragscore.metrics.names import lookup
from ragscore.metrics.registry import Direction
from ragscore.reports.charts import Plot, broken_line
from ragscore.reports.common import cell, code, fmt, gate_rule, verdict
from ragscore.reports.html import esc, html_table, label_chart, nice_ceiling, page_head, status_class

PLOT: Final = Plot(width=480, height=210, left=52, right=14, top=16, bottom=40)
LINE: Final = "#1565c0"
BAND: Final = "#bbdefb"
GATE: Final = "#c62828"
BETTER: Final = "#2e7d32"
WORSE: Final = "#c62828"
LABELLED: Final = 8       # up to this many versions, every one is named under its chart
MARKDOWN_VERSIONS: Final = 20  # the Markdown tables show the latest this many versions
WORST_SHOWN: Final = 10


def short(label: str) -> str:
    """A version label for a chart's axis: a commit hash cut to 12 characters, anything else to 24."""
    if len(label) == 40 and all(c in "0123456789abcdef" for c in label):
        return label[:12]
    return label if len(label) <= 24 else label[:23] + "…"


def _numbers(points: Sequence[Mapping[str, Any] | None]) -> list[float]:
    out: list[float] = []
    for p in points:
        if p is None:
            continue
        out += [v for v in (p["value"], *(p["interval"] or ()),
                            *((p["gate"]["threshold"], p["gate"]["warn"]) if p["gate"] else ())) if v is not None]
    return out


def _axis(name: str, points: Sequence[Mapping[str, Any] | None]) -> tuple[float, float]:
    """The axis of a chart: 0 to 1 for a rate, else 0 (or below it, for a negative value) to a round number."""
    spec = lookup(name)
    numbers = _numbers(points)
    is_count = spec is not None and spec.kind == "count"
    if not is_count and all(0 <= n <= 1 for n in numbers):
        return 0.0, 1.0
    low = min([0.0, *numbers])
    bottom = -nice_ceiling(-low) if low < 0 else 0.0
    return bottom, nice_ceiling(max([1.0, *numbers]))


def _direction(name: str, change: Mapping[str, Any]) -> str:
    """Say whether a significant change made the metric better or worse (or just which way it went)."""
    delta = change["delta"] or 0.0
    spec = lookup(name)
    arrow = "▲" if delta > 0 else "▼"
    if spec is None:
        return arrow
    return arrow + (" better" if (delta > 0) == (spec.direction is Direction.HIGHER) else " worse")


def trend_chart(name: str, points: Sequence[Mapping[str, Any] | None], labels: Sequence[str],
                changed: Sequence[int] = ()) -> str:
    """Draw one metric over the versions (see the module's docstring); ``changed`` are the versions
    whose settings differ from the version before (a grey dotted line)."""
    n = len(points)
    bottom, top = _axis(name, points)
    width, height, left, right, top_edge, _ = PLOT
    plot_w, plot_h = PLOT.plot_width, PLOT.plot_height

    def x(i: int) -> float:
        return PLOT.x(i, n)

    def y(value: float) -> float:
        return PLOT.y(value, bottom, top)

    out = [f'<svg class="chart trend" role="img" aria-label="{esc(name)} over {n} versions" width="{width}" '
           f'height="{height}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" '
           'font-family="sans-serif" font-size="12">',
           *PLOT.axes(),
           f'<text x="{left - 6}" y="{top_edge + 4}" text-anchor="end">{esc(f"{top:g}")}</text>',
           f'<text x="{left - 6}" y="{top_edge + plot_h + 4}" text-anchor="end">{esc(f"{bottom:g}")}</text>']
    if bottom < 0:
        out.append(f'<line class="zero" x1="{left}" x2="{width - right}" y1="{y(0):.1f}" y2="{y(0):.1f}" '
                   'stroke="#bbb"/>')
    for i in changed:
        out.append(f'<line class="settings" x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{top_edge}" y2="{top_edge + plot_h}" '
                   f'stroke="#757575" stroke-dasharray="2 3"><title>{esc(labels[i])}: the settings changed'
                   "</title></line>")
    out += _band(points, x, y)
    out += _gate_marks(points, n, x, y)
    out += _values(name, points, labels, x, y)
    named = range(n) if n <= LABELLED else sorted({0, n - 1})
    for i in named:
        anchor = "start" if i == 0 and n > 1 else "end" if i == n - 1 and n > 1 else "middle"
        out.append(f'<text class="version" x="{x(i):.1f}" y="{height - 22}" text-anchor="{anchor}">'
                   f"{esc(short(labels[i]))}</text>")
    if n > LABELLED:
        out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 22}" text-anchor="middle" fill="#666">'
                   f"{n} versions</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _num(value: object) -> str:
    return "#" + esc(fmt(value if isinstance(value, (int, float)) and not isinstance(value, bool) else None))


def _gates_table(gates: Mapping[str, Any]) -> str:
    """The latest run's gates (``suite.dashboard`` kept those it can read)."""
    rows = [[f"<code>{esc(name)}</code>", esc(gate_rule(g)), _num(g["value"]),
             f'<span class="{status_class(g["status"])}">{esc(g["status"])}</span>'] for name, g in gates.items()]
    return "<h4>Gates</h4>\n" + html_table(["metric", "rule", "value", "status"], rows) if rows else ""


def _matrix(confusion: object) -> tuple[list[object], list[list[object]]] | None:
    """A confusion matrix's labels and rows, if the history holds one."""
    if not isinstance(confusion, dict) or not isinstance(confusion.get("labels"), list):
        return None
    matrix = confusion.get("matrix")
    rows = [row for row in matrix if isinstance(row, list)] if isinstance(matrix, list) else []
    return confusion["labels"], rows


def _breakdown(task: Mapping[str, Any]) -> str:
    """The latest run's detail: labels and failing questions, a confusion matrix, a type distribution."""
    b = task["latest"]["breakdown"] if isinstance(task["latest"]["breakdown"], dict) else {}
    out = []
    labels = b.get("labels")
    if isinstance(labels, dict) and labels and all(isinstance(v, int) for v in labels.values()):
        out.append("<h4>Labels</h4>\n" + label_chart(labels))
    worst = b.get("worst")
    if isinstance(worst, list) and worst:
        rows = [[f'<code class="word">{esc(q.get("qid"))}</code>', f'<code class="word">{esc(q.get("label"))}</code>',
                 esc(q.get("question")), esc(q.get("reason"))] for q in worst[:WORST_SHOWN] if isinstance(q, dict)]
        out.append("<h4>Failing questions</h4>\n" + html_table(["qid", "label", "question", "reason"], rows))
    matrix = _matrix(b.get("confusion"))
    if matrix is not None:
        names, matrix_rows = matrix
        out.append("<h4>Confusion matrix</h4>\n<p class=\"note\">Rows: gold label; columns: predicted.</p>\n"
                   + html_table(["gold \\ predicted", *(f"<code>{esc(n)}</code>" for n in names)],
                                [[f"<code>{esc(name)}</code>", *(_num(v) for v in row)]
                                 for name, row in zip(names, matrix_rows, strict=False)]))
    types = b.get("type_distribution")
    if isinstance(types, dict) and types:
        rows = [[f"<code>{esc(name)}</code>", _num(t.get("gold")), _num(t.get("predicted")),
                 _num(t.get("over_prediction"))] for name, t in types.items() if isinstance(t, dict)]
        out.append("<h4>Entity types</h4>\n" + html_table(["type", "gold", "predicted", "over-predicted"], rows))
    for key, title in (("broken", "Broken"), ("fixed", "Fixed")):
        qids = b.get(key)
        if isinstance(qids, list) and qids:
            out.append(f"<p><strong>{title}</strong> ({len(qids)}): "
                       + ", ".join(f"<code>{esc(q)}</code>" for q in qids[:50]) + ("…" if len(qids) > 50 else "")
                       + "</p>\n")
    counts = b.get("counts")
    if isinstance(counts, dict) and counts:
        out.append(html_table([esc(k) for k in counts], [[_num(v) for v in counts.values()]]))
    return "".join(out)


def _task_section(n: int, task: Mapping[str, Any], labels: Sequence[str]) -> str:
    latest = task["latest"]
    status = latest["status"] if latest["status"] in ("pass", "fail", "error") else "unknown"
    out = [f'<section class="task" id="task-{n}">\n<h2>Task <code>{esc(task["name"])}</code> '
           f'({esc(task["command"])}): <span class="{status_class("fail" if status == "error" else status)}">'
           f"{esc(status.upper())}</span> at {esc(short(labels[latest['version']]))}</h2>\n"]
    if latest["error"]:
        out.append(f"<p>Could not run: <code>{esc(latest['error'])}</code></p>\n")
    if task["series"]:
        out.append('<div class="charts">\n')
        for k, (metric, points) in enumerate(task["series"].items()):
            out.append(f'<figure id="chart-{n}-{k}" data-metric="{esc(metric)}"><figcaption><code>{esc(metric)}'
                       "</code></figcaption>\n" + trend_chart(metric, points, labels, task["settings_changed"])
                       + "</figure>\n")
        out.append("</div>\n")
    out.append(_gates_table(latest["gates"]) + _breakdown(task) + "</section>\n")
    return "".join(out)


def render_dashboard_html(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render the dashboard as one self-contained page."""
    versions = doc["versions"]
    labels = [v["label"] for v in versions]
    name = f" {esc(doc['suite'])}" if doc.get("suite") else ""
    latest = versions[-1]
    word = verdict(latest["pass"])
    yield page_head(f"ragscore dashboard{name}") + f"<h1>ragscore dashboard{name}</h1>\n"
    yield (f'<p class="verdict {word.lower()}" id="verdict">{word}</p>\n'
           f'<p id="verdict-detail">Latest version <code>{esc(latest["label"])}</code>'
           + (f" ({esc(latest['time'])})" if latest["time"] else "")
           + f"; {len(versions)} version{'s' if len(versions) != 1 else ''} in the history.</p>\n")
    if doc["skipped_lines"]:
        yield (f'<p class="note">{len(doc["skipped_lines"])} incomplete history line(s) skipped (a run that stopped '
               f"while writing): line {esc(', '.join(map(str, doc['skipped_lines'][:10])))}.</p>\n")
    yield ('<p class="note">Each chart: the values over the versions (oldest left), the interval as a band, the '
           "gate as a dashed red line, a dotted grey line where the task's settings changed, a ring where a paired "
           "test of the version before found a significant change (▲ up, ▼ down; green better, red worse).</p>\n")
    rows = []
    for n, task in enumerate(doc["tasks"]):
        status = task["latest"]["status"]
        rows.append([f'<a href="#task-{n}"><code>{esc(task["name"])}</code></a>', esc(task["command"]),
                     f'<span class="{status_class("fail" if status == "error" else status)}">'
                     f"{esc(str(status).upper())}</span>",
                     ", ".join(f"<code>{esc(m)}</code> {esc(fmt(_last_value(points)))}"
                               for m, points in task["series"].items())])
    yield "<h2>Tasks</h2>\n" + html_table(["task", "command", "latest", "key metrics"], rows, "tasks")
    for n, task in enumerate(doc["tasks"]):
        yield _task_section(n, task, labels)
    shown = versions[-MARKDOWN_VERSIONS:]
    yield "<h2>Versions</h2>\n" + (html_table(
        ["version", "time", "verdict", *(f"<code>{esc(t['name'])}</code>" for t in doc["tasks"])],
        [[f"<code>{esc(v['label'])}</code>", esc(v["time"] or ""), esc(verdict(v["pass"])),
          *(esc(t["statuses"][len(versions) - len(shown) + i] or "") for t in doc["tasks"])]
         for i, v in enumerate(shown)], "versions"))
    if len(versions) > len(shown):
        yield f'<p class="note">The latest {len(shown)} of {len(versions)} versions.</p>\n'
    yield (f'<footer>\n<p class="note">ragscore {esc(doc["version"])} dashboard of <code>{esc(doc["source"])}</code>'
           "</p>\n</footer>\n</body>\n</html>\n")


def _last_value(points: Sequence[Mapping[str, Any] | None]) -> float | None:
    last = points[-1] if points else None
    return None if last is None else last["value"]


def render_dashboard_markdown(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render the dashboard for a pull request: per task, its key metrics over the latest versions."""
    versions = doc["versions"]
    shown = range(max(0, len(versions) - MARKDOWN_VERSIONS), len(versions))
    title = f"ragscore dashboard {code(doc['suite'])}" if doc.get("suite") else "ragscore dashboard"
    latest = versions[-1]
    yield (f"# {title}\n\n**{verdict(latest['pass'])}** at {code(latest['label'])}; {len(versions)} "
           f"version{'s' if len(versions) != 1 else ''} in the history"
           + (f", the latest {len(shown)} shown" if len(shown) < len(versions) else "") + ".\n")
    if doc["skipped_lines"]:
        yield (f"\n{len(doc['skipped_lines'])} incomplete history line(s) skipped: line "
               f"{', '.join(map(str, doc['skipped_lines'][:10]))}.\n")
    yield "\n\\* a significant change (paired test) at that version.\n"
    for task in doc["tasks"]:
        yield f"\n## Task {code(task['name'])} ({code(task['command'])})\n\n"
        metrics = list(task["series"])
        latest = task["latest"]
        if latest["error"]:
            yield f"Could not run at {code(versions[latest['version']]['label'])}: {cell(latest['error'])}\n\n"
        failed = [name for name, g in latest["gates"].items() if g["status"] == "fail"]
        if failed:
            yield ("Failed gates at " + code(versions[latest["version"]]["label"]) + ": "
                   + ", ".join(f"{code(name)} ({cell(gate_rule(latest['gates'][name]))}, "
                               f"{fmt(latest['gates'][name]['value'])})" for name in failed) + "\n\n")
        yield "| version | status |" + "".join(f" {code(m)} |" for m in metrics) + "\n"
        yield "|---|---|" + "---|" * len(metrics) + "\n"
        for i in shown:
            values = []
            for m in metrics:
                p = task["series"][m][i]
                text = "" if p is None else fmt(p["value"])
                if p is not None and p["change"] is not None:
                    text += "\\*"
                if p is not None and p["gate"] is not None and p["gate"]["status"] == "fail":
                    text += " (gate failed)"
                values.append(text)
            yield f"| {cell(versions[i]['label'])} | {cell(task['statuses'][i] or '')} |" + "".join(
                f" {v} |" for v in values) + "\n"
        b = task["latest"]["breakdown"] if isinstance(task["latest"]["breakdown"], dict) else {}
        labels = b.get("labels")
        if isinstance(labels, dict) and labels:
            yield "\nLabels: " + ", ".join(f"{code(k)} {cell(v)}" for k, v in labels.items()) + "\n"
        worst = b.get("worst")
        if isinstance(worst, list) and worst:
            yield "\n| failing question | label | reason |\n|---|---|---|\n"
            for q in worst[:WORST_SHOWN]:
                if isinstance(q, dict):
                    yield f"| {code(q.get('qid'))} | {code(q.get('label'))} | {cell(q.get('reason'))} |\n"
        matrix = _matrix(b.get("confusion"))
        if matrix is not None:
            names, rows = matrix
            yield "\n| gold \\\\ predicted | " + " | ".join(code(n) for n in names) + " |\n"
            yield "|---|" + "---|" * len(names) + "\n"
            for name, row in zip(names, rows, strict=False):
                yield f"| {code(name)} | " + " | ".join(cell(v) for v in row) + " |\n"
        types = b.get("type_distribution")
        if isinstance(types, dict) and types:
            yield "\n| type | gold | predicted |\n|---|---|---|\n"
            for name, t in types.items():
                if isinstance(t, dict):
                    yield f"| {code(name)} | {cell(t.get('gold'))} | {cell(t.get('predicted'))} |\n"
    yield f"\nragscore {cell(doc['version'])}; history {code(doc['source'])}\n"


Scale = Callable[[float], float]


def _band(points: Sequence[Mapping[str, Any] | None], x: Callable[[int], float], y: Scale) -> list[str]:
    """The interval band, in runs of consecutive versions that kept one."""
    out: list[str] = []
    n = len(points)
    run: list[int] = []
    for i in [*range(n), None]:
        p = points[i] if i is not None else None
        if i is not None and p is not None and p["interval"] is not None:
            run.append(i)
            continue
        if run:
            upper = [f"{x(j):.1f},{y(points[j]['interval'][1]):.1f}" for j in run]  # type: ignore[index]
            lower = [f"{x(j):.1f},{y(points[j]['interval'][0]):.1f}" for j in reversed(run)]  # type: ignore[index]
            if len(run) == 1:  # one version: a short bar
                j = run[0]
                lo, hi = points[j]["interval"]  # type: ignore[index]
                out.append(f'<rect class="band" x="{x(j) - 4:.1f}" y="{y(hi):.1f}" width="8" '
                           f'height="{max(y(lo) - y(hi), 0.5):.1f}" fill="{BAND}"/>')
            else:
                out.append(f'<polygon class="band" fill="{BAND}" points="{" ".join(upper + lower)}"/>')
            run = []
    return out


def _gate_marks(points: Sequence[Mapping[str, Any] | None], n: int, x: Callable[[int], float], y: Scale
                ) -> list[str]:
    """The gate's threshold as it was at each version: a line through consecutive gated versions, a short
    tick for a gated version alone (no line where a version had no gate)."""
    out: list[str] = []
    width, _, left, right, _, _ = PLOT
    plot_w = PLOT.plot_width
    gated = [(i, p["gate"]) for i, p in enumerate(points) if p is not None and p["gate"] is not None]
    if gated:
        rule = esc(gate_rule(gated[-1][1]))
        runs: list[list[tuple[int, Mapping[str, Any]]]] = []
        for i, g in gated:
            if runs and runs[-1][-1][0] == i - 1:
                runs[-1].append((i, g))
            else:
                runs.append([(i, g)])
        half = 6 if n > 1 else plot_w / 2
        for span in runs:
            if len(span) == 1:
                i, g = span[0]
                start, end = max(x(i) - half, left), min(x(i) + half, width - right)
                out.append(f'<line class="gate" x1="{start:.1f}" x2="{end:.1f}" '
                           f'y1="{y(g["threshold"]):.1f}" y2="{y(g["threshold"]):.1f}" stroke="{GATE}" '
                           f'stroke-dasharray="5 4"><title>gate {rule}</title></line>')
            else:
                path = " ".join(f"{x(i):.1f},{y(g['threshold']):.1f}" for i, g in span)
                out.append(f'<polyline class="gate" fill="none" stroke="{GATE}" stroke-dasharray="5 4" '
                           f'points="{path}"><title>gate {rule}</title></polyline>')
    return out


def _values(name: str, points: Sequence[Mapping[str, Any] | None], labels: Sequence[str], x: Callable[[int], float],
            y: Scale) -> list[str]:
    """The values, the line broken where a version has none, each point with its title, a significant
    change circled."""
    n = len(points)
    out = broken_line([None if p is None or p["value"] is None else f"{x(i):.1f},{y(p['value']):.1f}"
                        for i, p in enumerate(points)], f'class="values" fill="none" stroke="{LINE}" stroke-width="2"')
    radius = 3 if n <= 60 else 2
    for i, p in enumerate(points):
        if p is None or p["value"] is None:
            continue
        title = f"{labels[i]}: {fmt(p['value'])}"
        if p["interval"] is not None:
            title += f" ({fmt(p['interval'][0])}–{fmt(p['interval'][1])})"
        change = p["change"]
        if change is not None:
            word = _direction(name, change)
            colour = WORSE if word.endswith("worse") else BETTER if word.endswith("better") else LINE
            p_text = "" if change["p_adjusted"] is None else f", p {change['p_adjusted']:.3g}"
            title += f"; significant change {fmt(change['delta'])}{p_text}"
            out.append(f'<circle class="significant" cx="{x(i):.1f}" cy="{y(p["value"]):.1f}" r="{radius + 4}" '
                       f'fill="none" stroke="{colour}" stroke-width="2"><title>{esc(title)}</title></circle>'
                       f'<text x="{x(i):.1f}" y="{y(p["value"]) - radius - 8:.1f}" text-anchor="middle" '
                       f'fill="{colour}">{esc(word[0])}</text>')
        out.append(f'<circle class="point" cx="{x(i):.1f}" cy="{y(p["value"]):.1f}" r="{radius}" fill="{LINE}">'
                   f"<title>{esc(title)}</title></circle>")
    return out
