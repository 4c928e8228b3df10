"""The HTML report: its structure, a golden file, escaping, and a real headless browser.

Regenerate the golden file and the docs' screenshot (docs/html-report.png, in docs/reports.md)
after an intended change with:  REGENERATE_GOLDEN=1 pytest tests/test_html.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA, ROOT, checked_report
from ragscore.cli import main
from ragscore.reports.html import CSS, SCRIPT, csp_hash, esc, html_table, nice_ceiling, render_html

GOLDEN = DATA / "golden" / "html" / "product.html"
SCREENSHOT = ROOT / "docs" / "html-report.png"
REGENERATE = os.environ.get("REGENERATE_GOLDEN") == "1"
VOID = frozenset({"meta", "br", "link", "img", "input", "hr", "col", "area", "base", "embed", "source", "wbr"})

# Each payload tries to run script, add an element or break out of an attribute; any success sets the title.
PWN = "document.title='pwned'"
PAYLOADS = [
    f"<script>{PWN}</script>",
    f'"><img src=x onerror="{PWN}">',
    f"</script><script>{PWN}</script>",
    f"' onmouseover='{PWN}' x='",
    f"<svg onload=\"{PWN}\"></svg>",
    "&amp; first line\nsecond line",
]
HOSTILE = " ".join(PAYLOADS)


@dataclass
class Node:
    """One element of a parsed page."""

    tag: str
    attrs: dict[str, str | None]
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        """Find descendants by tag and exact attribute values (class_ for class)."""
        want = {k.rstrip("_"): v for k, v in attrs.items()}
        found = []
        for child in self.children:
            if (tag is None or child.tag == tag) and all(child.attrs.get(k) == v for k, v in want.items()):
                found.append(child)
            found += child.all(tag, **attrs)
        return found

    def one(self, tag: str, **attrs: str) -> Node:
        """Find the single descendant that matches."""
        found = self.all(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]

    def content(self) -> str:
        """Return all the text inside, as the browser would show it (before white space collapses)."""
        return self.text + "".join(c.content() for c in self.children)


class TreeBuilder(HTMLParser):
    """Build a plain element tree with the standard library's parser (text kept in order per node)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        # A text node after a child element goes to a placeholder child, to keep reading order.
        self.stack[-1].children.append(Node("#text", {}, text=data))


def parse(page: str) -> Node:
    """Parse a page and check that every element is closed."""
    builder = TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.stack == [builder.root], [n.tag for n in builder.stack]
    return builder.root


def cells(row: Node) -> list[str]:
    """Return the text of a table row's cells."""
    return [c.content().strip() for c in row.children if c.tag in ("td", "th")]


@pytest.fixture
def product(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Score the product example as the README does and return its JSON report with questions."""
    monkeypatch.chdir(ROOT)
    out = tmp_path / "report.json"
    main(["--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl", "--json", str(out),
          "--format", "none", "--per-question", "--no-fail", "-q"])
    return checked_report(out.read_text(encoding="utf-8"))


def hostile_doc() -> dict[str, Any]:
    """Build a report document whose every string from input carries markup."""
    question = {"qid": HOSTILE, "question": HOSTILE, "label": "OK", "reason": HOSTILE, "answerable": True,
                "answered": True, "refused": False, "hit": None, "contained": True, "trace_line": 1, "metrics": {}}
    return {
        "answered": 1, "refused": 0, "answerable": 1, "unanswerable": 0, "pass": True, "version": HOSTILE,
        "signature": HOSTILE,
        "inputs": {"gold": {"path": HOSTILE, "sha256": HOSTILE}, "trace": {"path": HOSTILE, "sha256": "0" * 64}},
        "counts": {"total": 2, "traced": 2, "missing": 0, "trace_lines": 2, "unknown_traces": 0, "duplicate_traces": 0},
        "metrics": {HOSTILE: 0.5, "precision": None},
        "gates": {HOSTILE: {"op": ">=", "threshold": 0.5, "warn": None, "value": 0.5, "status": HOSTILE, "source": HOSTILE},
                  "precision": {"op": ">=", "threshold": 0.8, "warn": 0.9, "value": None, "status": "skipped", "source": "cli"}},
        "labels": {"OK": 1, HOSTILE: 1},
        "questions": [question, {**question, "label": HOSTILE}],
    }


def render(doc: dict[str, Any]) -> str:
    """Render a document into one string."""
    return "".join(render_html(doc))


# ---- structure -------------------------------------------------------------------------------


def test_verdict_names_the_failed_gates(product):
    page = parse(render(product))
    assert page.one("head").one("title").content() == "ragscore report: FAIL"
    assert page.one("p", id="verdict").content() == "FAIL"
    detail = page.one("p", id="verdict-detail")
    assert [c.content() for c in detail.all("code")] == ["under_refusal", "missing"]


def test_gate_table_has_one_row_per_gate(product):
    rows = parse(render(product)).one("table", id="gates").one("tbody").all("tr")
    got = [cells(r) for r in rows]
    assert [c[0] for c in got] == list(product["gates"])
    assert [c[3] for c in got] == [g["status"] for g in product["gates"].values()]
    assert got[-1][1] == ">= 0.9 (warn >= 0.95)"


def test_gate_chart_has_one_bar_per_gated_metric(product):
    chart = parse(render(product)).all("svg")[0]
    assert chart.attrs["width"] and chart.attrs["height"]  # renders at its size without CSS
    rows = chart.all("g", class_="gate-row")
    assert [r.one("title").content().split(":")[0] for r in rows] == list(product["gates"])
    colours = {"pass": "#2e7d32", "fail": "#c62828"}
    for row, gate in zip(rows, product["gates"].values(), strict=True):
        assert row.one("rect", class_="bar").attrs["fill"] == colours[gate["status"]]
        assert len(row.all("line", class_="threshold")) == (1 if gate["warn"] is None else 2)
    missing = rows[list(product["gates"]).index("missing")]
    assert "(axis 0–1)" in missing.content()  # a count gets an axis of its own, shown after the value


def test_label_chart_has_one_bar_per_label(product):
    chart = parse(render(product)).all("svg")[1]
    rows = chart.all("g", class_="label-row")
    assert [r.all("text")[0].content() for r in rows] == list(product["labels"])
    assert [r.all("text")[1].content() for r in rows] == [str(n) for n in product["labels"].values()]
    assert all(len(r.all("rect", class_="bar")) == 1 for r in rows)  # every product label occurs


def test_question_table_has_one_row_per_question(product):
    page = parse(render(product))
    rows = page.one("table", id="questions").one("tbody").all("tr")
    assert [cells(r)[0] for r in rows] == [q["qid"] for q in product["questions"]]
    assert [r.attrs["data-label"] for r in rows] == [q["label"] for q in product["questions"]]
    assert all(r.attrs.get("hidden", "absent") == "absent" for r in rows)  # without script every row shows
    assert page.one("p", id="filter").attrs.get("hidden", "absent") is None  # the control needs the script
    options = [o.attrs["value"] for o in page.one("select", id="label-filter").all("option")]
    assert options == ["", *product["labels"]]


def test_question_table_shows_the_claim_and_cited_ids_and_keeps_words_whole(product):
    page = parse(render(product))
    table = page.one("table", id="questions")
    assert cells(table.one("thead").one("tr"))[:6] == ["qid", "question", "label", "reason", "claim", "cited"]
    rows = table.one("tbody").all("tr")
    for row, q in zip(rows, product["questions"], strict=True):
        shown = cells(row)
        claim = q["claim"] if q["claim"] is None or len(q["claim"]) <= 160 else q["claim"][:159].rstrip() + "…"
        assert shown[4] == ("" if claim is None else claim)
        assert shown[5] == ("" if q["cited"] is None else "none" if not q["cited"] else ", ".join(q["cited"]))
        assert [c.attrs.get("class") for c in row.children if c.tag == "td"][:3] == ["word", None, "word"]
    missing = next(q for q in product["questions"] if q["label"] == "MISSING_TRACE")
    assert missing["claim"] is None and missing["cited"] is None
    assert "td.word, td.word code, code.word { white-space: nowrap; }" in render(product)


def test_metric_table_lists_every_metric_with_its_interval(product):
    rows = parse(render(product)).one("table", id="metrics").one("tbody").all("tr")
    assert [cells(r)[0] for r in rows] == list(product["metrics"])
    for row in rows:
        name, _, interval = cells(row)[:3]
        bounds = product["intervals"].get(name)
        expected = "" if name not in product["intervals"] else "n/a" if bounds is None else (
            f"{bounds[0]:.4f}–{bounds[1]:.4f}")
        assert interval == expected, name


def test_page_references_nothing_outside_itself(product):
    text = render(product)
    assert not re.search(r"https?:|//", text)
    page = parse(text)
    every = page.all()
    assert not [n.tag for n in every if {"src", "href", "action", "xlink:href"} & set(n.attrs)]
    assert not [n.tag for n in every if n.tag in ("link", "img", "iframe", "object", "embed", "base")]


def test_csp_allows_exactly_the_inline_style_and_script(product):
    page = parse(render(product))
    csp = page.one("meta", **{"http-equiv": "Content-Security-Policy"}).attrs["content"]
    assert "default-src 'none'" in csp
    style, script = page.one("style").content(), page.one("script").content()
    assert (style, script) == (CSS, SCRIPT)
    assert f"style-src {csp_hash(style)};" in csp and f"script-src {csp_hash(script)};" in csp


def test_without_questions_there_is_no_table_and_no_script(product):
    del product["questions"]
    page = parse(render(product))
    assert not page.all("table", id="questions") and not page.all("script")


def test_null_gate_value_shows_na_without_a_bar():
    page = parse(render(hostile_doc()))
    row = page.all("g", class_="gate-row")[1]
    assert not row.all("rect", class_="bar") and "n/a" in row.content()
    assert len(row.all("line", class_="threshold")) == 2


def test_axis_ends_are_round_numbers():
    assert [nice_ceiling(v) for v in (0, 0.5, 1, 1.5, 3, 7, 10, 11, 240)] == [1, 1, 1, 2, 5, 10, 10, 20, 500]


def test_product_page_matches_golden_file(product):
    text = render(product)
    assert text == render(product), "rendering is deterministic"
    if REGENERATE:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), f"regenerate with REGENERATE_GOLDEN=1 if intended: {GOLDEN}"


# ---- escaping --------------------------------------------------------------------------------


def test_input_cannot_add_elements_attributes_or_script():
    text = render(hostile_doc())
    page = parse(text)
    every = page.all()
    assert not [n.tag for n in every if n.tag in ("img", "iframe", "object", "embed")]
    assert not [(n.tag, a) for n in every for a in n.attrs if a.startswith("on")]
    assert [n.content() for n in page.all("script")] == [SCRIPT]
    assert text.count("<script") == 1 and text.count("</script") == 1
    assert len(page.all("svg")) == 2  # none smuggled in
    assert "&amp;amp;" in text and "&lt;script&gt;" in text and "&quot;&gt;&lt;img" in text


def test_input_comes_back_as_text_in_every_place():
    page = parse(render(hostile_doc()))
    flat = HOSTILE.replace("\n", "")  # a newline becomes <br>
    shown = HOSTILE.replace("\n", "\\n")
    rows = page.one("table", id="questions").one("tbody").all("tr")
    # qids and labels show their newline as an escape; questions and reasons show it as a line break
    assert [cells(r)[:4] for r in rows] == [[shown, flat, "OK", flat], [shown, flat, shown, flat]]
    assert rows[1].attrs["data-label"] == shown  # the attribute holds the label, quotes and all
    assert page.one("code", id="signature").content() == shown
    assert cells(page.one("table", id="gates").one("tbody").all("tr")[0])[0] == shown
    assert [o.attrs["value"] for o in page.one("select").all("option")] == ["", "OK", shown]


def test_text_starting_with_a_hash_is_never_taken_for_a_number():
    assert esc("#1") == "&#35;1" and esc("1#") == "1#"
    table = parse(html_table(["a", "b"], [[esc("#1"), "#" + esc(1)]]))
    tds = table.one("tbody").all("td")
    assert [(td.attrs.get("class"), td.content()) for td in tds] == [(None, "#1"), ("num", "1")]
    doc = hostile_doc()
    doc["gates"]["precision"]["source"] = "#gates.toml"
    doc["labels"] = {"OK": 1, "#1": 1}
    doc["questions"][1] = {**doc["questions"][1], "qid": "#1", "label": "#1"}
    doc["diagnoses"] = [{"severity": "warning", "metric": "precision", "value": 0.5, "threshold": 0.8,
                         "direction": "higher", "because": None, "root_causes": [], "suggested_actions": [],
                         "low_samples": [{"qid": "#1", "question": "#1 first", "claim": "#2 second", "value": 0.0}]}]
    page = parse(render(doc))
    gate_row = page.one("table", id="gates").one("tbody").all("tr")[1]
    assert cells(gate_row)[4] == "#gates.toml" and gate_row.all("td")[4].attrs.get("class") is None
    sample = page.one("div", id="diagnoses").one("tbody").all("tr")[0]
    assert cells(sample) == ["#1", "#1 first", "#2 second", "0.0000"]
    assert [td.attrs.get("class") for td in sample.all("td")] == [None, None, None, "num"]
    rows = page.one("table", id="questions").one("tbody").all("tr")
    assert (cells(rows[1])[0], rows[1].attrs["data-label"]) == ("#1", "#1")
    assert [o.attrs["value"] for o in page.one("select").all("option")] == ["", "OK", "#1"]


# ---- a real browser --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> str:
    """Find Debian's chromium: skipped on a developer machine without it, a failure in CI."""
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, and CI must run the browser test (.ci/run installs it)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def browse(chromium: str, tmp: Path, page: Path, *args: str, fragment: str = "") -> str:
    """Open a page in headless chromium, with no network or profile of its own, and return its stdout."""
    run = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
         f"--user-data-dir={tmp / 'profile'}", *args, page.as_uri() + fragment],
        capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp)},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def test_browser_renders_a_screenshot(chromium, product, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render(product), encoding="utf-8")
    shot = tmp_path / "shot.png"
    browse(chromium, tmp_path, page, f"--screenshot={shot}", "--window-size=1200,1600")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert int.from_bytes(data[16:20], "big") == 1200  # the IHDR width
    assert len(data) > 10_000  # a blank page compresses to a few hundred bytes
    if REGENERATE:
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)


def test_browser_filters_questions_by_the_url_fragment(chromium, product, tmp_path):
    page = tmp_path / "report.html"
    page.write_text(render(product), encoding="utf-8")
    dom = parse_dom(browse(chromium, tmp_path, page, "--dump-dom", fragment="#HALLUCINATION"))
    rows = dom.one("table", id="questions").one("tbody").all("tr")
    visible = [r.attrs["data-label"] for r in rows if "hidden" not in r.attrs]
    assert visible == ["HALLUCINATION"] * product["labels"]["HALLUCINATION"]
    assert len(rows) == len(product["questions"])
    assert "hidden" not in dom.one("p", id="filter").attrs  # the script showed the control
    assert dom.one("span", id="shown").content() == f"2 of {len(rows)} shown"


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "escaping-alone"])
def test_browser_never_runs_or_builds_markup_from_input(chromium, tmp_path, csp):
    text = render(hostile_doc())
    if not csp:  # prove the escaping holds on its own, without the policy's second line of defence
        text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', "", text)
        assert "Content-Security-Policy" not in text
    page = tmp_path / "hostile.html"
    page.write_text(text, encoding="utf-8")
    dom = parse_dom(browse(chromium, tmp_path, page, "--dump-dom", fragment="#OK"))
    assert dom.one("head").one("title").content() == "ragscore report: PASS"
    every = dom.all()
    assert not [n.tag for n in every if n.tag in ("img", "iframe", "object", "embed")]
    assert not [(n.tag, a) for n in every for a in n.attrs if a.startswith("on")]
    assert len(dom.all("script")) == 1 and len(dom.all("svg")) == 2
    rows = dom.one("table", id="questions").one("tbody").all("tr")
    assert ["hidden" in r.attrs for r in rows] == [False, True]  # the script ran and filtered


def test_browser_shows_control_characters_from_input_as_escapes(chromium, tmp_path):
    nasty = "red\x1b[31m \u202eevil\x00end"  # an ANSI colour, a right-to-left override and a NUL
    shown = "red\\x1b[31m \\u202eevil\\x00end"
    doc = hostile_doc()
    doc["questions"] = [{**doc["questions"][0], "qid": nasty, "question": nasty, "label": "CLAIM_MISMATCH",
                         "reason": f'cited "d", but the claim contains none of the gold substrings: {nasty}'}]
    doc["labels"] = {"CLAIM_MISMATCH": 1}
    doc["diagnoses"] = [{"severity": "warning", "metric": "precision", "value": 0.5, "threshold": 0.8,
                         "direction": "higher", "because": None, "root_causes": [nasty], "suggested_actions": [],
                         "low_samples": [{"qid": nasty, "question": nasty, "claim": nasty, "value": 0.0}]}]
    page = tmp_path / "controls.html"
    page.write_text(render(doc), encoding="utf-8")
    dom_text = browse(chromium, tmp_path, page, "--dump-dom")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]", dom_text)
    dom = parse_dom(dom_text)
    (row,) = dom.one("table", id="questions").one("tbody").all("tr")
    assert cells(row)[:4] == [shown, shown, "CLAIM_MISMATCH", f'cited "d", but the claim contains none of the gold substrings: {shown}']
    diagnosis = dom.one("div", id="diagnoses")
    assert cells(diagnosis.one("tbody").one("tr")) == [shown, shown, shown, "0.0000"]
    assert diagnosis.one("li").content() == shown


def parse_dom(dom: str) -> Node:
    """Parse chromium's serialised DOM (HTML syntax: void elements unclosed, optional tags added)."""
    builder = TreeBuilder()
    builder.feed(dom)
    builder.close()
    return builder.root


def test_html_rows_lists_the_first_questions_of_each_label_and_says_what_it_left_out(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    page = tmp_path / "r.html"
    main(["--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl", "--html", str(page),
          "--html-rows", "2", "--format", "none", "-q", "--no-fail"])
    root = parse(page.read_text(encoding="utf-8"))
    rows = root.one("table", id="questions").one("tbody").all("tr")
    report = tmp_path / "r.json"
    main(["--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl", "--json", str(report),
          "--per-question", "--format", "none", "-q", "--no-fail"])
    first: dict[str, list[str]] = {}
    for q in json.loads(report.read_text(encoding="utf-8"))["questions"]:  # gold order
        first.setdefault(q["label"], [])
        if len(first[q["label"]]) < 2:
            first[q["label"]].append(q["qid"])
    assert [cells(r)[0] for r in rows] == [qid for q in json.loads(report.read_text(encoding="utf-8"))["questions"]
                                           for qid in [q["qid"]] if qid in first[q["label"]]]
    note = root.one("p", id="rows-cut").content()
    assert "first 2 questions of each label" in note and "OK 23" in note and "REFUSAL_OK 4" in note
    full = tmp_path / "full.html"
    main(["--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl", "--html", str(full),
          "--format", "none", "-q", "--no-fail"])
    assert 'id="rows-cut"' not in full.read_text(encoding="utf-8")  # 1,000 per label by default: all 40 listed
