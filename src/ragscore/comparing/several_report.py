"""The report of several runs compared: its document (JSON), Markdown for a pull request, and HTML."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ragscore.comparing.several import LETTERS, PairResult, marks
from ragscore.reports.common import cell, code, fmt, signature_line
from ragscore.settings import Settings
from ragscore.version import __version__

_TESTS = {"bootstrap": "paired bootstrap", "t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
          "sign": "sign test", "permutation": "paired permutation test"}
_CORRECTED = {"holm": "Holm's correction across each pair's metrics",
              "bonferroni": "Bonferroni's correction across each pair's metrics", "none": "no correction"}


def build_several_document(
    settings: Settings, gold: Mapping[str, Any], runs: Sequence[Mapping[str, Any]], columns: Sequence[str],
    pairs: Sequence[PairResult], test: str, correction: str,
) -> dict[str, Any]:
    """Assemble the table: the runs and their metrics, each pair's moves, then the table itself."""
    names = [run["name"] for run in runs]
    return {
        "schema": 1,
        "kind": "compare-runs",
        "version": __version__,
        "signature": settings.signature(),
        "test": {"name": test, "correction": correction, "confidence": settings.confidence},
        "gold": dict(gold),
        "runs": [dict(run, letter=LETTERS[i]) for i, run in enumerate(runs)],
        "columns": list(columns),
        "pairs": [
            {
                "baseline": names[p.a], "candidate": names[p.b], "wins": p.wins, "ties": p.ties, "losses": p.losses,
                "metrics": {
                    name: {"delta": d.delta, "p_value": d.p_value, "p_adjusted": d.p_adjusted, "method": d.method,
                           "better": None if p.better[name] is None else names[p.better[name]]}  # type: ignore[index]
                    for name, d in p.deltas.items()
                },
            }
            for p in pairs
        ],
        "table": {
            names[i]: {name: {"value": runs[i]["metrics"].get(name), "better_than": [
                names[LETTERS.index(letter)] for letter in marks(i, name, pairs)]} for name in columns}
            for i in range(len(runs))
        },
    }


def how_tested(doc: Mapping[str, Any]) -> str:
    """Say what a mark means: the test, the correction and the level."""
    t = doc["test"]
    return (f"a letter marks a run this one is significantly better than ({_TESTS[t['name']]}, "
            f"{_CORRECTED[t['correction']]}, at {1 - t['confidence']:.2g})")


def render_several_markdown(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render the table and the pairs' wins, ties and losses."""
    names = [run["name"] for run in doc["runs"]]
    yield f"# ragscore compare: {len(names)} runs\n\nEach cell is a run's value; {how_tested(doc)}.\n\n"
    yield "| run | " + " | ".join(code(c) for c in doc["columns"]) + " |\n"
    yield "|---|" + "---|" * len(doc["columns"]) + "\n"
    for run in doc["runs"]:
        cells = []
        for name in doc["columns"]:
            entry = doc["table"][run["name"]][name]
            letters = "".join(LETTERS[names.index(other)] for other in entry["better_than"])
            cells.append(fmt(entry["value"]) + (f" <sup>{letters}</sup>" if letters else ""))
        yield f"| {run['letter']}: {cell(run['name'])} | " + " | ".join(cells) + " |\n"
    yield "\n| pair | wins | ties | losses |\n|---|---|---|---|\n"
    for p in doc["pairs"]:
        yield f"| {cell(p['baseline'])} vs {cell(p['candidate'])} | {p['wins']} | {p['ties']} | {p['losses']} |\n"
    yield ("\nWins count the table's metrics where the first run is significantly better, losses where the "
           "second is.\n")
    yield signature_line(doc["signature"])


def render_several_html(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render the table as a self-contained page (the score report's page, policy and escaping)."""
    from ragscore.reports.html import esc, html_table, page_head

    names = [run["name"] for run in doc["runs"]]
    yield page_head(f"ragscore compare: {len(names)} runs") + f"<h1>ragscore compare: {len(names)} runs</h1>\n"
    yield f"<p>Each cell is a run's value; {esc(how_tested(doc))}.</p>\n"
    rows = []
    for run in doc["runs"]:
        cells = [f"{esc(run['letter'])}: <code>{esc(run['name'])}</code>"]
        for name in doc["columns"]:
            entry = doc["table"][run["name"]][name]
            letters = "".join(LETTERS[names.index(other)] for other in entry["better_than"])
            cells.append("#" + esc(fmt(entry["value"])) + (f" <sup>{esc(letters)}</sup>" if letters else ""))
        rows.append(cells)
    yield html_table(["run", *(f"<code>{esc(c)}</code>" for c in doc["columns"])], rows, "runs")
    yield "<h2>Pairs</h2>\n" + html_table(["pair", "wins", "ties", "losses"], [
        [f"{esc(p['baseline'])} vs {esc(p['candidate'])}", "#" + esc(p["wins"]), "#" + esc(p["ties"]),
         "#" + esc(p["losses"])] for p in doc["pairs"]], "pairs")
    yield (f'<footer>\n<p class="note">ragscore {esc(doc["version"])}; settings: '
           f'<code id="signature">{esc(doc["signature"])}</code></p>\n</footer>\n</body>\n</html>\n')
