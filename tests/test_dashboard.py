"""`ragscore dashboard`: a history's trend charts and latest breakdown, for 1 to 200 versions, in a real browser.

Regenerate the docs' screenshot (docs/dashboard.png, shown in docs/commands/dashboard.md) after an intended change with:
REGENERATE_GOLDEN=1 pytest tests/test_dashboard.py
"""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, ROOT
from ragscore.reports.html import CSP
from ragscore.suite import history
from test_html import browse, cells, chromium, parse, parse_dom  # noqa: F401 (chromium is a fixture)

REGENERATE = __import__("os").environ.get("REGENERATE_GOLDEN") == "1"
SCREENSHOT = ROOT / "docs" / "dashboard.png"
EXAMPLE = EXAMPLES / "suite" / "history.jsonl"


def record(i: int, rng: random.Random, label: str | None = None) -> dict[str, Any]:
    """A history line of a synthetic three-task suite at version ``i``."""
    precision = min(1.0, 0.5 + 0.002 * i + rng.uniform(-0.05, 0.05))
    qa = {"command": "score", "status": "pass" if precision >= 0.55 else "fail", "no_fail": False, "error": None,
          "metrics": {"precision": precision, "chr": precision + 0.01, "missing": i % 3},
          "key_metrics": ["precision", "chr", "missing"],
          "intervals": {"precision": [precision - 0.05, min(1.0, precision + 0.05)]},
          "gates": {"precision": {"op": ">=", "threshold": 0.55, "warn": None, "value": precision,
                                  "status": "pass" if precision >= 0.55 else "fail"}},
          "changes": None, "breakdown": {"labels": {"OK": 10 + i, "HALLUCINATION": 2},
                                         "worst": [{"qid": "Q1", "label": "HALLUCINATION", "question": "q?",
                                                    "reason": "unanswerable but answered"}]},
          "inputs": {"gold": {"path": "g.jsonl", "sha256": "a" * 64}, "trace": {"path": "t.jsonl",
                                                                              "sha256": f"{i:064x}"}},
          "signature": "ragscore:0.1.0|k:5"}
    release = {"command": "compare", "status": "pass", "no_fail": False, "error": None,
               "metrics": {"precision": precision}, "key_metrics": ["precision"],
               "changes": {"precision": {"delta": 0.1, "p_adjusted": 0.01, "significant": i % 7 == 3}},
               "inputs": {**qa["inputs"], "baseline": {"path": "b.jsonl", "sha256": f"{max(i - 1, 0):064x}"}},
               "gates": {"precision": {"op": "worse by <=", "threshold": 0.05, "warn": None, "value": 0.01,
                                       "status": "pass"}},
               "breakdown": {}}
    classify = {"command": "classify", "status": "pass", "no_fail": False, "error": None,
                "metrics": {"accuracy": 0.8}, "key_metrics": ["accuracy"], "gates": {},
                "breakdown": {"confusion": {"labels": ["A", "B"], "matrix": [[3, 1], [0, 4]]}}}
    return {"ragscore_history": 1, "label": label or f"v{i}", "time": None, "version": "0.1.0", "suite": "synthetic",
            "signature": "s", "pass": True, "tasks": {"qa": qa, "release": release, "classify": classify}}


def write_history(path: Path, records: list[dict[str, Any]]) -> Path:
    for r in records:
        history.append(path, r)
    return path


def test_the_example_history_charts_every_key_metric(ragscore, tmp_path):
    run = ragscore("dashboard", EXAMPLE, "--html", tmp_path / "d.html")
    assert run.status == 0 and run.err == ""
    page = (tmp_path / "d.html").read_text(encoding="utf-8")
    records = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    keys = {name: task["key_metrics"] for name, task in records[-1]["tasks"].items()}
    root = parse(page)
    charts = root.all("svg", **{"class": "chart trend"})
    assert len(charts) == sum(map(len, keys.values())) == 17
    for n, (task, metrics) in enumerate(keys.items()):
        for k, metric in enumerate(metrics):
            figure = root.one("figure", id=f"chart-{n}-{k}")
            assert figure.attrs["data-metric"] == metric
            svg = figure.one("svg")
            assert len(svg.all("circle", **{"class": "point"})) == 5, (task, metric)
            gated = records[-1]["tasks"][task]["gates"].get(metric, {}).get("op") in (">=", "<=")
            assert bool(svg.all("polyline", **{"class": "gate"})) == gated, (task, metric)
    assert not root.one("figure", id="chart-1-0").one("svg").all("polyline", **{"class": "gate"})  # a regression
    qa_precision = root.one("figure", id="chart-0-0").one("svg")
    assert qa_precision.all("polygon", **{"class": "band"})  # the score task kept intervals
    # v1.1 fixed the citations v1.0 had lost: the release compare found it significant, on both charts.
    for figure in ("chart-0-0", "chart-1-0"):
        (ring,) = root.one("figure", id=figure).all("circle", **{"class": "significant"})
        assert "v1.1: 0.7000" in ring.content() and "significant change 0.4241" in ring.content()
    assert root.one("table", id="tasks")
    assert "Confusion matrix" in page and "Entity types" in page and "Failing questions" in page
    assert run.out.startswith("# ragscore dashboard `Stashwell support bot`")
    assert "| v1.1 | fail | 0.7000\\* (gate failed) | 0.7667\\* |" in run.out


def test_the_dashboard_is_the_same_bytes_twice(ragscore, tmp_path):
    for name in ("a", "b"):
        ragscore("dashboard", EXAMPLE, "--html", tmp_path / f"{name}.html", "--json", tmp_path / f"{name}.json")
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert str(ROOT) not in (tmp_path / "a.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("versions", [1, 2, 9, 60, 200])
def test_the_dashboard_renders_1_to_200_versions(ragscore, tmp_path, versions):
    rng = random.Random(versions)
    log = write_history(tmp_path / "h.jsonl", [record(i, rng) for i in range(versions)])
    run = ragscore("dashboard", log, "--html", tmp_path / "d.html")
    assert run.status == 0
    root = parse((tmp_path / "d.html").read_text(encoding="utf-8"))
    charts = root.all("svg", **{"class": "chart trend"})
    assert len(charts) == 5  # qa: precision, chr, missing; release: precision; classify: accuracy
    for svg in charts:
        assert len(svg.all("circle", **{"class": "point"})) == versions
        named = [t.content() for t in svg.all("text", **{"class": "version"})]
        assert named == ([f"v{i}" for i in range(versions)] if versions <= 8 else ["v0", f"v{versions - 1}"])
    significant = sum(1 for i in range(versions) if i % 7 == 3)
    assert len(charts[0].all("circle", **{"class": "significant"})) == significant  # linked by the inputs' sha256
    assert len(charts[3].all("circle", **{"class": "significant"})) == significant
    # missing is a count: its own axis, up to a round number
    assert charts[2].all("text")[0].content() == ("1" if versions <= 2 else "2")
    table_rows = [line for line in run.out.splitlines() if line.startswith("| v") and not line.startswith("| version")]
    assert len(table_rows) == 3 * min(versions, 20)


def test_values_that_are_not_numbers_show_as_none(ragscore, tmp_path):
    bad = record(0, random.Random(0))
    bad["tasks"]["qa"]["metrics"] = {"precision": "0.9", "chr": True, "missing": None}
    bad["tasks"]["qa"]["intervals"] = {"precision": [0.9, 0.1]}
    bad["tasks"]["qa"]["gates"] = {"precision": {"op": ">=", "threshold": "high"}}
    log = write_history(tmp_path / "h.jsonl", [bad])
    log.write_text(log.read_text().replace('"missing":null', '"missing":1e999'))
    run = ragscore("dashboard", log, "--format", "json")
    series = json.loads(run.out)["tasks"][0]["series"]
    assert [series[m][0]["value"] for m in ("precision", "chr", "missing")] == [None, None, None]
    assert series["precision"][0]["interval"] is None and series["precision"][0]["gate"] is None


def test_a_torn_last_line_is_noted_and_an_empty_history_is_an_error(ragscore, tmp_path):
    log = write_history(tmp_path / "h.jsonl", [record(0, random.Random(0))])
    with open(log, "a", encoding="utf-8") as stream:
        stream.write('{"ragscore_history": 1, "label": "v1", "ti')
    run = ragscore("dashboard", log, "--format", "none")
    assert run.status == 0 and "h.jsonl: 1 incomplete line skipped (a run stopped while writing it?): line 2" in run.err
    log.write_text('{"ragscore_history": 1, "lab', encoding="utf-8")
    run = ragscore("dashboard", log)
    assert run.status == 2 and "holds no complete run" in run.err
    assert "no such file" in ragscore("dashboard", tmp_path / "none.jsonl").err


HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">"\u202e'


def hostile_history(path: Path) -> Path:
    r = record(0, random.Random(0), label=HOSTILE)
    r["suite"] = HOSTILE
    qa = r["tasks"].pop("qa")
    qa["breakdown"]["worst"][0].update(qid=HOSTILE, label=HOSTILE, question=HOSTILE, reason=HOSTILE)
    qa["breakdown"]["labels"] = {HOSTILE: 3}
    qa["metrics"][HOSTILE] = 0.5
    qa["key_metrics"].append(HOSTILE)
    qa["gates"][HOSTILE] = {"op": HOSTILE, "threshold": 0.5, "warn": None, "value": 0.5, "status": HOSTILE}
    r["tasks"][HOSTILE] = qa
    r["tasks"]["classify"]["breakdown"]["confusion"]["labels"] = [HOSTILE, "B"]
    return write_history(path, [r])


def test_input_never_becomes_markup(ragscore, tmp_path):
    log = hostile_history(tmp_path / "h.jsonl")
    run = ragscore("dashboard", log, "--html", tmp_path / "d.html")
    assert run.status == 0
    page = (tmp_path / "d.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<img" not in page and "\u202e" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count(f'content="{CSP}"') == 1
    outside_code = re.sub(r"`[^`]*`", "", run.out)  # inline code shows markup as text; \< is a plain <
    assert not re.search(r"(?<!\\)<(script|img)", outside_code)


# ---- a real browser --------------------------------------------------------------------------

# Appended to a copy of the page (without its policy, so that it may run): measures the layout and
# the resources the page asked for, and puts the answer in the title, which --dump-dom shows.
PROBE = """<script>
(function () {
  var svgs = Array.prototype.slice.call(document.querySelectorAll("svg.trend"));
  var figures = Array.prototype.slice.call(document.querySelectorAll("figure"));
  document.title = "PROBE " + JSON.stringify({
    width: window.innerWidth,
    scroll: document.documentElement.scrollWidth,
    charts: svgs.length,
    widest: Math.max.apply(null, svgs.map(function (s) { return s.getBoundingClientRect().right; })),
    tops: figures.slice(0, 2).map(function (f) { return Math.round(f.getBoundingClientRect().top); }),
    resources: performance.getEntriesByType("resource").length
  });
})();
</script>
"""


def probe(chromium: str, tmp: Path, page: str, width: int) -> dict[str, Any]:  # noqa: F811
    text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', "", page).replace("</body>", PROBE + "</body>")
    path = tmp / f"probe-{width}.html"
    path.write_text(text, encoding="utf-8")
    dom = parse_dom(browse(chromium, tmp, path, "--dump-dom", f"--window-size={width},900"))
    title = dom.one("head").one("title").content()
    assert title.startswith("PROBE "), title
    return json.loads(title[len("PROBE "):])


@pytest.mark.parametrize("width", [1400, 390])
def test_browser_layout_fits_a_desktop_and_a_phone(chromium, tmp_path, ragscore, width):  # noqa: F811
    ragscore("dashboard", EXAMPLE, "--html", tmp_path / "d.html")
    found = probe(chromium, tmp_path, (tmp_path / "d.html").read_text(encoding="utf-8"), width)
    assert found["charts"] == 17
    assert found["scroll"] <= found["width"]   # nothing wider than the window: no sideways scrolling
    assert found["widest"] <= found["width"]
    top_a, top_b = found["tops"]
    assert (top_a == top_b) == (width == 1400)  # two charts side by side on a desktop, stacked on a phone
    assert found["resources"] == 0  # the page asked for nothing, even without its policy


def test_browser_never_runs_or_builds_markup_from_the_history(chromium, tmp_path, ragscore):  # noqa: F811
    log = hostile_history(tmp_path / "h.jsonl")
    ragscore("dashboard", log, "--html", tmp_path / "d.html")
    dom = parse_dom(browse(chromium, tmp_path, tmp_path / "d.html", "--dump-dom"))
    every = dom.all()
    assert not [n.tag for n in every if n.tag in ("script", "img", "iframe", "object", "embed")]
    assert not [(n.tag, a) for n in every for a in n.attrs if a.startswith("on")]
    assert dom.one("head").one("title").content().startswith("ragscore dashboard <script>")


def test_browser_screenshot_of_five_versions(chromium, tmp_path, ragscore):  # noqa: F811
    ragscore("dashboard", EXAMPLE, "--html", tmp_path / "d.html")
    shot = tmp_path / "shot.png"
    browse(chromium, tmp_path, tmp_path / "d.html", f"--screenshot={shot}", "--window-size=1400,1800")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert int.from_bytes(data[16:20], "big") == 1400
    assert len(data) > 50_000  # charts, not a blank page
    if REGENERATE:
        shutil.copyfile(shot, SCREENSHOT)


def test_a_comparison_against_a_fixed_baseline_marks_no_change(ragscore, tmp_path):
    records = [record(i, random.Random(i)) for i in range(8)]
    for r in records:
        r["tasks"]["release"]["inputs"]["baseline"]["sha256"] = "f" * 64  # always the same release
        r["tasks"]["release"]["changes"]["precision"]["significant"] = True
    log = write_history(tmp_path / "h.jsonl", records)
    ragscore("dashboard", log, "--html", tmp_path / "d.html")
    assert "significant" not in (tmp_path / "d.html").read_text(encoding="utf-8").split("<h2>Tasks</h2>", 1)[1]


def test_negative_values_get_an_axis_below_zero_and_settings_changes_are_drawn(ragscore, tmp_path):
    records = [record(i, random.Random(i)) for i in range(4)]
    for i, r in enumerate(records):
        r["tasks"]["qa"]["metrics"]["chr"] = -3.0 + i
        r["tasks"]["qa"]["signature"] = "a" if i < 2 else "b"
    log = write_history(tmp_path / "h.jsonl", records)
    ragscore("dashboard", log, "--html", tmp_path / "d.html")
    root = parse((tmp_path / "d.html").read_text(encoding="utf-8"))
    chr_chart = root.one("figure", id="chart-0-1").one("svg")
    assert chr_chart.all("text")[1].content() == "-5" and chr_chart.all("line", **{"class": "zero"})
    changed = chr_chart.all("line", **{"class": "settings"})
    assert len(changed) == 1 and "v2: the settings changed" in changed[0].content()


@pytest.mark.parametrize("change", ["status", "warn", "huge", "matrix"])
def test_odd_values_of_a_history_never_crash_the_dashboard(ragscore, tmp_path, change):
    r = record(0, random.Random(0))
    qa = r["tasks"]["qa"]
    if change == "status":
        qa["status"] = ["pass"]
    elif change == "warn":
        qa["gates"]["precision"]["warn"] = "high"
    elif change == "huge":
        qa["metrics"]["precision"] = 10 ** 400
        qa["breakdown"]["labels"]["OK"] = 10 ** 400
    else:
        r["tasks"]["classify"]["breakdown"]["confusion"]["matrix"] = {"a": 1}
    log = write_history(tmp_path / "h.jsonl", [r])
    run = ragscore("dashboard", log, "--html", tmp_path / "d.html")
    if change == "status":
        assert run.status == 2 and 'h.jsonl:1: task "qa": expected an object with a command and a status' in run.err
    else:
        assert run.status == 0, run.err


def test_a_line_that_is_neither_json_nor_a_torn_record_is_an_error(ragscore, tmp_path):
    log = write_history(tmp_path / "h.jsonl", [record(0, random.Random(0))])
    log.write_text("<<<<<<< HEAD\n" + log.read_text())
    run = ragscore("dashboard", log)
    assert run.status == 2 and "h.jsonl:1: not JSON: not a ragscore history line" in run.err
    (tmp_path / "x.html").write_text("old")
    run = ragscore("dashboard", tmp_path / "none.jsonl", "--html", tmp_path / "x.html")
    assert run.status == 2 and "none.jsonl: no such file" in run.err


@pytest.mark.parametrize("width", [1400, 390])
def test_browser_suite_page_fits_a_desktop_and_a_phone(chromium, tmp_path, ragscore, width):  # noqa: F811
    ragscore("run", EXAMPLES / "suite" / "ragscore.toml", "--html", tmp_path / "s.html", "--format", "none")
    page = (tmp_path / "s.html").read_text(encoding="utf-8")
    found = probe(chromium, tmp_path, page, width)
    assert found["scroll"] <= found["width"] and found["resources"] == 0
    dom = parse_dom(browse(chromium, tmp_path, tmp_path / "s.html", "--dump-dom"))
    assert not dom.all("script") and len(dom.all("section", **{"class": "task"})) == 6


def test_gate_lines_break_where_a_version_had_no_gate_and_regressions_are_listed(ragscore, tmp_path):
    records = [record(i, random.Random(i)) for i in range(3)]
    del records[1]["tasks"]["qa"]["gates"]["precision"]
    log = write_history(tmp_path / "h.jsonl", records)
    run = ragscore("dashboard", log, "--html", tmp_path / "d.html")
    root = parse((tmp_path / "d.html").read_text(encoding="utf-8"))
    precision = root.one("figure", id="chart-0-0").one("svg")
    assert not precision.all("polyline", **{"class": "gate"}) and len(precision.all("line", **{"class": "gate"})) == 2
    release = root.one("section", id="task-1")
    assert [cells(r)[:2] for r in release.one("tbody").all("tr")] == [["precision", "worse by <= 0.05"]]
    assert "| v2 | pass |" in run.out


def test_a_compare_marks_a_score_chart_only_where_both_have_the_same_value(ragscore, tmp_path):
    records = [record(i, random.Random(i)) for i in range(5)]
    for r in records:
        r["tasks"]["release"]["metrics"]["precision"] += 0.001  # scored otherwise (another refusal token, say)
    log = write_history(tmp_path / "h.jsonl", records)
    ragscore("dashboard", log, "--html", tmp_path / "d.html")
    root = parse((tmp_path / "d.html").read_text(encoding="utf-8"))
    assert not root.one("figure", id="chart-0-0").all("circle", **{"class": "significant"})
    assert root.one("figure", id="chart-1-0").all("circle", **{"class": "significant"})  # its own chart keeps it
