"""The text-overlap family end to end: who is counted, corpus scores, settings."""

from __future__ import annotations

import pytest

from conftest import checked_report, write
from ragscore.cli import main
from ragscore.metrics.overlap import text_values

GOLD = [
    {"qid": "a", "answerable": True, "gold_answers": ["The cat sat on the mat.", "A cat was on the mat"]},
    {"qid": "b", "answerable": True, "gold_answers": ["Paris"]},
    {"qid": "c", "answerable": True, "gold_answers": ["東京"]},
    {"qid": "d", "answerable": True, "gold_answers": ["refused questions are not counted"]},
    {"qid": "e", "answerable": False, "gold_answers": ["unanswerable ones neither"]},
    {"qid": "f", "answerable": True},  # no reference answers: not counted
    {"qid": "g", "answerable": True, "gold_answers": ["missing traces are not counted"]},
]
CLAIMS = {"a": "the cat sat on a mat", "b": "It is Paris.", "c": "東京", "d": "not in context", "e": "x", "f": "y"}


def run(tmp, *args):
    write(tmp / "g.jsonl", GOLD)
    write(tmp / "t.jsonl", [{"qid": q, "retrieved_ids": [], "answer_json": {"claim": c, "citations": []}}
                            for q, c in CLAIMS.items()])
    assert main(["--gold", str(tmp / "g.jsonl"), "--trace", str(tmp / "t.jsonl"), "--json", str(tmp / "r.json"),
                 "--format", "none", "-q", "--no-fail", "--per-question", "--metrics", "text", *args]) == 0
    return checked_report((tmp / "r.json").read_text())


def test_means_over_answered_answerable_questions_with_references(isolated):
    doc = run(isolated)
    counted = [q["qid"] for q in doc["questions"] if q["metrics"]["token_f1"] is not None]
    assert counted == ["a", "b", "c"]
    expected = [text_values(CLAIMS[q], next(g["gold_answers"] for g in GOLD if g["qid"] == q)) for q in counted]
    for name in ("em", "token_f1", "rouge1_f", "rougeLsum_p", "bleu", "chrf"):
        index = ("em", "token_f1", "rouge1_p", "rouge1_r", "rouge1_f", "rouge2_p", "rouge2_r", "rouge2_f", "rougeL_p",
                 "rougeL_r", "rougeL_f", "rougeLsum_p", "rougeLsum_r", "rougeLsum_f", "bleu", "chrf").index(name)
        assert doc["metrics"][name] == pytest.approx(sum(v[index] for v in expected) / 3, abs=1e-12), name
    assert doc["questions"][0]["metrics"]["corpus_bleu"] is None


def test_corpus_scores_equal_sacrebleu(isolated):
    sacrebleu = pytest.importorskip("sacrebleu")
    doc = run(isolated)
    hyps = [CLAIMS[q] for q in "abc"]
    refs = [GOLD[0]["gold_answers"], GOLD[1]["gold_answers"] + [None], GOLD[2]["gold_answers"] + [None]]
    refs_by_position = [[r[i] for r in refs] for i in range(2)]
    bleu = sacrebleu.corpus_bleu(hyps, refs_by_position)  # some segment has 4+ tokens: effective order is moot
    chrf = sacrebleu.corpus_chrf(hyps, refs_by_position)
    assert doc["metrics"]["corpus_bleu"] == pytest.approx(bleu.score / 100, abs=1e-9)
    assert doc["metrics"]["corpus_chrf"] == pytest.approx(chrf.score / 100, abs=1e-9)


def test_unicode_tokenizer_and_stemmer_settings(isolated):
    reference = run(isolated)["questions"][2]["metrics"]
    write(isolated / "gates.toml", '[scoring]\ntext_tokenizer = "unicode"\nstemmer = true\n')
    doc = run(isolated)
    assert (reference["rouge1_f"], doc["questions"][2]["metrics"]["rouge1_f"]) == (0.0, 1.0)  # 東京 vs 東京
    assert "|text:unicode,stem:yes|" in doc["signature"]


def test_bad_tokenizer_setting(ragscore, isolated):
    write(isolated / "gates.toml", '[scoring]\ntext_tokenizer = "icu"\n')
    write(isolated / "g.jsonl", GOLD)
    bad = ragscore("--gold", "g.jsonl", "--trace", "g.jsonl")
    assert bad.err == "ragscore: error: gates.toml:2: [scoring] expected \"text_tokenizer\" to be one of 'reference', 'unicode', got 'icu'\n"


def test_a_later_refusal_removes_the_earlier_answer_from_the_text_metrics(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": q, "answerable": True, "gold_answers": ["Paris is the capital"]}
                                 for q in ("Q1", "Q2", "Q3")])
    answer = {"claim": "Paris is the capital", "citations": []}
    write(isolated / "t.jsonl", [{"qid": "Q1", "answer_json": answer}, {"qid": "Q2", "answer_json": answer},
                                 {"qid": "Q3", "answer_json": {"claim": "paris", "citations": []}},
                                 {"qid": "Q1", "answer_json": {"claim": "not in context"}}])
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "text", "--per-question", "--no-fail").json()
    assert [q["metrics"]["em"] for q in doc["questions"]] == [None, 1.0, 0.0]
    assert doc["metrics"]["em"] == 0.5
