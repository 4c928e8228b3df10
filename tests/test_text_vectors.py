"""Every value of tests/data/text_vectors.json (outputs of SQuAD's script, rouge-score, sacrebleu and NLTK) to 1e-9."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragscore.metrics.overlap import TextStats, corpus_values, text_metric_names, text_scores, text_stats, text_values
from ragscore.metrics.overlap.bleu import (
    BleuScore,
    bleu_from_statistics,
    corpus_bleu,
    corpus_chrf,
    sentence_bleu,
    sentence_chrf,
    tokenize_13a,
)
from ragscore.metrics.overlap.porter import stem
from ragscore.metrics.overlap.rouge import ROUGE_TYPES, rouge_multi, rouge_scores, rouge_tokens
from ragscore.metrics.overlap.squad import exact_match, normalize_answer, squad_scores, token_f1

VECTORS: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "text_vectors.json").read_text("utf-8"))
CASES: list[dict[str, Any]] = VECTORS["cases"]
CORPUS: dict[str, Any] = VECTORS["corpus"]
TOL = 1e-9

# sacrebleu.sentence_bleu keyword variants of the vectors, as keywords of ours.
BLEU_VARIANTS: dict[str, dict[str, Any]] = {
    "sentence_default": {},
    "sentence_lowercase": {"lowercase": True},
    "sentence_no_effective_order": {"effective_order": False},
    "sentence_floor": {"smooth_method": "floor"},
    "sentence_add_k": {"smooth_method": "add-k"},
    "sentence_none": {"smooth_method": "none"},
}
# sacrebleu.corpus_bleu variants (its default is use_effective_order=False).
CORPUS_BLEU_VARIANTS: dict[str, dict[str, Any]] = {
    "corpus_bleu_default": {"effective_order": False},
    "corpus_bleu_effective_order": {"effective_order": True},
    "corpus_bleu_lowercase": {"effective_order": False, "lowercase": True},
    "corpus_bleu_floor": {"effective_order": False, "smooth_method": "floor"},
    "corpus_bleu_none": {"effective_order": False, "smooth_method": "none"},
}


def close(actual: float, expected: float) -> bool:
    """Tell whether two numbers agree to the vectors' tolerance."""
    return abs(actual - expected) <= TOL


def assert_bleu(actual: BleuScore, expected: dict[str, Any]) -> None:
    """Compare our 0-1 BLEU with sacrebleu's 0-100 record, every field."""
    assert close(actual.score * 100, expected["score"])
    assert close(actual.score, expected["score"] / 100)
    assert list(actual.counts) == expected["counts"]
    assert list(actual.totals) == expected["totals"]
    assert all(close(a * 100, e) for a, e in zip(actual.precisions, expected["precisions"], strict=True))
    assert close(actual.bp, expected["bp"])
    assert (actual.sys_len, actual.ref_len) == (expected["sys_len"], expected["ref_len"])


def case_id(case: dict[str, Any]) -> str:
    """Name a parametrised case by its id."""
    return str(case["id"])


def test_vector_file_shape() -> None:
    assert len(CASES) == 47
    assert CORPUS["hypotheses_order"] == [c["id"] for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_squad(case: dict[str, Any]) -> None:
    pred, refs, squad = case["prediction"], case["references"], case["squad"]
    assert normalize_answer(pred) == squad["normalized_prediction"]
    assert [normalize_answer(r) for r in refs] == squad["normalized_references"]
    for rules in ("v2", "v1"):
        expected = squad[rules]
        em, f1 = squad_scores(pred, refs, rules=rules)
        assert em == expected["em"]
        assert close(f1, expected["f1"])
        assert [exact_match(pred, r) for r in refs] == expected["per_ref_em"]
        per_ref = [token_f1(pred, r, rules=rules) for r in refs]
        assert all(close(a, e) for a, e in zip(per_ref, expected["per_ref_f1"], strict=True))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rouge_tokens(case: dict[str, Any]) -> None:
    pred, refs, rouge = case["prediction"], case["references"], case["rouge"]
    assert rouge_tokens(pred) == rouge["tokens_prediction"]
    assert [rouge_tokens(r) for r in refs] == rouge["tokens_references"]
    assert rouge_tokens(pred, stemmer=True) == rouge["tokens_prediction_stemmed"]
    assert [rouge_tokens(r, stemmer=True) for r in refs] == rouge["tokens_references_stemmed"]


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("mode", ["no_stem", "stem"])
def test_rouge_scores(case: dict[str, Any], mode: str) -> None:
    pred, refs, expected = case["prediction"], case["references"], case["rouge"][mode]
    stemmer = mode == "stem"
    for ref, per_ref in zip(refs, expected["per_ref"], strict=True):
        scores = rouge_scores(ref, pred, stemmer=stemmer)
        for kind in ROUGE_TYPES:
            assert close(scores[kind].precision, per_ref[kind]["precision"]), kind
            assert close(scores[kind].recall, per_ref[kind]["recall"]), kind
            assert close(scores[kind].fmeasure, per_ref[kind]["fmeasure"]), kind
    multi = rouge_multi(refs, pred, stemmer=stemmer)
    for kind in ROUGE_TYPES:
        assert close(multi[kind].precision, expected["multi"][kind]["precision"]), kind
        assert close(multi[kind].recall, expected["multi"][kind]["recall"]), kind
        assert close(multi[kind].fmeasure, expected["multi"][kind]["fmeasure"]), kind


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bleu(case: dict[str, Any]) -> None:
    pred, refs, bleu = case["prediction"], case["references"], case["bleu"]
    assert tokenize_13a(pred.rstrip()) == bleu["tok13a_prediction"]
    assert [tokenize_13a(r.rstrip()) for r in refs] == bleu["tok13a_references"]
    for variant, keywords in BLEU_VARIANTS.items():
        assert_bleu(sentence_bleu(pred, refs, **keywords), bleu[variant])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_chrf(case: dict[str, Any]) -> None:
    pred, refs, chrf = case["prediction"], case["references"], case["chrf"]
    assert close(sentence_chrf(pred, refs) * 100, chrf["sentence_default"])
    assert close(sentence_chrf(pred, refs, eps_smoothing=True) * 100, chrf["sentence_eps_smoothing"])


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("mode", ["no_stem", "stem"])
def test_text_values_entry_point(case: dict[str, Any], mode: str) -> None:
    pred, refs = case["prediction"], case["references"]
    multi = case["rouge"][mode]["multi"]
    expected = [float(case["squad"]["v2"]["em"]), case["squad"]["v2"]["f1"]]
    for kind in ROUGE_TYPES:
        expected += [multi[kind]["precision"], multi[kind]["recall"], multi[kind]["fmeasure"]]
    expected += [case["bleu"]["sentence_default"]["score"] / 100, case["chrf"]["sentence_default"] / 100]
    values = text_values(pred, refs, stemmer=mode == "stem")
    assert len(values) == len(text_metric_names()) == len(expected)
    for name, actual, wanted in zip(text_metric_names(), values, expected, strict=True):
        assert isinstance(actual, float), name
        assert 0.0 <= actual <= 1.0, name
        assert close(actual, wanted), name
    scored, stats = text_scores(pred, refs, stemmer=mode == "stem")
    assert scored == values
    assert stats == text_stats(pred, refs)


def streams_to_lists(streams: list[list[str | None]], count: int) -> list[list[str]]:
    """Turn sacrebleu's reference streams into one reference list per hypothesis."""
    return [[s[i] for s in streams if s[i] is not None] for i in range(count)]  # type: ignore[misc]


def test_corpus_bleu_and_chrf() -> None:
    hyps = [c["prediction"] for c in CASES]
    refs = [c["references"] for c in CASES]
    for variant, keywords in CORPUS_BLEU_VARIANTS.items():
        assert_bleu(corpus_bleu(hyps, refs, **keywords), CORPUS[variant])
    assert close(corpus_chrf(hyps, refs) * 100, CORPUS["corpus_chrf_default"])
    # The same through the entry point's statistics, summed as the integrator will.
    total = sum((text_stats(h, r) for h, r in zip(hyps, refs, strict=True)), TextStats())
    assert total == sum(text_stats(h, r) for h, r in zip(hyps, refs, strict=True))
    bleu, chrf = corpus_values(total)
    assert close(bleu * 100, CORPUS["corpus_bleu_effective_order"]["score"])
    assert close(chrf * 100, CORPUS["corpus_chrf_default"])
    assert close(corpus_values(total, effective_order=False)[0] * 100, CORPUS["corpus_bleu_default"]["score"])
    assert_bleu(bleu_from_statistics(total.bleu, effective_order=False), CORPUS["corpus_bleu_default"])


def test_short_answers_corpus_effective_order() -> None:
    short = CORPUS["short_answers_corpus"]
    hyps = short["hypotheses"]
    refs = streams_to_lists(short["reference_streams"], len(hyps))
    assert_bleu(corpus_bleu(hyps, refs, effective_order=False), short["corpus_bleu_default"])
    assert_bleu(corpus_bleu(hyps, refs, effective_order=True), short["corpus_bleu_effective_order"])
    total = sum(text_stats(h, r) for h, r in zip(hyps, refs, strict=True))
    assert isinstance(total, TextStats)
    assert close(corpus_values(total)[0] * 100, short["corpus_bleu_effective_order"]["score"])
    assert corpus_values(total, effective_order=False)[0] == 0.0


def test_corpus_means() -> None:
    count = len(CASES)
    for rules in ("v2", "v1"):
        scores = [squad_scores(c["prediction"], c["references"], rules=rules) for c in CASES]
        assert close(100 * sum(em for em, _ in scores) / count, CORPUS[f"squad_{rules}_mean_em_x100"])
        assert close(100 * sum(f1 for _, f1 in scores) / count, CORPUS[f"squad_{rules}_mean_f1_x100"])
    multis = [rouge_multi(c["references"], c["prediction"]) for c in CASES]
    for kind in ROUGE_TYPES:
        mean = sum(m[kind].fmeasure for m in multis) / count
        assert close(mean, CORPUS["rouge_no_stem_mean_multi_fmeasure"][kind]), kind
    bleu = sum(sentence_bleu(c["prediction"], c["references"]).score for c in CASES) / count
    assert close(bleu * 100, CORPUS["mean_sentence_bleu_default"])


@pytest.mark.parametrize(("word", "expected"), sorted(VECTORS["porter_stems"].items()))
def test_porter_stems(word: str, expected: str) -> None:
    assert stem(word) == expected


@pytest.mark.parametrize("vector", VECTORS["tokenizer_vectors"], ids=lambda v: repr(v["text"]))
def test_tokenizer_vectors(vector: dict[str, Any]) -> None:
    text = vector["text"]
    assert normalize_answer(text) == vector["squad_normalized"]
    assert rouge_tokens(text) == vector["rouge_tokens"]
    assert rouge_tokens(text, stemmer=True) == vector["rouge_tokens_stemmed"]
    assert tokenize_13a(text.rstrip()) == vector["tok13a"]
    assert tokenize_13a(text.lower().rstrip()) == vector["tok13a_lowercased"]
