"""Gates and settings: syntax, directions, warnings, undefined values, precedence, errors."""

from __future__ import annotations

import pytest

from conftest import EXAMPLES, write
from ragscore.gates import Gate, Status, evaluate_gates, gates_pass, parse_gate_option

GOLD, TRACE = EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"
NAMES = ["precision", "chr", "under_refusal", "over_refusal", "full_recall@5", "missing"]


def gates_of(run) -> dict[str, tuple[str, float, str]]:
    return {name: (g["op"], g["threshold"], g["status"]) for name, g in run.json()["gates"].items()}


def test_reference_syntax_takes_the_direction_from_the_metric():
    gates = parse_gate_option("precision=0.80,chr=0.75,under=0.05,over=0.10", NAMES, 5)
    assert gates == {
        "precision": Gate("precision", ">=", 0.80, source="--gates"),
        "chr": Gate("chr", ">=", 0.75, source="--gates"),
        "under_refusal": Gate("under_refusal", "<=", 0.05, source="--gates"),
        "over_refusal": Gate("over_refusal", "<=", 0.10, source="--gates"),
    }


def test_explicit_operators_aliases_and_removal():
    gates = parse_gate_option(" recall@k > 0.5 , chr<0.99, missing=off", NAMES, 5)
    assert gates == {
        "full_recall@5": Gate("full_recall@5", ">", 0.5, source="--gates"),
        "chr": Gate("chr", "<", 0.99, source="--gates"),
        "missing": None,
    }


@pytest.mark.parametrize(
    ("value", "status"),
    [(0.79, Status.FAIL), (0.80, Status.WARN), (0.89, Status.WARN), (0.90, Status.PASS), (None, Status.SKIPPED)],
)
def test_warn_band_and_undefined_values(value, status):
    gate = Gate("precision", ">=", 0.80, warn=0.90)
    [result] = evaluate_gates([gate], {"precision": value}, strict=False)
    assert result.status is status
    assert gates_pass([result]) is (status is not Status.FAIL)


def test_strict_fails_undefined_values():
    [result] = evaluate_gates([Gate("under_refusal", "<=", 0.05)], {"under_refusal": None}, strict=True)
    assert result.status is Status.FAIL


def test_lower_is_better_warn_band():
    gate = Gate("under_refusal", "<=", 0.10, warn=0.05)
    statuses = [evaluate_gates([gate], {"under_refusal": v}, False)[0].status for v in (0.0, 0.07, 0.11)]
    assert statuses == [Status.PASS, Status.WARN, Status.FAIL]


def test_unknown_metric_suggests_the_closest_name(ragscore, isolated):
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "precison=0.8")
    assert (run.status, run.err) == (2, 'ragscore: error: --gates: unknown metric "precison"; did you mean "precision"?\n')


def test_metric_not_computed_with_these_settings(ragscore, isolated):
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "full_recall@7=0.5")
    assert run.status == 2
    assert run.err == 'ragscore: error: --gates: metric "full_recall@7" is not computed with these settings: set k = 7 (--k 7)\n'
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "ndcg@7>=0.5")
    assert run.err == ('ragscore: error: --gates: metric "ndcg@7" is not computed with these settings: '
                       "add 7 to the cutoffs (--cutoffs)\n")
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "ndcg@K>=0.5")
    assert run.err.startswith('ragscore: error: --gates: unknown metric "ndcg@K"')
    assert ragscore("--gold", GOLD, "--trace", TRACE, "--k", "7", "--gates", "full_recall@7=0.5").status == 0


def test_malformed_gate_option(ragscore, isolated):
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "precision 0.8")
    assert run.err == 'ragscore: error: --gates: expected METRIC=VALUE or METRIC>=VALUE (also >, <=, <), got "precision 0.8"\n'
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "precision=high")
    assert run.err == "ragscore: error: --gates: expected a number for \"precision\", got \"high\"\n"


def test_precedence_defaults_pyproject_gates_file_command_line(ragscore, isolated):
    write(isolated / "pyproject.toml", '[tool.ragscore.gates]\nprecision = 0.5\nchr = 0.5\ncontainment = 0.5\n'
                                       '[tool.ragscore.scoring]\nk = 3\n')
    write(isolated / "gates.toml", "[gates]\nchr = 0.6\n")
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "containment=0.7")
    gates = gates_of(run)
    assert gates["precision"] == (">=", 0.5, "pass")    # pyproject over the default 0.80
    assert gates["chr"] == (">=", 0.6, "pass")          # gates.toml over pyproject
    assert gates["containment"] == (">=", 0.7, "pass")  # --gates over pyproject
    assert gates["under_refusal"] == ("<=", 0.05, "pass")  # untouched default
    assert {name: g["source"] for name, g in run.json()["gates"].items()} == {
        "precision": "pyproject.toml", "chr": "gates.toml", "under_refusal": "default",
        "over_refusal": "default", "missing": "default", "containment": "--gates",
    }
    assert run.json()["k"] == 3


def test_gates_file_option_replaces_local_gates_toml(ragscore, isolated):
    write(isolated / "gates.toml", "[gates]\nchr = 0.6\n")
    write(isolated / "other.toml", '[gates]\n"full_recall@5" = { min = 0.5, warn = 0.9 }\nmissing = false\n')
    gates = gates_of(ragscore("--gold", GOLD, "--trace", TRACE, "--gates-file", "other.toml"))
    assert gates["chr"] == (">=", 0.75, "pass")
    assert gates["full_recall@5"] == (">=", 0.5, "pass")
    assert "missing" not in gates


def test_relaxing_the_missing_gate(ragscore, isolated):
    write(isolated / "t.jsonl", [{"qid": "no such question", "answer": "x"}])  # every question missing
    assert ragscore("--gold", GOLD, "--trace", "t.jsonl", "--gates", "missing=off,over=1,precision=off,chr=off").status == 0


@pytest.mark.parametrize(
    ("toml", "error"),
    [
        ("[gates]\nprecision = 0.8\nchr = \n", "gates.toml:3:7: invalid TOML: Invalid value"),
        ("[gates]\n\nprecison = 0.8\n", 'gates.toml:3: unknown metric "precison"; did you mean "precision"?'),
        ("[scoring]\nrefusal_token = ['x']\n", 'gates.toml:2: [scoring] unknown setting "refusal_token"; did you mean "refusal_tokens"?'),
        ("[scoring]\nk = 0\n", "gates.toml:2: [scoring] expected \"k\" to be a positive integer of at most 1,000,000, got 0"),
        ("[scoring]\nstrict = 'yes'\n", "gates.toml:2: [scoring] expected \"strict\" to be true or false, got 'yes'"),
        ("[gate]\nprecision = 0.8\n", 'gates.toml: unknown section "[gate]"; did you mean "[gates]"?'),
        ("[gates]\nprecision = { min = 0.8, warn = 0.7 }\n", 'gates.toml:2: "precision": warn must be at or above the threshold 0.8'),
        ("[gates]\nprecision = { low = 0.8 }\n", "gates.toml:2: \"precision\": expected a table with one of min or max, and optionally warn; got keys ['low']"),
        ("[gates]\nprecision = [0.8]\n", "gates.toml:2: expected a number for \"precision\", got [0.8]"),
    ],
)
def test_settings_file_errors_point_at_the_line(ragscore, isolated, toml, error):
    write(isolated / "gates.toml", toml)
    run = ragscore("--gold", GOLD, "--trace", TRACE)
    assert (run.status, run.err) == (2, f"ragscore: error: {error}\n")


@pytest.mark.parametrize(
    ("toml", "error"),
    [
        # A key written with an escape keeps its line (issue 31: the newline lost it).
        ('[gates]\nprecision = 0.8\n"pre\\ncision" = 0.7\n', r'gates.toml:3: unknown metric "pre\ncision"; did you mean "precision"?'),
        ("[gates]\nprecision = 0.8\n'pre\\ncision' = 0.7\n", r'gates.toml:3: unknown metric "pre\\ncision"; did you mean "precision"?'),
        ('[gates]\n"pre\\u0063isoin" = 0.7\n', 'gates.toml:2: unknown metric "precisoin"; did you mean "precision"?'),
        ('[gates]\nchr = 0.7\n\n[gates."pre\\ncision"]\nmin = 0.7\n', r'gates.toml:4: unknown metric "pre\ncision"; did you mean "precision"?'),
        ('[gates]\n"a\\"b" = 0.7\n', r'gates.toml:2: unknown metric "a\"b"'),
    ],
)
def test_a_key_written_with_escapes_keeps_its_line(ragscore, isolated, toml, error):
    write(isolated / "gates.toml", toml)
    run = ragscore("--gold", GOLD, "--trace", TRACE)
    assert (run.status, run.err) == (2, f"ragscore: error: {error}\n")


def test_a_stage_gate_written_with_escapes_keeps_its_line(ragscore, isolated):
    write(isolated / "gates.toml", '[ner.gates]\nstrict_f1 = 0.5\n"strict\\u005ff2\\n" = 0.7\n')
    run = ragscore("ner", "--gold", EXAMPLES / "stages" / "ner_gold.jsonl", "--pred",
                   EXAMPLES / "stages" / "ner_pred.jsonl")
    assert (run.status, run.err) == (
        2, 'ragscore: error: gates.toml:3: unknown ner metric "strict_f2\\n"; did you mean "strict_f1"?\n')


def test_pyproject_errors_name_their_table_and_line(ragscore, isolated):
    write(isolated / "pyproject.toml", '[tool.mypy]\nstrict = true\n\n[tool.ragscore.scoring]\nstrict = "yes"\n')
    run = ragscore("--gold", GOLD, "--trace", TRACE)
    assert run.err == ('ragscore: error: pyproject.toml:5: [tool.ragscore.scoring] expected "strict" to be true or '
                       "false, got 'yes'\n")
    write(isolated / "pyproject.toml", "[tool.ragscore]\nk = 3\n")
    assert ragscore("--gold", GOLD, "--trace", TRACE).err == (
        'ragscore: error: pyproject.toml: "tool.ragscore.k" is not a table: settings go in "[tool.ragscore.scoring]", '
        'gates in "[tool.ragscore.gates]"\n')


def test_non_finite_or_huge_hybrid_gamma_is_rejected(ragscore, isolated):
    for value in ("inf", "nan", "1e308"):
        write(isolated / "gates.toml", f"[scoring]\nhybrid_gamma = {value}\n")
        run = ragscore("--gold", GOLD, "--trace", TRACE, "--metrics", "retrieval")
        assert run.status == 2 and 'expected "hybrid_gamma" to be a number above 0 and at most 1e+06' in run.err


def test_string_operator_thresholds_and_scoring_knobs(ragscore, isolated):
    write(isolated / "gates.toml", '[scoring]\nrefusal_tokens = ["I cannot say"]\nstrict = true\n'
                                   '[gates]\nprecision = ">= 0.9"\nunder_refusal = "< 0.5"\n')
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--no-fail")
    doc = run.json()
    # "not in context" is no longer a refusal token, so A0002 (unanswerable) counts as answered.
    assert doc["labels"]["HALLUCINATION"] == 1 and doc["under_refusal"] == 1.0
    assert gates_of(run)["under_refusal"] == ("<", 0.5, "fail")
    assert doc["settings"]["refusal_tokens"] == ["I cannot say"] and doc["settings"]["strict"] is True


def test_command_line_refusal_token_adds_to_the_configured_ones(ragscore, isolated):
    write(isolated / "t.jsonl", [{"qid": "A0002", "answer": "  Keine Angabe im Kontext "}])
    doc = ragscore("--gold", GOLD, "--trace", "t.jsonl", "--refusal-token", "keine angabe im kontext", "--no-fail").json()
    assert doc["labels"]["REFUSAL_OK"] == 1
    assert doc["settings"]["refusal_tokens"] == ["not in context", "keine angabe im kontext"]
