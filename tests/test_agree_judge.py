"""An LLM judge calibrated against human labels (issue 37): ``ragscore agree --judge SCORES --human LABELS``.

The measures against their references: the quadratic-weighted kappa against scikit-learn's
``cohen_kappa_score(a, b, weights="quadratic")`` (whose categories are the labels observed, a category
no one gives being no step), the unweighted one against ``cohen_kappa_score``, and alpha (nominal,
ordinal, interval) against the ``krippendorff`` package, on committed vectors and on random ones with
missing values. Then the command end to end: the scales (from the header, --scale), the errors (one
line, exit 2), the gates' exit statuses, the JSON and Markdown reports, the notes.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES, write
from ragscore.goldset.agreement import alpha_at, cohen_kappa, quadratic_kappa

sklearn_metrics = pytest.importorskip("sklearn.metrics")
krippendorff = pytest.importorskip("krippendorff")
np = pytest.importorskip("numpy")

JUDGE, HUMAN = EXAMPLES / "judge" / "calibration.jsonl", EXAMPLES / "judge" / "labels.jsonl"
HEADER = {"ragscore_judge": {"endpoint": "judge.example", "model": "m", "rubric": "0" * 64,
                             "criteria": {"faithfulness": "0-1", "relevance": "1-5", "grounded": "pass/fail"}}}


def _sklearn(a, b, **kwargs):
    """scikit-learn's kappa, None for its NaN (undefined)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UndefinedMetricWarning on one label in all
        value = sklearn_metrics.cohen_kappa_score(a, b, **kwargs)
    return None if math.isnan(value) else value


def _package(units, level):
    """The krippendorff package's alpha of ``units`` (each item's values, None missing), None where it is undefined."""
    raters = max(len(unit) for unit in units)
    data = np.array([[np.nan if unit[j] is None else unit[j] for unit in units] for j in range(raters)], dtype=float)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # it divides 0 by 0 when no disagreement is possible
            value = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    except ValueError:  # one value in all, or no item with two
        return None
    return None if math.isnan(value) else float(value)


def _close(ours, theirs):
    assert (ours is None) == (theirs is None), (ours, theirs)
    if ours is not None:
        assert ours == pytest.approx(theirs, abs=1e-9)


# --- the measures against their references --------------------------------------------------------

VECTORS = [
    ([1, 2, 3, 4, 5, 3, 2], [1, 2, 3, 5, 4, 3, 1]),
    ([5, 4, 4, 3, 1, 2, 5, 5], [4, 4, 3, 3, 2, 2, 5, 4]),
    ([1, 2, 4, 5, 2, 4], [2, 1, 5, 4, 4, 2]),  # no 3: scikit-learn's categories are the labels given
    ([3, 3, 3], [3, 3, 3]),  # one label in all: undefined
    ([1, 5], [5, 1]),
    ([2, 2, 2, 2], [2, 3, 2, 2]),
]


@pytest.mark.parametrize(("a", "b"), VECTORS)
def test_kappa_on_committed_vectors_equals_scikit_learn(a, b):
    _close(quadratic_kappa(a, b), _sklearn(a, b, weights="quadratic"))
    _close(cohen_kappa(a, b), _sklearn(a, b))


def test_a_category_no_one_gives_is_no_step_as_in_scikit_learn():
    a, b = [1, 2, 4, 5, 2, 4], [2, 1, 5, 4, 4, 2]
    # scikit-learn weighs by the place among the labels given: 2 and 4 are one apart, not two.
    assert quadratic_kappa(a, b) == pytest.approx(_sklearn(a, b, weights="quadratic"), abs=1e-12)
    assert _sklearn(a, b, weights="quadratic") != pytest.approx(
        _sklearn(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5]))
    # With every category between the least and the greatest given, the two agree.
    a, b = [1, 2, 3, 3, 2], [2, 2, 3, 1, 3]
    assert quadratic_kappa(a, b) == pytest.approx(_sklearn(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5]))


pairs_1_5 = st.integers(1, 40).flatmap(lambda n: st.tuples(st.lists(st.integers(1, 5), min_size=n, max_size=n),
                                                           st.lists(st.integers(1, 5), min_size=n, max_size=n)))


@settings(max_examples=300, deadline=None)
@given(pairs_1_5)
def test_quadratic_kappa_equals_scikit_learn_on_random_labels(pair):
    a, b = pair
    _close(quadratic_kappa(a, b), _sklearn(a, b, weights="quadratic"))


pairs_0_1 = st.integers(1, 40).flatmap(lambda n: st.tuples(st.lists(st.integers(0, 1), min_size=n, max_size=n),
                                                           st.lists(st.integers(0, 1), min_size=n, max_size=n)))


@settings(max_examples=300, deadline=None)
@given(pairs_0_1)
def test_unweighted_kappa_equals_scikit_learn_on_random_labels(pair):
    a, b = pair
    _close(cohen_kappa(a, b), _sklearn(a, b))


VALUES = {"nominal": st.integers(0, 1), "ordinal": st.integers(1, 5),
          "interval": st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(0, 1))}


@st.composite
def reliability(draw, level):
    raters, items = draw(st.integers(2, 4)), draw(st.integers(1, 30))
    value = st.one_of(st.none(), VALUES[level])
    return [[draw(value) for _ in range(raters)] for _ in range(items)]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_equals_the_krippendorff_package_on_random_data_with_missing_values(level):
    @settings(max_examples=300, deadline=None)
    @given(reliability(level))
    def check(units):
        _close(alpha_at(units, level), _package(units, level))

    check()


def test_alpha_on_the_package_documented_example():
    data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None], [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]]
    units = [list(unit) for unit in zip(*data, strict=True)]
    assert round(alpha_at(units, "ordinal"), 3) == 0.815  # the package's docstring
    for level in ("nominal", "ordinal", "interval"):
        _close(alpha_at(units, level), _package(units, level))
    assert alpha_at([[1, None], [None, 2]], "interval") is None  # no item with two values
    assert alpha_at([[0.3, 0.3], [0.3, 0.3]], "interval") is None  # no disagreement possible


# --- the command ----------------------------------------------------------------------------------

def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if "ragscore_judge" not in line]


def _usage_error(run, message: str) -> None:
    assert (run.status, run.out) == (2, ""), run.err
    assert run.err == f"ragscore: error: {message}\n"


def test_the_example_measured_as_the_header_scales_say(ragscore):
    run = ragscore("agree", "--judge", JUDGE, "--human", HUMAN)
    assert run.status == 0
    doc = json.loads(run.out)
    assert [doc[key] for key in ("pass", "schema", "kind")] == [True, 1, "agree"]
    assert [entry["sha256"] for entry in doc["inputs"]] == [hashlib.sha256(p.read_bytes()).hexdigest()
                                                           for p in (JUDGE, HUMAN)]
    assert doc["judge"] == {key: json.loads(JUDGE.read_text().splitlines()[0])["ragscore_judge"][key]
                            for key in ("endpoint", "model", "rubric")}
    assert doc["criteria"] == {"faithfulness": {"scale": "0-1", "n": 9}, "relevance": {"scale": "1-5", "n": 10},
                               "grounded": {"scale": "pass/fail", "n": 10}}
    judge, human = _rows(JUDGE), _rows(HUMAN)
    assert [j["qid"] for j in judge] == [h["qid"] for h in human]
    both = [(j, h) for j, h in zip(judge, human, strict=True)]
    m = doc["metrics"]
    assert list(m) == ["kappa_faithfulness", "alpha_faithfulness", "kappa_relevance", "alpha_relevance",
                       "kappa_grounded", "alpha_grounded"]
    faith = [(j["faithfulness"], h["faithfulness"]) for j, h in both if j["faithfulness"] is not None]
    assert m["kappa_faithfulness"] == pytest.approx(_sklearn([a >= 0.5 for a, _ in faith], [b >= 0.5 for _, b in faith]))
    assert m["alpha_faithfulness"] == pytest.approx(_package(faith, "interval"), abs=1e-9)
    relevance = [(j["relevance"], h["relevance"]) for j, h in both]
    assert m["kappa_relevance"] == pytest.approx(_sklearn(*zip(*relevance, strict=True), weights="quadratic"))
    assert m["alpha_relevance"] == pytest.approx(_package(relevance, "ordinal"), abs=1e-9)
    grounded = [(j["grounded"], h["grounded"]) for j, h in both]
    assert m["kappa_grounded"] == pytest.approx(_sklearn(*zip(*grounded, strict=True)))
    assert m["alpha_grounded"] == pytest.approx(_package(grounded, "nominal"), abs=1e-9)
    # Worst first: the largest difference, then the qid; each with both values (integers on 1-5 and pass/fail).
    assert doc["disagreeing"]["relevance"] == {"count": 3, "questions": [
        {"qid": "q06", "judge": 1, "human": 3}, {"qid": "q05", "judge": 5, "human": 4},
        {"qid": "q09", "judge": 2, "human": 1}]}
    assert doc["disagreeing"]["faithfulness"] == {"count": 1, "questions": [{"qid": "q04", "judge": 0.4, "human": 0.6}]}
    assert doc["disagreeing"]["grounded"]["count"] == 1
    assert run.err.splitlines() == [
        "ragscore: faithfulness: the judge and the human labels differ on 1 of 9 questions: q04 (0.4 vs 0.6)",
        "ragscore: relevance: the judge and the human labels differ on 3 of 10 questions: q06 (1 vs 3), "
        "q05 (5 vs 4), q09 (2 vs 1)",
        "ragscore: grounded: the judge and the human labels differ on 1 of 10 questions: q04 (1 vs 0)"]


def test_the_measures_names_are_metric_names(ragscore):
    from ragscore.score_names import well_spelt

    doc = json.loads(ragscore("agree", "--judge", JUDGE, "--human", HUMAN, "-q").out)
    assert all(well_spelt(name) for name in doc["metrics"])


def test_a_judge_file_without_header_takes_scale_options(ragscore, isolated):
    write(isolated / "j.csv", "qid,relevance,ok\nq1,5,1\nq2,3,0\nq3,4,1\nq4,1,0\n")
    write(isolated / "h.csv", "qid,relevance,ok\nq1,4,1\nq2,3,1\nq3,4,1\nq4,2,0\n")
    _usage_error(ragscore("agree", "--judge", "j.csv", "--human", "h.csv"),
                 'agree: no scale for the criterion "relevance" (no ragscore judge header gives one): give it with '
                 "--scale relevance=SCALE (0-1, 1-5, pass/fail)")
    run = ragscore("agree", "--judge", "j.csv", "--human", "h.csv", "--scale", "relevance=1-5", "--scale", "ok=pass/fail")
    doc = json.loads(run.out)
    assert doc["judge"] is None
    assert doc["criteria"] == {"relevance": {"scale": "1-5", "n": 4}, "ok": {"scale": "pass/fail", "n": 4}}
    assert doc["metrics"]["kappa_relevance"] == pytest.approx(
        _sklearn([5, 3, 4, 1], [4, 3, 4, 2], weights="quadratic"))
    assert doc["metrics"]["kappa_ok"] == pytest.approx(_sklearn([1, 0, 1, 0], [1, 1, 1, 0]))
    # The same ones and zeros on 0-1: binarised at 0.5, the same kappa; alpha interval, here nominal's.
    again = json.loads(ragscore("agree", "--judge", "j.csv", "--human", "h.csv", "--scale", "relevance=1-5",
                                "--scale", "ok=0-1").out)
    assert again["criteria"]["ok"]["scale"] == "0-1"
    assert again["metrics"]["kappa_ok"] == doc["metrics"]["kappa_ok"]
    # A CSV's value off its scale is an error at its line (a blank line counted).
    write(isolated / "h.csv", "qid,relevance,ok\nq1,4,1\n\nq2,3.5,1\n")
    _usage_error(ragscore("agree", "--judge", "j.csv", "--human", "h.csv", "--scale", "relevance=1-5", "--scale",
                          "ok=pass/fail"),
                 'h.csv:4: "relevance" is on the 1-5 scale: expected an integer from 1 to 5, got 3.5')


def test_scale_overrides_the_header(ragscore, isolated):
    write(isolated / "j.jsonl", [HEADER, {"qid": "a", "faithfulness": 1, "relevance": 3, "grounded": 1},
                                 {"qid": "b", "faithfulness": 0, "relevance": 4, "grounded": 0}])
    write(isolated / "h.jsonl", [{"qid": "a", "faithfulness": 1, "relevance": 3, "grounded": 1},
                                 {"qid": "b", "faithfulness": 1, "relevance": 5, "grounded": 0}])
    doc = json.loads(ragscore("agree", "--judge", "j.jsonl", "--human", "h.jsonl", "--scale",
                              "faithfulness=pass/fail").out)
    # A labels file with a header of its own: its scales where the judge's header gives none, else the same.
    labels = {**HEADER["ragscore_judge"], "criteria": {"faithfulness": "pass/fail", "relevance": "1-5"}}
    write(isolated / "h2.jsonl", [{"ragscore_judge": labels}, *_rows(isolated / "h.jsonl")])
    _usage_error(ragscore("agree", "--judge", "j.jsonl", "--human", "h2.jsonl"),
                 'agree: the files\' headers give "faithfulness" two scales (0-1 in "j.jsonl", pass/fail in "h2.jsonl"): '
                 "--scale faithfulness=SCALE chooses one")
    assert ragscore("agree", "--judge", "j.jsonl", "--human", "h2.jsonl", "--scale", "faithfulness=0-1").status == 0
    assert doc["criteria"]["faithfulness"]["scale"] == "pass/fail"
    assert doc["criteria"]["relevance"]["scale"] == "1-5"  # the header's
    # Values on the header's scale may be off the one given.
    run = ragscore("agree", "--judge", "j.jsonl", "--human", "h.jsonl", "--scale", "relevance=pass/fail")
    _usage_error(run, 'j.jsonl:2: "relevance" is on the pass/fail scale: expected 1 (pass) or 0 (fail), got 3')


@pytest.mark.parametrize(("judge", "human", "message"), [
    ([HEADER, {"qid": "a", "faithfulness": 0.5, "relevance": 6, "grounded": 1}],
     [{"qid": "a", "faithfulness": 0.5, "relevance": 5, "grounded": 1}],
     'j.jsonl:2: "relevance" is on the 1-5 scale: expected an integer from 1 to 5, got 6'),
    ([HEADER, {"qid": "a", "faithfulness": 0.5, "relevance": 4, "grounded": 1}],
     [{"qid": "a", "faithfulness": 0.5, "relevance": 5, "grounded": 1},
      {"qid": "b", "faithfulness": 1.5, "relevance": 5, "grounded": 1}],
     'h.jsonl:2: "faithfulness" is on the 0-1 scale: expected a number from 0 to 1, got 1.5'),
    ([HEADER, {"qid": "a", "faithfulness": 0.5, "relevance": 2.5, "grounded": 1}],
     [{"qid": "a", "faithfulness": 0.5, "relevance": 5, "grounded": 1}],
     'j.jsonl:2: "relevance" is on the 1-5 scale: expected an integer from 1 to 5, got 2.5'),
    ([HEADER, {"qid": "a", "faithfulness": 0.5, "relevance": 2, "grounded": 1}],
     [{"qid": "a", "faithfulness": 0.5, "relevance": 5, "grounded": 0.5}],
     'h.jsonl:1: "grounded" is on the pass/fail scale: expected 1 (pass) or 0 (fail), got 0.5'),
    ([HEADER, {"qid": "a", "faithfulness": 0.5, "relevance": 2, "grounded": 1}],
     [{"qid": "a", "other": 1}],
     'agree: "j.jsonl" and "h.jsonl" have no criterion in common (the judge\'s: faithfulness, relevance, '
     "grounded; the labels': other)"),
    ([HEADER, {"question": "a?", "faithfulness": 0.5, "relevance": 2, "grounded": 1}],
     [{"qid": "a", "faithfulness": 0.5}],
     'j.jsonl: expected a "qid" column: agree joins the judge\'s scores and the human labels by qid (this file '
     'has "question" or "user_input")'),
])
def test_a_file_that_cannot_be_measured_is_one_line_exit_2(ragscore, isolated, judge, human, message):
    write(isolated / "j.jsonl", judge)
    write(isolated / "h.jsonl", human)
    run = ragscore("agree", "--judge", "j.jsonl", "--human", "h.jsonl")
    _usage_error(run, message)
    assert "Traceback" not in run.err


@pytest.mark.parametrize(("args", "message"), [
    (["gold.jsonl", "--judge", "j.jsonl", "--human", "h.jsonl"],
     "agree: give either GOLD files or --judge and --human, not both"),
    (["--judge", "j.jsonl"], "agree: --judge needs --human: the judge's scores and the human labels"),
    (["--human", "h.jsonl"], "agree: --human needs --judge: the judge's scores and the human labels"),
    ([], "agree: give two or more annotators' GOLD files, or --judge SCORES and --human LABELS"),
    (["gold.jsonl", "gold2.jsonl", "--scale", "x=1-5"], "agree: --scale is for --judge SCORES --human LABELS"),
    (["--judge", "j.jsonl", "--human", "h.jsonl", "--field", "topic"],
     "agree: --field is for GOLD files; with --judge the criteria are the score names both files have"),
    (["--judge", "j.jsonl", "--human", "h.jsonl", "--scale", "relevance"],
     '--scale: expected NAME=SCALE (SCALE: 0-1, 1-5, pass/fail), got "relevance"'),
    (["--judge", "j.jsonl", "--human", "h.jsonl", "--scale", "relevance=1-10"],
     "--scale relevance=1-10: the scales are 0-1, 1-5, pass/fail"),
    (["--judge", "j.jsonl", "--human", "h.jsonl", "--scale", "relevence=1-5"],
     '--scale "relevence": no such criterion in both files (they have faithfulness, relevance, grounded); did you '
     'mean "relevance"?'),
    (["--judge", "j.jsonl", "--human", "h.jsonl", "--scale", "relevance=1-5", "--scale", "relevance=0-1"],
     '--scale: "relevance" given twice; give each criterion\'s scale once'),
    (["--judge", "j.jsonl", "--human", "./j.jsonl"],
     'agree: --judge "j.jsonl" and --human "./j.jsonl" are the same file: the judge\'s scores and the human labels '
     "are two files"),
    (["--judge", "j.jsonl", "--human", "h.jsonl", "--gates", "kappa_relevence=0.6"],
     'error: --gates: unknown metric "kappa_relevence"; did you mean "kappa_relevance"?'),
])
def test_a_command_line_that_is_no_calibration_is_a_usage_error(ragscore, isolated, args, message):
    write(isolated / "j.jsonl", JUDGE.read_text())
    write(isolated / "h.jsonl", HUMAN.read_text())
    write(isolated / "gold.jsonl", (EXAMPLES / "gold.jsonl").read_text())
    write(isolated / "gold2.jsonl", (EXAMPLES / "gold.jsonl").read_text())
    run = ragscore("agree", *args)
    if message.startswith("error: "):  # a gate's error names its source
        assert run.status == 2 and run.err.endswith(f"{message[len('error: '):]}\n") and run.err.count("\n") == 1
    else:
        _usage_error(run, message)


def test_gates_pass_fail_and_strict(ragscore):
    base = ("agree", "--judge", JUDGE, "--human", HUMAN, "--format", "none")
    assert ragscore(*base, "--gates", "kappa_relevance=0.8,alpha_grounded=0.7").status == 0
    failed = ragscore(*base, "--gates", "kappa_faithfulness=0.9")
    assert failed.status == 1
    assert "ragscore: FAIL    kappa_faithfulness = 0.7273 (gate >= 0.9)" in failed.err
    assert ragscore(*base, "--gates", "kappa_faithfulness=0.9", "--no-fail").status == 0


def test_an_undefined_measure_is_null_and_fails_only_strict_gates(ragscore, isolated):
    write(isolated / "j.jsonl", [HEADER, {"qid": "a", "faithfulness": 0.9, "relevance": 4, "grounded": 1},
                                 {"qid": "b", "faithfulness": 0.8, "relevance": 4, "grounded": 1}])
    write(isolated / "h.jsonl", [{"qid": "a", "faithfulness": 0.9, "relevance": 4, "grounded": 1},
                                 {"qid": "b", "faithfulness": 0.8, "relevance": 4, "grounded": 1}])
    run = ragscore("agree", "--judge", "j.jsonl", "--human", "h.jsonl", "--gates", "kappa_grounded=0.6")
    doc = json.loads(run.out)
    assert run.status == 0 and doc["metrics"]["kappa_grounded"] is None and doc["metrics"]["alpha_relevance"] is None
    assert doc["metrics"]["alpha_faithfulness"] == pytest.approx(1.0)  # two distinct values: defined
    assert doc["gates"]["kappa_grounded"]["status"] == "skipped"
    strict = ragscore("agree", "--judge", "j.jsonl", "--human", "h.jsonl", "--gates", "kappa_grounded=0.6", "--strict")
    assert strict.status == 1


def test_reports_in_json_and_markdown(ragscore, isolated):
    run = ragscore("agree", "--judge", JUDGE, "--human", HUMAN, "--format", "markdown", "--json", "r.json",
                   "--markdown", "r.md", "--gates", "kappa_relevance=0.6", "-q")
    assert (run.status, run.err) == (0, "")
    assert run.out == (isolated / "r.md").read_text()
    assert run.out.startswith("# ragscore agree: judge against human labels\n\n**PASS**: the judge's scores "
                              "`calibration.jsonl` (`gpt-4o-mini` at `api.openai.com`, rubric ")  # the name alone: not under the folder
    assert "| `relevance` | 1-5 | 10 | 0.8182 | 0.8894 | 3 |\n" in run.out
    assert "| `kappa_relevance` | >= 0.6 | 0.8182 | pass |\n" in run.out
    assert "| `faithfulness` | q04 | 0.4 | 0.6 |\n" in run.out
    doc = json.loads((isolated / "r.json").read_text())
    assert doc["gates"]["kappa_relevance"]["status"] == "pass" and doc["pass"] is True


def test_notes_name_what_is_left_out(ragscore, isolated):
    write(isolated / "j.jsonl", [HEADER, *[{"qid": f"q{i}", "faithfulness": 0.9, "relevance": 4, "grounded": 1}
                                           for i in range(4)]])
    write(isolated / "h.csv", "qid,relevance,extra\nq0,4,1\nq1,3,1\nq1,4,1\nq2,4,0\nq9,5,1\n")
    run = ragscore("agree", "--judge", "j.jsonl", "--human", "h.csv", "--format", "none")
    assert run.status == 0
    assert run.err.splitlines() == [
        'ragscore: "faithfulness" is in the judge\'s file only (left out)',
        'ragscore: "grounded" is in the judge\'s file only (left out)',
        'ragscore: "extra" is in the labels\' file only (left out)',
        'ragscore: "h.csv": 1 qid is given again (the last row counts): q1',
        "ragscore: 2 qids are in one file only (left out): q3, q9"]


def test_the_python_api(isolated):
    import ragscore

    result = ragscore.agree_judge(JUDGE, HUMAN, scales={"grounded": "pass/fail"}, gates={"kappa_relevance": 0.9})
    assert isinstance(result, ragscore.Agreement) and not result.passed
    assert result.metrics["kappa_relevance"] == pytest.approx(0.8182, abs=1e-4)
    assert result.report("markdown").startswith("# ragscore agree: judge against human labels")
    with pytest.raises(ragscore.UsageError, match="the scales are 0-1, 1-5, pass/fail"):
        ragscore.agree_judge(JUDGE, HUMAN, scales={"grounded": "yes/no"})


def test_agree_on_gold_files_is_unchanged(ragscore, isolated):
    write(isolated / "a.jsonl", (EXAMPLES / "gold.jsonl").read_text())
    write(isolated / "b.jsonl", (EXAMPLES / "gold.jsonl").read_text())
    doc = json.loads(ragscore("agree", "a.jsonl", "b.jsonl").out)
    assert "judge" not in doc and "criteria" not in doc and doc["fields"] == ["answerable", "gold_citations"]
    assert ragscore("agree", "a.jsonl", "b.jsonl", "--format", "markdown").out.startswith("# ragscore agree\n\n")
