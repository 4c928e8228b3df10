"""Report formats: escaping of input in Markdown, JSON hygiene, tallies that add up."""

from __future__ import annotations

import json
import math

from conftest import write
from ragscore.evaluate import evaluate
from ragscore.metrics.answer import CITES, AnswerTally, claim_bit, pack
from ragscore.metrics.moments import summarise
from ragscore.reports.markdown import cell
from ragscore.results import Wants
from ragscore.settings import Settings


def test_markdown_cells_escape_pipes_newlines_and_markup():
    assert cell("a|b") == "a\\|b"
    assert cell("line1\nline2\r\nline3") == "line1<br>line2<br>line3"
    assert cell("<script>alert(1)</script>") == "\\<script\\>alert(1)\\</script\\>"
    assert cell("[x](http://evil) *b* `c` &amp;") == "\\[x\\](http://evil) \\*b\\* \\`c\\` &amp;amp;"
    assert (cell(None), cell(True), cell(0.5)) == ("n/a", "yes", "0.5000")


def test_hostile_qids_cannot_break_the_markdown_table(ragscore, isolated):
    qid = "Q|1\n## injected <img src=x onerror=alert(1)>"
    write(isolated / "g.jsonl", [{"qid": qid, "answerable": True, "gold_citations": ["d|1"]}])
    write(isolated / "t.jsonl", [{"qid": qid, "retrieved_ids": ["d|1"], "answer_json": {"claim": "x", "citations": ["d|2"]}}])
    md = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--format", "markdown", "--no-fail").out
    rows = [line for line in md.splitlines() if line.startswith("| Q")]
    escaped = "| Q\\|1<br>## injected \\<img src=x onerror=alert(1)\\> | "
    assert rows[-1] == escaped + 'yes | no | no | `NO_CITATION_HIT` | cited "d\\|2", which is not among the retrieved ids |'
    assert len(rows) > 1 and all(row.startswith(escaped) for row in rows)  # the diagnoses' worst questions too
    assert "\n## injected" not in md


def test_json_report_is_plain_json_with_nulls_for_undefined(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "a", "answerable": True}])
    write(isolated / "t.jsonl", [{"qid": "a", "refused": True}])
    out = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail").out
    doc = json.loads(out, parse_constant=lambda name: math.nan)
    assert doc["precision"] is None and doc["under_refusal"] is None and doc["metrics"]["citation_precision"] is None
    assert doc["gates"]["precision"]["status"] == "skipped"
    assert "NaN" not in out and "Infinity" not in out


def test_tallies_of_parts_add_up_to_the_tally_of_the_whole(tmp_path):
    write(tmp_path / "g.jsonl", [{"qid": f"q{i}", "answerable": i % 3 > 0, "gold_citations": [f"d{i % 4}"],
                                  "gold_claim_substr": ["needle"]} for i in range(30)])
    write(tmp_path / "t.jsonl", [{"qid": f"q{i}", "retrieved_ids": [f"d{j}" for j in range(i % 5)],
                                  "answer_json": {"claim": "a needle" if i % 2 else "hay", "citations": [f"d{i % 4}", "d1"][: i % 3]}}
                                 for i in range(28)])
    settings = Settings()
    ev = evaluate(str(tmp_path / "g.jsonl"), str(tmp_path / "t.jsonl"), settings, Wants(rows=True))
    halves = [AnswerTally(), AnswerTally()]
    for i, row in enumerate(ev.rows):
        cites = CITES if row.outcome.answered and row.cited is not None else 0  # run_bits: a citations field
        halves[i % 2].add_packed(pack(row.outcome, row.answerable) | cites | claim_bit(row.outcome, row.answerable,
                                                                                        settings))
    for i, half in enumerate(halves):
        rows = [row for row in list(ev.rows)[i::2] if row.outcome.cite_share is not None]
        half.shares = summarise([[row.outcome.cite_share for row in rows]], (True,), [row.qid for row in rows], "0",
                                1000)[0]
    total = halves[0] + halves[1]
    assert total.shares == ev.tally.shares
    assert total.metrics(settings) == ev.tally.metrics(settings)
    assert (total.answered, total.refused, total.missing, total.labels, total.citing, total.claim_ok) == (
        ev.tally.answered, ev.tally.refused, ev.tally.missing, ev.tally.labels, ev.tally.citing, ev.tally.claim_ok)
    assert ev.tally.citing == 28 and not ev.tally.cites_nothing  # every trace writes citations, [] for i % 3 == 0


def test_per_question_values_average_to_the_reported_metrics(ragscore, monkeypatch):
    from conftest import EXAMPLES

    monkeypatch.chdir(EXAMPLES.parent)
    for gold, trace in [("examples/alt-shape/gold.json", "examples/alt-shape/trace.jsonl"),
                        ("examples/product/gold.jsonl", "examples/product/trace.jsonl")]:
        for extra in ([], ["--no-require-claim", "--no-scope-citations"]):
            doc = ragscore("--gold", gold, "--trace", trace, "--per-question", "--no-fail", *extra).json()
            for name, value in doc["metrics"].items():
                if name in ("missing", "unknown_traces", "duplicate_traces"):
                    continue
                per_question = [q["metrics"][name] for q in doc["questions"] if q["metrics"][name] is not None]
                expected = math.fsum(per_question) / len(per_question) if per_question else None
                assert value == expected, (gold, extra, name)


def test_markdown_verdict_counts_warned_and_skipped_gates(ragscore, isolated):
    from conftest import EXAMPLES

    write(isolated / "gates.toml", '[gates]\n"precision@5" = { min = 0.1, warn = 0.5 }\n')
    md = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl", "--format", "markdown",
                  "--gates", "em>=0.5").out
    # em is undefined (no reference answers): skipped; precision@5 (one relevant id in five) is below its warning bound.
    assert "**PASS**: no gate failed (5 passed, 1 warned, 1 skipped).\n" in md


def test_text_summary_colours_statuses_only_when_asked(ragscore, isolated):
    import json

    from conftest import EXAMPLES
    from ragscore.reports.text import render_text

    doc = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl", "--gates", "chr>1").json()
    plain, coloured = "".join(render_text(doc)), "".join(render_text(doc, colour=True))
    assert "\x1b[" not in plain and "\x1b[1;31mFAIL\x1b[0m" in coloured and "\x1b[31mfail\x1b[0m" in coloured
    assert json.loads(json.dumps(doc)) == doc


def test_stderr_notes_show_control_characters_in_qids_as_escapes(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "a\x1b[2J", "answerable": True}, {"qid": "b", "answerable": True}])
    write(isolated / "t.jsonl", [{"qid": "b", "refused": True}, {"qid": "x\x1b]0;title\x07", "refused": True},
                                 {"qid": "b", "refused": True}])
    err = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none").err
    assert "\x1b" not in err and "\x07" not in err
    notes = err.splitlines()
    assert "ragscore: 1 gold question has no trace (MISSING_TRACE, scored as refusals): a\\x1b[2J" in notes
    assert "ragscore: 1 trace line matches no gold question (ignored): x\\x1b]0;title\\x07" in notes
