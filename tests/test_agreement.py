"""Gold-set quality (issue 19, part 4): agree's kappa against scikit-learn, alpha against the
krippendorff package, citation agreement by hand; split's strata within one item of their ratios,
byte for byte the same for a seed."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import pytest

from conftest import write
from ragscore.goldset.agreement import cohen_kappa, krippendorff_alpha, split_sizes


def _annotators(folder, k=2, n=80, seed=1, noise=0.15):
    rng = random.Random(seed)
    truth = [{"qid": f"q{i:03d}", "answerable": rng.random() < 0.8, "topic": rng.choice(["a", "b", "c"]),
              "lang": rng.choice(["en", "de"])} for i in range(n)]
    files = []
    for j in range(k):
        out = []
        for t in truth:
            g = dict(t)
            if rng.random() < noise:
                g["answerable"] = not g["answerable"]
            if rng.random() < noise:
                g["topic"] = rng.choice(["a", "b", "c"])
            g["gold_citations"] = sorted(rng.sample(["d1", "d2", "d3"], rng.randrange(1, 3))) if g["answerable"] \
                else []
            out.append(g)
        write(folder / f"ann{j}.jsonl", out)
        files.append(out)
    return files


def test_kappa_equals_scikit_learn_and_alpha_the_krippendorff_package(ragscore, isolated):
    sklearn = pytest.importorskip("sklearn.metrics")
    krippendorff = pytest.importorskip("krippendorff")
    np = pytest.importorskip("numpy")
    for seed in range(5):
        files = _annotators(isolated, k=3, seed=seed)
        doc = json.loads(ragscore("agree", "ann0.jsonl", "ann1.jsonl", "--field", "topic", "--no-fail").out)
        a = [g["answerable"] for g in files[0]]
        b = [g["answerable"] for g in files[1]]
        assert doc["metrics"]["kappa"] == pytest.approx(sklearn.cohen_kappa_score(a, b), abs=1e-12)
        topics = [[g["topic"] for g in f] for f in files]
        assert doc["metrics"]["kappa_topic"] == pytest.approx(
            sklearn.cohen_kappa_score(topics[0], topics[1]), abs=1e-12)
        three = json.loads(ragscore("agree", "ann0.jsonl", "ann1.jsonl", "ann2.jsonl", "--field", "topic",
                                    "--no-fail").out)
        codes = {"a": 0, "b": 1, "c": 2}
        data = np.array([[codes[t] for t in column] for column in topics], dtype=float)
        assert three["metrics"]["alpha_topic"] == pytest.approx(
            krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-12)
        pairs = [(0, 1), (0, 2), (1, 2)]
        light = sum(sklearn.cohen_kappa_score(topics[x], topics[y]) for x, y in pairs) / 3
        assert three["metrics"]["kappa_topic"] == pytest.approx(light, abs=1e-12)
        # Citations: the mean Jaccard and the share of equal sets over every pair of annotators.
        sims, equal = [], []
        for i in range(len(files[0])):
            sets = [frozenset(f[i]["gold_citations"]) for f in files]
            for x, y in pairs:
                union = sets[x] | sets[y]
                sims.append(len(sets[x] & sets[y]) / len(union) if union else 1.0)
                equal.append(sets[x] == sets[y])
        assert three["metrics"]["citation_jaccard"] == pytest.approx(sum(sims) / len(sims), abs=1e-12)
        assert three["metrics"]["citation_exact"] == pytest.approx(sum(equal) / len(equal), abs=1e-12)


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # the package divides 0 by 0 for no disagreement
def test_alpha_with_missing_values_equals_the_package():
    krippendorff = pytest.importorskip("krippendorff")
    np = pytest.importorskip("numpy")
    rng = random.Random(2)
    for _ in range(200):
        m, n = rng.randrange(2, 6), rng.randrange(2, 40)
        units = [[rng.choice("xyz") if rng.random() > 0.2 else None for _ in range(m)] for _ in range(n)]
        data = np.array([[np.nan if u[j] is None else "xyz".index(u[j]) for u in units] for j in range(m)])
        ours = krippendorff_alpha(units)
        try:
            theirs = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
        except ValueError:  # the package refuses data with one value or no pairable unit
            theirs = math.nan
        if ours is None:  # one value in all, or no question with two: undefined for both
            assert math.isnan(theirs)
        else:
            assert ours == pytest.approx(theirs, abs=1e-12)
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # chance agreement 1: undefined, as scikit-learn's NaN


def test_agree_gates_notes_and_errors(ragscore, isolated):
    _annotators(isolated, k=2, noise=0.3)
    run = ragscore("agree", "ann0.jsonl", "ann1.jsonl", "--gates", "kappa=0.85", "--format", "markdown")
    assert run.status == 1 and run.out.startswith("# ragscore agree\n\n**FAIL**")
    assert "ragscore: answerable: the annotators disagree on " in run.err
    assert "ragscore: FAIL    kappa = " in run.err
    bad = ragscore("agree", "ann0.jsonl")
    assert bad.status == 2 and "give two or more annotators' gold files, got 1" in bad.err
    bad = ragscore("agree", "ann0.jsonl", "ann1.jsonl", "--gates", "kapa=0.8")
    assert bad.status == 2 and 'did you mean "kappa"?' in bad.err
    lines = (isolated / "ann1.jsonl").read_text().splitlines()
    (isolated / "short.jsonl").write_text("\n".join(lines[:-5]) + "\n")
    doc = json.loads(ragscore("agree", "ann0.jsonl", "short.jsonl", "--no-fail").out)
    assert doc["counts"] == {"questions": 75, "in_some_files_only": 5}


def test_split_keeps_every_stratum_within_one_item_and_the_same_bytes(ragscore, isolated):
    rng = random.Random(5)
    gold = [{"qid": f"g{i:04d}", "answerable": rng.random() < 0.7, "topic": rng.choice(["a", "b", "c", "d"]),
             "lang": rng.choice(["en", "de", "fr"])} for i in range(997)]
    write(isolated / "g.jsonl", gold)
    run = ragscore("split", "--gold", "g.jsonl", "--by", "topic", "--by", "lang", "--ratios", "70,15,15",
                   "--seed", "s1", "--out", "one")
    assert run.status == 0 and "train: " in run.err
    original = (isolated / "g.jsonl").read_text().splitlines(keepends=True)
    parts = {name: (isolated / "one" / f"{name}.jsonl").read_text().splitlines(keepends=True)
             for name in ("train", "dev", "test")}
    assert sorted(line for lines in parts.values() for line in lines) == sorted(original)  # every line once, as is
    for lines in parts.values():  # in gold order
        assert lines == [line for line in original if line in set(lines)]
    strata = Counter((g["topic"], g["lang"]) for g in gold)
    for stratum, size in strata.items():
        for name, ratio in zip(("train", "dev", "test"), (70, 15, 15), strict=True):
            got = sum((json.loads(line)["topic"], json.loads(line)["lang"]) == stratum for line in parts[name])
            assert abs(got - size * ratio / 100) < 1, (stratum, name)
    again = ragscore("split", "--gold", "g.jsonl", "--by", "topic", "--by", "lang", "--seed", "s1", "--out", "two")
    assert again.status == 0
    for name in parts:
        assert (isolated / "two" / f"{name}.jsonl").read_bytes() == (isolated / "one" / f"{name}.jsonl").read_bytes()
    ragscore("split", "--gold", "g.jsonl", "--by", "topic", "--by", "lang", "--seed", "s2", "--out", "three")
    assert (isolated / "three" / "train.jsonl").read_bytes() != (isolated / "one" / "train.jsonl").read_bytes()
    ragscore("split", "--gold", "g.jsonl", "--ratios", "1,1", "--names", "a,b", "--out", "four")
    assert sorted(p.name for p in (isolated / "four").iterdir()) == ["a.jsonl", "b.jsonl"]
    for args, message in ((("--ratios", "70,x"), "--ratios: expected a positive integer"),
                          (("--ratios", "100",), "expected 2 to 10 positive whole ratios"),
                          (("--names", "a,a,b"), "distinct names")):
        bad = ragscore("split", "--gold", "g.jsonl", "--out", "bad", *args)
        assert bad.status == 2 and message in bad.err, bad.err


def test_split_sizes_are_within_one_item_of_their_share():
    rng = random.Random(9)
    for _ in range(2000):
        ratios = [rng.randrange(1, 100) for _ in range(rng.randrange(2, 6))]
        n = rng.randrange(0, 500)
        sizes = split_sizes(n, ratios)
        assert sum(sizes) == n
        assert all(abs(size - n * r / sum(ratios)) < 1 for size, r in zip(sizes, ratios, strict=True))
