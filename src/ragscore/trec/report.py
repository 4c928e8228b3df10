"""Render the trec reports (one run, or several compared with the first) as JSON, Markdown, HTML and JUnit.

The building blocks are those of the other reports: ``reports.common`` words numbers, gates and
the verdict, ``reports.html`` gives the page, its policy and the gate chart, ``reports.junit``
the test suite; every value from the input (run ids, paths, qids) is escaped.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from ragscore.metrics.registry import Direction
from ragscore.reports.common import cell, change_mark, code, fmt, gate_rule, gates_verdict, signature_line, verdict
from ragscore.reports.html import GATES_NOTE, esc, footer, gates_section, html_table, page_head, verdict_html
from ragscore.reports.json_report import dumps_json
from ragscore.reports.junit import render_junit
from ragscore.trec.document import run_labels
from ragscore.trec.names import resolve

SIGNIFICANT: Final = "*"
FORMATS: Final = ("json", "markdown", "html", "junit")


def render_trec_json(doc: dict[str, Any]) -> Iterator[str]:
    """Render the document as indented JSON (as every JSON report is), each query of ``queries`` on one line."""
    keys = list(doc)
    yield "{\n"
    for n, key in enumerate(keys):
        comma = "," if n < len(keys) - 1 else ""
        if key == "queries":
            entries = doc[key]
            yield '  "queries": [' + "".join(("\n    " if i == 0 else ",\n    ") + dumps_json(entry)
                                             for i, entry in enumerate(entries))
            yield ("\n  ]" if entries else "]") + comma + "\n"
        else:
            yield f"  {dumps_json(key)}: {dumps_json(doc[key], indent=2).replace(chr(10), chr(10) + '  ')}{comma}\n"
    yield "}\n"


def _meaning(name: str) -> str:
    named = resolve(name)
    return named.meaning if named is not None else ""


def _direction(name: str) -> Direction | None:
    """Which way a metric improves; None for num_ret and num_rel, counts that neither improve nor worsen."""
    named = resolve(name)
    return None if named is None or not named.ranks else named.direction


def _md_table(title: str, header: list[str], rows: list[list[str]]) -> list[str]:
    """A titled Markdown table of cells escaped already."""
    return (["", f"## {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(row) + " |" for row in rows])


def flat_gates(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every gate of the document by one name: the metric's, or "run: metric" when runs are compared."""
    if doc["kind"] == "trec":
        return dict(doc["gates"])
    return {f"{label}: {metric}": gate for label, run in zip(run_labels(doc), doc["runs"], strict=True)
            for metric, gate in run["gates"].items()}


def _alpha(doc: dict[str, Any]) -> float:
    return 1 - float(doc["settings"]["confidence"])


def _marked(value: float | None, test: Mapping[str, Any] | None, alpha: float) -> str:
    """A value, marked when its change from the baseline is significant after Holm's correction."""
    p = None if test is None else test["p_adjusted"]
    return fmt(value) + (SIGNIFICANT if p is not None and p < alpha else "")


def _signed(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:+d}" if isinstance(value, int) else f"{value:+.4f}"


def _arrow(name: str, delta: float | None) -> str:
    """Say whether a change is better or worse for this metric (an arrow alone cannot)."""
    return change_mark(delta, _direction(name))


def _how(doc: dict[str, Any]) -> str:
    methods = {m["method"] for c in doc["comparisons"] for m in c["metrics"].values() if m["method"]}
    how = ("paired bootstrap" if methods == {"bootstrap"} else "paired normal approximation"
           if methods == {"normal"} else "paired tests")
    return (f"{SIGNIFICANT} significant at {_alpha(doc):g} after Holm's correction across the metrics of each "
            f"comparison ({how} over {doc['counts']['paired']} queries, paired by qid).")


def _runs_rows(doc: dict[str, Any], show_name: Any, show_path: Any) -> tuple[list[str], list[list[str]]]:
    """The comparison's main table: a row per run (the baseline first), a column per metric."""
    names = list(doc["runs"][0]["metrics"])
    tests: list[Mapping[str, Any]] = [{}] + [c["metrics"] for c in doc["comparisons"]]
    rows = []
    for n, (label, run, source) in enumerate(zip(run_labels(doc), doc["runs"], doc["inputs"]["runs"], strict=True)):
        rows.append([show_name(label) + (" (baseline)" if n == 0 else ""), show_path(source["path"]),
                     str(run["counts"]["scored"])]
                    + [_marked(run["metrics"][name], tests[n].get(name), _alpha(doc)) for name in names])
    return ["run", "path", "queries", *names], rows


def _change_rows(comparison: Mapping[str, Any], alpha: float) -> list[list[str]]:
    """One row per metric of a comparison: both values, the change, its interval and Holm's p-value."""
    rows = []
    for name, m in comparison["metrics"].items():
        bounds = m["delta_interval"]
        p = m["p_adjusted"]
        rows.append([name, fmt(m["baseline"]), fmt(m["candidate"]), f"{_signed(m['delta'])} {_arrow(name, m['delta'])}",
                     "" if bounds is None else f"{_signed(bounds[0])} to {_signed(bounds[1])}",
                     "" if p is None else f"{p:.4f}" + (SIGNIFICANT if p < alpha else "")])
    return rows


CHANGE_HEADER: Final = ["metric", "baseline", "candidate", "change", "interval", "p (Holm)"]
SUMMARY_HEADER: Final = ["run", "queries judged", "ranked", "scored", "missing", "unjudged"]


def _summary_row(run_id: str, counts: Mapping[str, int]) -> list[object]:
    return [run_id, counts["judged"], counts["ranked"], counts["scored"], counts["missing"], counts["unjudged"]]


def render_trec_markdown(doc: dict[str, Any]) -> Iterator[str]:
    """Render the verdict, counts, gates and metrics of one run, or the comparison of several, line by line."""
    gates = flat_gates(doc)
    compared = doc["kind"] == "trec_compare"
    out = [f"# ragscore trec {'comparison' if compared else 'report'}", "",
           f"**{verdict(doc['pass'])}**: {gates_verdict(gates, code)}."]
    if compared:
        labels = run_labels(doc)
        out += ["", f"Baseline: {code(labels[0])}. {_how(doc)}"]
        header, rows = _runs_rows(doc, code, code)
        out += _md_table("Runs", [cell(h) for h in header], rows)
        for comparison in doc["comparisons"]:
            out += _md_table(f"{code(labels[comparison['candidate']])} against {code(labels[0])}", CHANGE_HEADER,
                             [[code(r[0]), *r[1:]] for r in _change_rows(comparison, _alpha(doc))])
    else:
        row = _summary_row(doc["run_id"], doc["counts"])
        out += _md_table("Summary", SUMMARY_HEADER, [[code(row[0]), *(cell(v) for v in row[1:])]])
    out += ["", "## Gates", ""]
    if gates:
        out += ["| metric | rule | value | status |", "|---|---|---|---|"]
        out += [f"| {cell(name)} | {gate_rule(g)} | {cell(g['value'])} | {g['status']} |" for name, g in gates.items()]
    else:
        out.append("No gates are set.")
    if not compared:
        out += _md_table("Metrics", ["metric", "trec_eval", "value", "meaning"], [
            [code(name), code(doc["trec_names"][name]) if name in doc["trec_names"] else "", cell(value),
             cell(_meaning(name))] for name, value in doc["metrics"].items()])
    yield from (line + "\n" for line in out)
    yield signature_line(doc["signature"])


def _num(value: object) -> str:
    return "#" + esc(value)


def _html_code(value: object) -> str:
    return f"<code>{esc(value)}</code>"


def render_trec_html(doc: dict[str, Any]) -> Iterator[str]:
    """Render the same as one self-contained page: verdict, runs or counts, changes, gates with their chart."""
    gates = flat_gates(doc)
    compared = doc["kind"] == "trec_compare"
    title = f"ragscore trec {'comparison' if compared else 'report'}"
    yield page_head(f"{title}: {verdict(doc['pass'])}") + f"<h1>{title}</h1>\n"
    yield verdict_html({"pass": doc["pass"], "gates": gates})
    if compared:
        labels = run_labels(doc)
        yield f'<p class="note">Baseline: {_html_code(labels[0])}. {esc(_how(doc))}</p>\n'
        header, rows = _runs_rows(doc, _html_code, _html_code)
        yield "<h2>Runs</h2>\n" + html_table([esc(h) for h in header], [
            row[:2] + [_num(v) for v in row[2:]] for row in rows], "runs")
        for comparison in doc["comparisons"]:
            n = comparison["candidate"]
            yield (f"<h2>{_html_code(labels[n])} against {_html_code(labels[0])}</h2>\n"
                   + html_table(CHANGE_HEADER, [[_html_code(r[0]), *(_num(v) for v in r[1:])]
                                                for r in _change_rows(comparison, _alpha(doc))], f"changes-{n}"))
        sources = [("qrels", doc["inputs"]["qrels"])] + list(zip(labels, doc["inputs"]["runs"], strict=True))
    else:
        yield "<h2>Summary</h2>\n" + html_table(SUMMARY_HEADER, [
            [_html_code(doc["run_id"]), *(_num(v) for v in _summary_row(doc["run_id"], doc["counts"])[1:])]],
            "counts")
        sources = [("qrels", doc["inputs"]["qrels"]), ("run", doc["inputs"]["run"])]
    inputs = [[esc(role), _html_code(i["path"]), _html_code(i["sha256"])] for role, i in sources]
    yield ("<h2>Inputs</h2>\n" if compared else "") + html_table(["input", "path", "sha256"], inputs, "inputs")
    yield gates_section(gates, GATES_NOTE)
    if not compared:
        yield "<h2>Metrics</h2>\n" + html_table(["metric", "trec_eval", "value", "meaning"], [
            [_html_code(name), _html_code(doc["trec_names"][name]) if name in doc["trec_names"] else "",
             _num(fmt(value)), esc(_meaning(name))] for name, value in doc["metrics"].items()], "metrics")
    yield footer(doc) + "</body>\n</html>\n"


def render_trec(doc: dict[str, Any], format: str) -> Iterator[str]:
    """Render the document in one of ``FORMATS``."""
    if format == "json":
        return render_trec_json(doc)
    if format == "markdown":
        return render_trec_markdown(doc)
    if format == "html":
        return render_trec_html(doc)
    if format == "junit":
        return iter([render_junit({"gates": flat_gates(doc), "signature": doc["signature"], "version": doc["version"],
                                   "settings": doc["settings"]})])
    raise ValueError(f"unknown trec report format {format!r}")
