"""compare with --metrics grounding (issue 34): each rate of the runs' counts is tested paired by question,
by a paired bootstrap that resamples the questions and takes the rate of the resample's sums."""

from __future__ import annotations

import json

from conftest import write
from ragscore.metrics.stats import paired_bootstrap

PASSAGES = ['The policy says "refunds are accepted within 30 days" of purchase.', "Revenue grew 87.3% in 2021."]
GOOD = 'Per policy, "refunds are accepted within 30 days"; revenue grew 87% in 2021.'
BAD = 'Per policy, "refunds are accepted within 60 days"; revenue grew 85% in 2021.'


def _run(folder, name, claims):
    write(folder / name, [{"qid": f"q{i}", "retrieved_ids": ["d1", "d2"], "retrieved_chunks": PASSAGES,
                           "answer_json": {"claim": claim, "citations": []}} for i, claim in enumerate(claims)])


def test_a_rate_of_counts_is_tested_by_resampling_questions(ragscore, isolated):
    claims_b = [GOOD] * 30
    claims_c = [GOOD] * 20 + [BAD] * 10
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "question": "What is the policy?", "answerable": True}
                                 for i in range(30)])
    _run(isolated, "b.jsonl", claims_b)
    _run(isolated, "c.jsonl", claims_c)
    doc = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "c.jsonl",
                              "--metrics", "grounding", "--no-fail").out)
    row = doc["metrics"]["number_unsupported_rate"]
    # Numbers per answer: 30, 87% (or 85%), 2021; a bad answer's 60 and 85% are unsupported: 20 of 90.
    assert (row["baseline"], row["candidate"]) == (0.0, 20 / 90)
    # The same resampling by hand: each question's (unsupported, numbers) in both runs, the same seed.
    base = [(0, 3)] * 30
    cand = [(0, 3)] * 20 + [(2, 3)] * 10

    def rate(pairs):
        total = sum(t for _, t in pairs)
        return sum(c for c, _ in pairs) / total if total else None

    interval, p = paired_bootstrap(base, cand, rate, 0.95, 1000, "0:number_unsupported_rate")
    assert row["delta_interval"] == list(interval) and row["p_value"] == p < 0.05 and row["method"] == "bootstrap"
    # Identical runs: no change, p = 1.
    same = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "b.jsonl",
                               "--metrics", "grounding", "--no-fail").out)["metrics"]["quote_unverified_rate"]
    assert (same["delta"], same["p_value"]) == (0.0, 1.0)
