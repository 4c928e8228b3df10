"""Slices (`--by`): every metric per value of a gold field, and gates per slice."""

from __future__ import annotations

from conftest import EXAMPLES, write

PRODUCT = ("--gold", EXAMPLES / "product" / "gold.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl", "--no-fail")

GOLD = [
    {"qid": "a", "answerable": True, "gold_citations": ["d"], "gold_claim_substr": ["right answer"], "tags": {"lang": "en"}},
    {"qid": "b", "answerable": True, "gold_citations": ["d"], "gold_claim_substr": ["right answer"], "tags": {"lang": "de"}},
    {"qid": "c", "answerable": False, "tags": {"lang": ["en", "de"]}},
    {"qid": "d", "answerable": True, "gold_citations": ["d"], "gold_claim_substr": ["right answer"]},
]
TRACES = [
    {"qid": "a", "retrieved_ids": ["d"], "answer_json": {"claim": "the right answer", "citations": ["d"]}},
    {"qid": "b", "retrieved_ids": ["d"], "answer_json": {"claim": "a wrong one", "citations": ["d"]}},
    {"qid": "c", "retrieved_ids": [], "answer_json": {"claim": "made up", "citations": []}},
    {"qid": "d", "retrieved_ids": ["d"], "answer_json": {"claim": "the right answer", "citations": ["d"]}},
]


def test_slices_by_a_dotted_path_with_lists_and_absent_values(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", TRACES)
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "tags.lang", "--no-fail").json()
    slices = doc["slices"]["tags.lang"]
    assert list(slices) == ["de", "en", "(none)"]  # sorted, with the questions lacking the field last
    assert {label: s["n"] for label, s in slices.items()} == {"de": 2, "en": 2, "(none)": 1}
    # "en": a (right) and c (an unanswerable question answered); "de": b (claim mismatch) and c.
    assert slices["en"]["metrics"]["precision"] == 0.5 and slices["de"]["metrics"]["precision"] == 0.0
    assert slices["en"]["metrics"]["under_refusal"] == 1.0  # "c" is in both "en" and "de"
    assert slices["en"]["intervals"]["precision"] is not None and slices["en"]["gates"] == {}


def test_slices_equal_the_run_restricted_to_their_questions(ragscore, isolated):
    doc = ragscore(*PRODUCT, "--by", "category", "--metrics", "retrieval").json()
    backup = doc["slices"]["category"]["backup"]
    gold = [line for line in (EXAMPLES / "product" / "gold.jsonl").read_text().splitlines() if '"backup"' in line]
    write(isolated / "g.jsonl", "\n".join(gold) + "\n")
    alone = ragscore("--gold", "g.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl", "--metrics", "retrieval",
                     "--no-fail").json()
    assert backup["n"] == len(gold)
    for name in ("precision", "chr", "over_refusal", "mrr", "ndcg@10", "missing"):
        assert backup["metrics"][name] == alone["metrics"][name], name


def test_slice_gates_fail_the_run_and_small_slices_are_skipped(ragscore, isolated):
    write(isolated / "gates.toml", "[slice_gates]\nmin_n = 3\nprecision = 0.9\n")
    run = ragscore(*PRODUCT[:-1], "--by", "tags.lang", "--gates", "under=off,missing=off")
    doc = run.json()
    assert {label: s["gates"]["precision"]["status"] for label, s in doc["slices"]["tags.lang"].items()} == {
        "de": "skipped", "en": "fail", "fr": "skipped"}
    assert run.status == 1 and doc["pass"] is False
    assert "ragscore: slice tags.lang=de has 2 questions (fewer than min_n 3): its gates are skipped\n" in run.err
    assert "ragscore: FAIL    precision[tags.lang=en] = 0.7931 (gate >= 0.9)\n" in run.err


def test_markdown_has_a_table_per_slice_field(ragscore, isolated):
    md = ragscore(*PRODUCT, "--by", "tags.lang", "--format", "markdown").out
    assert "## Slices by tags.lang\n\n| value | n | `precision` | `chr` | `under_refusal` | `over_refusal` |\n" in md
    assert "| en | 36 | 0.7931 |" in md


def test_slice_gate_and_by_errors(ragscore, isolated):
    write(isolated / "gates.toml", "[slice_gates]\nunknown_traces = 0\n")
    run = ragscore(*PRODUCT, "--by", "tags.lang")
    assert run.err == ('ragscore: error: gates.toml:2: [slice_gates] "unknown_traces" counts trace lines, which belong '
                       "to no slice: gate it in [gates]\n")
    (isolated / "gates.toml").unlink()
    run = ragscore(*PRODUCT, "--by", "question")
    assert run.status == 2 and run.err.startswith("ragscore: error: --by question: slices come from fields outside")


def test_the_verdict_line_counts_failed_slice_gates(ragscore, isolated):
    write(isolated / "gates.toml", '[gates]\nprecision = "off"\nunder_refusal = "off"\nmissing = "off"\n'
                                   "[slice_gates]\nmin_n = 3\nprecision = 0.9\n")
    run = ragscore(*PRODUCT[:-1], "--by", "tags.lang")
    assert run.status == 1
    assert run.err.splitlines()[-1] == "ragscore: FAIL: 0 of 2 gates failed, and 1 slice gate: precision[tags.lang=en]"


def _two_per_slice(isolated, n: int) -> None:
    gold = [{"qid": f"q{i}", "answerable": True, "gold_citations": ["d"], "category": f"c{i // 2}"} for i in range(n)]
    traces = [{"qid": f"q{i}", "retrieved_ids": ["d"], "answer_json": {"claim": "x", "citations": ["d"]},
               "scores": {"judge": (i * 7 % 10) / 10}} for i in range(n)]
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", traces)


def test_the_slices_of_a_field_share_the_resampling_budget(ragscore, isolated):
    from intervals_reference import normal, poisson_bootstrap
    from ragscore.metrics.stats import RESAMPLING_BUDGET

    n = 10
    _two_per_slice(isolated, n)
    values = {f"c{k}": [(2 * k * 7 % 10) / 10, ((2 * k + 1) * 7 % 10) / 10] for k in range(n // 2)}
    qids = {f"c{k}": [f"q{2 * k}", f"q{2 * k + 1}"] for k in range(n // 2)}
    # 10 questions x 200,000 resamples: all the slices together draw two million values, within
    # the budget: each slice is bootstrapped, as it always was.
    within = RESAMPLING_BUDGET // n
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "category", "--bootstrap", within, "--no-fail").json()
    for label, s in doc["slices"]["category"].items():
        assert s["intervals"]["judge"] == list(poisson_bootstrap(values[label], qids[label], 0.95, within, "0")), label
    # One more resample each and they would draw more: every slice gets the normal interval
    # (before, each 2-question slice resampled 200,001 times, for every mean metric).
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "category", "--bootstrap", within + 1, "--no-fail").json()
    for label, s in doc["slices"]["category"].items():
        assert s["intervals"]["judge"] == list(normal(values[label], 0.95)), label
    assert doc["interval_methods"]["judge"] == "normal"  # the run itself: 10 x 200,001 draws, as for its slices


def test_a_field_with_more_values_than_the_slice_limit_is_refused(ragscore, isolated, monkeypatch):
    monkeypatch.setattr("ragscore.slices.MAX_SLICES", 4)
    _two_per_slice(isolated, 10)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "category", "--no-fail")
    assert run.status == 2
    assert run.err == ('ragscore: error: --by "category": 5 distinct values, more than the 4 slices a field may have '
                       "(slice by a field that groups questions, such as a language or a topic)\n")
    assert ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "answerable", "--no-fail").status == 0
    # The limit holds for all the fields of a run together: 2 + 3 slices are more than 4.
    _two_per_slice(isolated, 8)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "answerable", "--by", "category", "--no-fail")
    assert (run.status, run.err) == (2, 'ragscore: error: --by "category": 4 distinct values, which with the 1 slice '
                                        "of the fields before it make more than the 4 slices a run may have\n")


def test_thousands_of_small_or_failing_slices_are_summarised_in_a_few_lines(ragscore, isolated):
    gold = [{"qid": f"q{i}", "answerable": True, "gold_citations": ["d"], "topic": f"t{i:03}"} for i in range(300)]
    traces = [{"qid": f"q{i}", "retrieved_ids": ["d"], "answer_json": {"claim": "c", "citations": ["x"]}}
              for i in range(300)]
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", traces)
    write(isolated / "gates.toml", "[slice_gates]\nmin_n = 2\nprecision = 0.5\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "topic", "--format", "none", "--no-fail")
    notes = [line for line in run.err.splitlines() if "slice" in line or "[topic=" in line]
    assert notes == ["ragscore: 300 slices of topic have fewer than min_n 2 questions: their gates are skipped "
                     "(e.g. t000 (1), t001 (1), t002 (1), t003 (1), t004 (1))"]
    write(isolated / "gates.toml", "[slice_gates]\nmin_n = 1\nprecision = 0.5\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "topic", "--format", "none", "--no-fail")
    fails = [line for line in run.err.splitlines() if line.startswith("ragscore: FAIL    ") and "topic" in line]
    assert fails[0] == "ragscore: FAIL    precision[topic=t000] = 0.0000 (gate >= 0.5)"
    assert fails[5:] == ["ragscore: FAIL    295 more slice gates of topic failed (every one is in the reports)"]
    assert run.err.splitlines()[-1] == (
        "ragscore: FAIL: 2 of 5 gates failed, and 300 slice gates: precision, chr, precision[topic=t000], "
        "precision[topic=t001], precision[topic=t002], precision[topic=t003], precision[topic=t004], 295 more")
