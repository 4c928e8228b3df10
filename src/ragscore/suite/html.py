"""The HTML page of ``ragscore run``: the verdict, the summary table, then a section per task holding
its command's own HTML report.

A task's report is rendered by its command's renderer and set into the page: the page's head and
end are dropped, headings move two levels down (under the task's), and every ``id`` (and the ``for`` that names one)
takes the task's place as a prefix, so that ids stay unique. These edits read only markup the
renderers wrote: every value from input reaches their output escaped (``<``, ``>`` and ``"``
never raw), so no input text can look like a tag or an attribute here. The page runs no script
(the score report's question filter stays hidden, as it is without script), and its policy is
the reports' own: it loads nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from ragscore.reports.common import fmt
from ragscore.reports.html import esc, html_table, page_head, status_class
from ragscore.suite.report import status_word, suite_verdict

if TYPE_CHECKING:
    from ragscore.suite.outcome import SuiteOutcome, TaskOutcome

_BODY_RE: Final = re.compile(r"<body>\n(.*)</body>", re.DOTALL)
_HEADING_RE: Final = re.compile(r"<(/?)h([1-4])([ >])")
_ID_RE: Final = re.compile(r' (id|for)="([^"]*)"')
_SCRIPT_RE: Final = re.compile(r"<script>.*?</script>\n?", re.DOTALL)
_STATUS: Final = {"pass": "pass", "fail": "fail", "error": "fail"}


def embed(page: str, prefix: str) -> str:
    """Set a report page into the suite's page: its body only, headings two levels down, ids prefixed."""
    match = _BODY_RE.search(page)
    body = match.group(1) if match else page
    body = _SCRIPT_RE.sub("", body)
    body = _HEADING_RE.sub(lambda m: f"<{m[1]}h{int(m[2]) + 2}{m[3]}", body)
    return _ID_RE.sub(lambda m: f' {m[1]}="{prefix}{m[2]}"', body)


def _compare_body(doc: Mapping[str, Any], alpha: float) -> str:
    """A comparison of two runs (its command writes no HTML): the changes and the regression gates."""
    rows = []
    for name, m in doc["metrics"].items():
        significant = m["p_adjusted"] is not None and m["p_adjusted"] < alpha
        rows.append([f"<code>{esc(name)}</code>", "#" + esc(fmt(m["baseline"])), "#" + esc(fmt(m["candidate"])),
                     "#" + esc(f"{m['delta']:+.4f}" if m["delta"] is not None else "n/a"),
                     "#" + esc("n/a" if m["p_adjusted"] is None else f"{m['p_adjusted']:.4f}"),
                     "significant" if significant else ""])
    out = html_table(["metric", "baseline", "candidate", "change", "p (adjusted)", ""], rows)
    if doc.get("regressions"):
        out += "<h3>Regression gates</h3>\n" + html_table(["metric", "allowed", "worse by", "status"], [
            [f"<code>{esc(name)}</code>", "#" + esc(f"{r['allowed']:g}"), "#" + esc(fmt(r["worse_by"])),
             f'<span class="{status_class(r["status"])}">{esc(r["status"])}</span>']
            for name, r in doc["regressions"].items()])
    return out


def _section(n: int, o: TaskOutcome) -> str:
    prefix = f"t{n}-"
    word = status_word(o)
    out = (f'<section class="task" id="task-{n}">\n<h2>Task <code>{esc(o.task.name)}</code> '
           f'({esc(o.task.command)}): <span class="{status_class(_STATUS[o.status])}">{esc(word)}</span></h2>\n')
    if o.result is None:
        return out + f"<p>Could not run: <code>{esc(o.error)}</code></p>\n</section>\n"
    document = o.result.document
    if o.task.command == "compare" and "pairs" not in document:
        confidence = getattr(o.result, "confidence", 0.95)
        return out + _compare_body(document, 1 - confidence) + "</section>\n"
    return out + embed("".join(o.result.render("html")), prefix) + "</section>\n"


def render_suite_html(run: SuiteOutcome) -> Iterator[str]:
    """Render the verdict and summary, then every task's own report, as one self-contained page."""
    word = "PASS" if run.passed else "FAIL"
    name = f" {esc(run.suite.name)}" if run.suite.name else ""
    yield page_head(f"ragscore suite{name}: {word}") + f"<h1>ragscore suite{name}</h1>\n"
    yield (f'<p class="verdict {word.lower()}" id="verdict">{word}</p>\n'
           f'<p id="verdict-detail">{esc(suite_verdict(run))}.</p>\n')
    rows = []
    for n, row in enumerate(run.summary()):
        figures = esc(row["error"]) if row["error"] else ", ".join(
            f"<code>{esc(metric)}</code> {esc(fmt(value))}" for metric, value in row["metrics"].items())
        rows.append([f'<a href="#task-{n}"><code>{esc(row["task"])}</code></a>', esc(row["command"]),
                     f'<span class="{status_class(_STATUS[row["status"]])}">{esc(status_word(row))}</span>',
                     figures])
    yield "<h2>Summary</h2>\n" + html_table(["task", "command", "status", "key metrics"], rows, "summary")
    for n, o in enumerate(run.outcomes):
        yield _section(n, o)
    yield (f'<footer>\n<p class="note">ragscore suite; settings: <code id="signature">{esc(run.signature)}</code>'
           "</p>\n</footer>\n</body>\n</html>\n")

