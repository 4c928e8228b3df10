"""Repeated samples (issue 18, part 1): pass@k and pass^k against their definitions, every metric
as a mean over each question's samples (restated from single-sample runs), intervals, slices,
compare, --jobs, the min_pass_rate gate, and what a run without samples keeps."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from itertools import combinations
from statistics import fmean

import pytest

from conftest import write
from ragscore.metrics.repeats import pass_at_k, pass_hat_k

PASSING = ("OK", "REFUSAL_OK")


@pytest.mark.parametrize("seed", range(5))
def test_pass_at_k_and_pass_hat_k_equal_their_closed_forms(seed):
    rng = random.Random(seed)
    for _ in range(300):
        n = rng.randrange(1, 60)
        c, k = rng.randrange(0, n + 1), rng.randrange(1, n + 1)
        at = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        assert pass_at_k(n, c, k) == float(at)  # correctly rounded
        assert pass_hat_k(n, c, k) == float(Fraction(math.comb(c, k), math.comb(n, k)))


def test_pass_at_k_and_pass_hat_k_equal_an_enumeration_of_k_subsets():
    for n in range(1, 9):
        for c in range(n + 1):
            samples = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(combinations(samples, k))
                any_right = Fraction(sum(any(s) for s in subsets), len(subsets))
                all_right = Fraction(sum(all(s) for s in subsets), len(subsets))
                assert pass_at_k(n, c, k) == float(any_right)
                assert pass_hat_k(n, c, k) == float(all_right)


def _trace(qid, kind, rng):
    """One sample of a question: right, refused, citing a non-gold id, or missing the claim's substring."""
    cited = {"right": ["d1"], "refused": [], "wrong_cite": ["d2"], "no_claim": ["d1"]}[kind]
    claim = {"right": "the answer is alpha", "refused": "not in context", "wrong_cite": "the answer is alpha",
             "no_claim": "something else"}[kind]
    retrieved = rng.sample(["d1", "d2", "d3", "d4"], 4)
    return {"qid": qid, "retrieved_ids": retrieved, "answer_json": {"claim": claim, "citations": cited},
            "latency_ms": rng.randrange(100, 900), "scores": {"judge": rng.random()}}


def _data(folder, seed=0, questions=40):
    """Gold and traces with 0 to 5 samples per question, interleaved; and each question's samples."""
    rng = random.Random(seed)
    gold, per = [], {}
    for i in range(questions):
        qid = f"q{i:03d}"
        answerable = i % 5 != 0
        gold.append({"qid": qid, "answerable": answerable, "gold_citations": ["d1"] if answerable else [],
                     "gold_claim_substr": ["alpha"] if answerable else [], "topic": "even" if i % 2 else "odd",
                     "gold_answers": ["the answer is alpha", "alpha it is"] if answerable else [],
                     "gold_relevance": {"d1": 2, "d3": 1} if answerable else None})
        n = rng.choice([0, 1, 1, 2, 3, 4, 5, 5])
        per[qid] = [_trace(qid, rng.choice(["right", "right", "refused", "wrong_cite", "no_claim"]), rng)
                    for _ in range(n)]
    for g in gold:
        if g["gold_relevance"] is None:
            del g["gold_relevance"]
    pending = [t for samples in per.values() for t in samples]
    rng.shuffle(pending)  # a question's samples are spread through the file
    # Keep each question's samples in their order of appearance for the restatement below.
    order: dict[str, list[dict]] = {}
    for t in pending:
        order.setdefault(t["qid"], []).append(t)
    write(folder / "g.jsonl", gold)
    write(folder / "t.jsonl", pending)
    return gold, order


def _single_runs(ragscore, folder, order, extra=()):
    """Score the j-th sample of every question alone (a run of one trace per question, as 0.1 does)
    for every j: each question's per-sample values, from the run without samples."""
    per_sample: dict[str, list[dict]] = {}
    depth = max((len(s) for s in order.values()), default=0)
    for j in range(depth):
        write(folder / f"t{j}.jsonl", [s[j] for s in order.values() if len(s) > j])
        doc = ragscore("--gold", "g.jsonl", "--trace", f"t{j}.jsonl", "--per-question", "--no-fail", *extra).json()
        for q in doc["questions"]:
            n = len(order.get(q["qid"], []))
            if j < n or n == j == 0:  # its j-th sample; a question without a trace is one sample
                per_sample.setdefault(q["qid"], []).append(q)
    return per_sample


def _mean_of_means(per_sample, name):
    means = []
    for samples in per_sample.values():
        values = [s["metrics"][name] for s in samples if s["metrics"][name] is not None]
        if values:
            means.append(fmean(values))
    return fmean(means) if means else None


def test_every_metric_is_the_mean_over_questions_of_each_questions_mean_over_its_samples(ragscore, isolated):
    gold, order = _data(isolated)
    per_sample = _single_runs(ragscore, isolated, order, ("--metrics", "retrieval,text"))
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--metrics", "retrieval,text",
                   "--per-question", "--no-fail").json()
    assert len(per_sample) == len(gold)
    names = [name for name in per_sample["q001"][0]["metrics"] if name not in ("judge", "corpus_bleu", "corpus_chrf")]
    assert {"token_f1", "rougeL_f", "bleu", "chrf", "ndcg@10", "em"} <= set(names)
    for name in names:
        expected = _mean_of_means(per_sample, name)
        got = doc["metrics"][name]
        assert (got is None) == (expected is None), name
        if got is not None:
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-15), name
    # External scores and latency: a question's scores are averaged; every sample's latency counts.
    judge = [fmean(t["scores"]["judge"] for t in samples) for samples in order.values() if samples]
    assert doc["metrics"]["judge"] == pytest.approx(fmean(judge), rel=1e-12)
    latencies = sorted(t["latency_ms"] for samples in order.values() for t in samples)
    assert doc["metrics"]["latency_max"] == latencies[-1]
    assert doc["operations"]["latency_ms"]["questions"] == len(latencies)

    # pass@k, pass^k, consistency and flip_rate from each question's labels.
    labels = {qid: [s["label"] for s in samples] for qid, samples in per_sample.items()}
    for k in (1, 3, 5):
        counted = [(len(ls), sum(label in PASSING for label in ls)) for ls in labels.values() if len(ls) >= k]
        at = [1 - Fraction(math.comb(n - c, k), math.comb(n, k)) for n, c in counted]
        hat = [Fraction(math.comb(c, k), math.comb(n, k)) for n, c in counted]
        assert doc["metrics"][f"pass@{k}"] == pytest.approx(float(sum(at) / len(at)), rel=1e-12)
        assert doc["metrics"][f"pass^{k}"] == pytest.approx(float(sum(hat) / len(hat)), rel=1e-12)
        assert doc["repeats"]["fewer_than_k"][str(k)] == len(labels) - len(counted)
    several = [ls for ls in labels.values() if len(ls) >= 2]
    assert doc["metrics"]["consistency"] == pytest.approx(fmean(len(set(ls)) == 1 for ls in several))
    assert doc["metrics"]["flip_rate"] == pytest.approx(
        fmean(0 < sum(label in PASSING for label in ls) < len(ls) for ls in several))
    rates = [Fraction(sum(label in PASSING for label in ls), len(ls)) for ls in labels.values()]
    assert doc["metrics"]["min_pass_rate"] == float(min(rates))
    # Counts: every sample (a question without a trace once), labels over samples.
    assert doc["repeats"]["samples"] == sum(len(ls) for ls in labels.values())
    assert doc["repeats"]["single"] == sum(len(ls) == 1 for ls in labels.values())
    assert doc["counts"]["duplicate_traces"] == 0
    assert sum(doc["labels"].values()) == doc["repeats"]["samples"]
    assert doc["answered"] + doc["refused"] == doc["repeats"]["samples"]
    # Per-question rows: samples, correct and label counts.
    for q in doc["questions"]:
        ls = labels[q["qid"]]
        assert q["samples"]["n"] == len(ls)
        assert q["samples"]["correct"] == sum(label in PASSING for label in ls)
        assert q["samples"]["labels"] == {label: ls.count(label) for label in dict.fromkeys(sorted(
            ls, key=list(doc["labels"]).index))}
    # Every mean gets a bootstrap interval over questions, which holds its value.
    for name in ("precision", "over_refusal", "pass@1", "pass^3", "consistency", "ndcg@5", "hit@3"):
        assert doc["interval_methods"][name] == "poisson_bootstrap", name
        low, high = doc["intervals"][name]
        assert low <= doc["metrics"][name] <= high


def test_corpus_scores_pool_every_samples_statistics(ragscore, isolated):
    _, order = _data(isolated, seed=2)
    # Every sample as a question of its own: corpus BLEU and chrF over all of them.
    gold = [json.loads(line) for line in (isolated / "g.jsonl").read_text().splitlines()]
    by_qid = {g["qid"]: g for g in gold}
    flat_gold, flat_traces = [], []
    for qid, samples in order.items():
        for j, t in enumerate(samples):
            flat_gold.append({**by_qid[qid], "qid": f"{qid}-{j}"})
            flat_traces.append({**t, "qid": f"{qid}-{j}"})
    write(isolated / "fg.jsonl", flat_gold)
    write(isolated / "ft.jsonl", flat_traces)
    flat = ragscore("--gold", "fg.jsonl", "--trace", "ft.jsonl", "--metrics", "text", "--no-fail").json()
    sampled = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "text", "--repeats", "samples",
                       "--no-fail").json()
    for name in ("corpus_bleu", "corpus_chrf"):
        assert sampled["metrics"][name] == flat["metrics"][name]


def test_means_over_samples_are_exact_and_do_not_depend_on_their_order(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "a", "answerable": True, "gold_citations": ["d1", "d2"], "gold_claim_substr":
                                  ["alpha"], "gold_relevance": {"d1": 1, "d2": 1, "d3": 1}}])
    samples = [{"qid": "a", "retrieved_ids": ids, "answer_json": {"claim": "alpha", "citations": cited},
                "scores": {"judge": 0.7}}
               for ids, cited in ((["d1", "x"], ["d1", "x", "y"]), (["x", "d2", "d1"], ["d1", "d2", "z"]),
                                  (["d3"], ["d3", "d1", "q"]))]
    write(isolated / "t.jsonl", samples)
    write(isolated / "r.jsonl", samples[::-1])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--metrics", "retrieval",
                   "--gates", "judge=0.7", "--per-question")
    doc = run.json()
    assert doc["gates"]["judge"]["status"] == "pass" and doc["metrics"]["judge"] == 0.7  # fsum / 3 is 0.6999...
    shares = [1 / 3, 2 / 3, 1 / 3]  # each sample's cited ids that are gold... over its cited ids
    from fractions import Fraction as F
    assert doc["metrics"]["citation_precision"] == float(sum(map(F, shares)) / 3)
    reversed_run = ragscore("--gold", "g.jsonl", "--trace", "r.jsonl", "--repeats", "samples", "--metrics",
                            "retrieval", "--gates", "judge=0.7", "--per-question")
    assert reversed_run.json()["metrics"] == doc["metrics"]


def test_junit_explain_html_and_only_failures_see_every_sample(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "q1", "question": "which?", "answerable": True, "gold_citations": ["d"],
                                  "gold_claim_substr": ["alpha"]},
                                 {"qid": "q2", "answerable": True, "gold_citations": ["d"],
                                  "gold_claim_substr": ["alpha"]}])
    right = {"retrieved_ids": ["d"], "answer_json": {"claim": "alpha", "citations": ["d"]}}
    refused = {"retrieved_ids": ["d"], "answer_json": {"claim": "not in context", "citations": []}}
    write(isolated / "t.jsonl", [{"qid": "q1", **refused}, {"qid": "q2", **right}, {"qid": "q1", **right}])
    args = ("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--no-fail")
    run = ragscore(*args, "--only-failures", "--junit", "j.xml", "--html", "r.html")
    assert [q["qid"] for q in run.json()["questions"]] == ["q1"]  # its last sample is OK, its first is not
    junit = (isolated / "j.xml").read_text()
    assert '<failure message="1 of 2 samples correct (OK 1, OVER_REFUSAL 1); the last: OK: ' in junit
    assert 'type="SAMPLES"' in junit
    ragscore(*args, "--per-question", "--junit", "all.xml")
    assert '<testcase classname="ragscore.questions" name="q2" />' in (isolated / "all.xml").read_text()
    page = (isolated / "r.html").read_text()
    assert "<th>correct</th>" in page and '<td class="num">1/2</td>' in page
    assert '<option value="OK">OK (1)</option>' in page  # rows, not samples
    explained = ragscore(*args, "--explain", "q1").out
    assert "samples: 1 of 2 correct (OK 1, OVER_REFUSAL 1); below, the last of them\n" in explained
    assert "line 3 (sample 2 of 2)" in explained


def test_the_names_of_repeat_metrics_stay_free_for_scores_without_samples(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "q1", "answerable": True, "gold_citations": ["d"]}])
    write(isolated / "t.jsonl", [{"qid": "q1", "retrieved_ids": ["d"], "answer_json": {"claim": "x", "citations":
                                  ["d"]}, "scores": {"consistency": 0.9, "answer_length": 12}}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", "consistency=0.5,answer_length<=20",
                   "--no-fail")
    assert run.status == 0 and run.json()["metrics"]["consistency"] == 0.9
    assert run.json()["gates"]["answer_length"]["status"] == "pass"
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples")
    assert run.status == 2 and 'a score is named "consistency", like a ragscore metric (repeats)' in run.err
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", "min_pass_rate=0.5", "--no-fail")
    assert "the run never saw \"min_pass_rate\" (a metric of repeated samples, --repeats samples" in run.err
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--gates", "min_pass_rate=60")
    assert run.status == 2 and "a bound of 60 cannot be meant" in run.err
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--pass-k", "2")
    assert run.status == 2 and "--pass-k: pass@k and pass^k need repeated samples" in run.err


def test_one_sample_per_question_scores_as_without_samples(ragscore, isolated):
    _data(isolated, seed=3)
    lines = (isolated / "t.jsonl").read_text().splitlines()
    seen, once = set(), []
    for line in lines:
        qid = json.loads(line)["qid"]
        if qid not in seen:
            seen.add(qid)
            once.append(line)
    (isolated / "once.jsonl").write_text("\n".join(once) + "\n")
    last = ragscore("--gold", "g.jsonl", "--trace", "once.jsonl", "--metrics", "all", "--no-fail").json()
    sampled = ragscore("--gold", "g.jsonl", "--trace", "once.jsonl", "--metrics", "all", "--no-fail",
                       "--repeats", "samples").json()
    for name, value in last["metrics"].items():
        assert sampled["metrics"][name] == value, name  # the same means, correctly rounded in both
    assert sampled["labels"] == last["labels"]
    assert "repeats" not in last and "repeats" not in last["settings"]
    assert "repeats" not in last["signature"]


def test_without_samples_later_lines_still_replace_earlier_ones(ragscore, isolated):
    _data(isolated, seed=4)
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail").json()
    assert doc["counts"]["duplicate_traces"] > 0
    assert "pass@1" not in doc["metrics"] and "repeats" not in doc


def test_jobs_give_the_same_bytes(ragscore, isolated):
    _data(isolated, seed=5, questions=120)
    args = ("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--metrics", "retrieval",
            "--per-question", "--no-fail", "--by", "topic", "--gates", "min_pass_rate=0.5")
    one = ragscore(*args, "--jobs", "1")
    two = ragscore(*args, "--jobs", "2")
    assert one.out == two.out and one.err == two.err
    assert one.json()["repeats"]["below_min_pass_rate"] > 0


def test_min_pass_rate_fails_and_lists_the_questions_below_it(ragscore, isolated):
    gold, order = _data(isolated, seed=6)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--gates",
                   "min_pass_rate=0.6", "--per-question")
    doc = run.json()
    assert run.status == 1 and doc["gates"]["min_pass_rate"]["status"] == "fail"
    below = [q["qid"] for q in doc["questions"] if q["samples"]["correct"] / q["samples"]["n"] < 0.6]
    assert doc["repeats"]["below_min_pass_rate"] == len(below)
    assert [b["qid"] for b in doc["repeats"]["below_examples"]] == below[:20]
    assert f"min_pass_rate: {len(below)} questions fail the gate: {below[0]} (" in run.err
    ok = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--gates", "min_pass_rate=0")
    doc = ok.json()
    assert doc["gates"]["min_pass_rate"]["status"] == "pass" and doc["repeats"]["below_min_pass_rate"] == 0


def test_a_gate_on_a_repeat_metric_needs_samples(ragscore, isolated):
    _data(isolated)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", "pass@3=0.5")
    assert run.status == 2
    assert 'metric "pass@3" is not computed with these settings: it needs repeated samples' in run.err
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--gates", "pass^4=0.5")
    assert run.status == 2 and "add 4 to pass_k (--pass-k)" in run.err
    write(isolated / "gates.toml", '[scoring]\nrepeats = "samples"\npass_k = [2, 4]\n\n[gates]\n"pass^4" = 0.1\n')
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail").json()
    assert doc["settings"]["pass_k"] == [2, 4] and "pass^4" in doc["gates"]
    write(isolated / "gates.toml", '[scoring]\nrepeats = "sample"\n')
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.status == 2 and "gates.toml:2" in run.err and "samples" in run.err


def test_a_slice_is_scored_as_a_run_of_its_questions(ragscore, isolated):
    gold, _ = _data(isolated, seed=7)
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--by", "topic",
                   "--no-fail").json()
    write(isolated / "even.jsonl", [g for g in gold if g["topic"] == "even"])
    alone = ragscore("--gold", "even.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--no-fail").json()
    sliced = doc["slices"]["topic"]["even"]
    for name, value in sliced["metrics"].items():
        assert value == alone["metrics"][name], name
    for name, interval in sliced["intervals"].items():
        assert interval == alone["intervals"][name], name  # a question weighs the same in either


def test_compare_pairs_questions_and_skips_mcnemar(ragscore, isolated):
    _data(isolated, seed=8)
    (isolated / "b.jsonl").write_text((isolated / "t.jsonl").read_text())
    lines = (isolated / "t.jsonl").read_text().splitlines()
    better = [line.replace("not in context", "the answer is alpha").replace('"citations": []', '"citations": ["d1"]')
              for line in lines]
    (isolated / "c.jsonl").write_text("\n".join(better) + "\n")
    run = ragscore("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "c.jsonl", "--repeats",
                   "samples")
    doc = json.loads(run.out)
    base = ragscore("--gold", "g.jsonl", "--trace", "b.jsonl", "--repeats", "samples", "--no-fail").json()
    cand = ragscore("--gold", "g.jsonl", "--trace", "c.jsonl", "--repeats", "samples", "--no-fail").json()
    assert doc["mcnemar"] is None and doc["changed"] == {"fixed": [], "broken": []}
    for name in ("precision", "over_refusal", "pass@1", "pass^3", "flip_rate"):
        m = doc["metrics"][name]
        assert (m["baseline"], m["candidate"]) == (base["metrics"][name], cand["metrics"][name])
        assert m["method"] == "bootstrap"
    assert doc["metrics"]["over_refusal"]["delta"] < 0
    assert "min_pass_rate" in doc["metrics"] and doc["metrics"]["min_pass_rate"]["p_value"] is None
    assert "compared over repeated samples" in run.err
    md = ragscore("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "c.jsonl", "--repeats",
                  "samples", "--format", "markdown").out
    assert "McNemar's test does not apply" in md
    # A committed baseline report made with samples gives the same comparison.
    report = ragscore("--gold", "g.jsonl", "--trace", "b.jsonl", "--repeats", "samples", "--per-question",
                      "--no-fail").out
    (isolated / "base.json").write_text(report)
    from_report = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline-report", "base.json", "--trace",
                                      "c.jsonl", "--repeats", "samples").out)
    assert from_report["metrics"] == doc["metrics"]
    # ... and one made without samples is refused: it was scored otherwise.
    report = ragscore("--gold", "g.jsonl", "--trace", "b.jsonl", "--per-question", "--no-fail").out
    (isolated / "last.json").write_text(report)
    run = ragscore("compare", "--gold", "g.jsonl", "--baseline-report", "last.json", "--trace", "c.jsonl",
                   "--repeats", "samples")
    assert run.status == 2 and "scored with other settings (repeats: last vs samples" in run.err


def test_merged_partials_give_scores_bytes(ragscore, isolated):
    _data(isolated, seed=9, questions=60)
    # Latency quantiles merge from sketches (the one documented difference): leave latency out.
    traces = [json.loads(line) for line in (isolated / "t.jsonl").read_text().splitlines()]
    write(isolated / "t.jsonl", [{k: v for k, v in t.items() if k != "latency_ms"} for t in traces])
    for i in (1, 2, 3):
        made = ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--metrics",
                        "retrieval", "--part", f"{i}/3", "--per-question", "--by", "topic", "--out", f"p{i}.json")
        assert made.status == 0, made.err
    gates = ("--gates", "min_pass_rate=0.5,pass^3=0.4")
    merged = ragscore("merge", "p3.json", "p1.json", "p2.json", "--per-question", *gates)
    scored = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--metrics", "retrieval",
                      "--per-question", "--by", "topic", *gates)
    assert (merged.status, merged.out, merged.err) == (scored.status, scored.out, scored.err)
    assert scored.json()["repeats"]["below_min_pass_rate"] > 0
    # A partial's repeated samples are checked when read, as the rest of it is.
    data = json.loads((isolated / "p1.json").read_text())
    data["result"]["repeats"]["rates"][0][2] += 1
    (isolated / "bad.json").write_text(json.dumps(data))
    run = ragscore("merge", "bad.json", "p2.json", "p3.json")
    assert run.status == 2 and "a damaged ragscore partial" in run.err
    # ... and a run without samples cannot merge with one made with them.
    plain = ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "retrieval", "--part", "1/3",
                     "--per-question", "--by", "topic", "--out", "plain.json")
    assert plain.status == 0
    run = ragscore("merge", "plain.json", "p2.json", "p3.json")
    assert run.status == 2 and "scored with other settings (repeats, pass_k)" in run.err


def test_the_python_api_takes_repeats(isolated):
    import ragscore

    gold = [{"qid": "a", "answerable": True, "gold_citations": ["d"], "gold_claim_substr": ["alpha"]}]
    right = {"qid": "a", "retrieved_ids": ["d"], "answer_json": {"claim": "alpha", "citations": ["d"]}}
    wrong = {"qid": "a", "retrieved_ids": ["d"], "answer_json": {"claim": "y", "citations": ["d"]}}
    run = ragscore.score(gold, [right, wrong, right], repeats="samples", pass_k=[2], gates={"min_pass_rate": 0.5})
    assert run.metrics["pass@2"] == 1.0 and run.metrics["pass^2"] == pytest.approx(1 / 3)
    assert run.metrics["precision"] == pytest.approx(2 / 3)
    assert run.document["gates"]["min_pass_rate"]["status"] == "pass"
    with pytest.raises(ragscore.UsageError, match="repeats: expected one of last, samples"):
        ragscore.score(gold, [right], repeats="all")


def test_the_docs_example(ragscore, monkeypatch):
    from conftest import ROOT
    from docs import doc_block

    monkeypatch.chdir(ROOT)  # as the docs run it: the project's own gates.toml
    block = doc_block("$ ragscore --gold examples/repeats/gold.jsonl")
    shown = [line for line in block.splitlines() if line.startswith("ragscore: ")]
    run = ragscore("--gold", "examples/repeats/gold.jsonl", "--trace", "examples/repeats/trace.jsonl", "--repeats",
                   "samples", "--gates", "pass^3=0.5,min_pass_rate=0.6", "--format", "none")
    assert run.status == 1
    assert shown == run.err.splitlines()
