"""Score example (b), examples/alt-shape, and check hand-derived labels and rates.

Example (b) uses "the other shape": the gold set is a JSON array with the alias fields
(`q`, `gold_ids`, `gold_claim`), and the traces carry no qid (they are joined by the exact
question text, two of them by `q_id`), list their evidence as `chunks` and put the claim in
`answer` with the citations written at its end as ``citations: [a, b]``.

Every expected value below was worked out by hand from SPEC section 2, not copied from a run.

Rules used in the derivations:
- claim = answer text with the first ``citations: [...]`` span removed, then stripped;
  the cited ids are the bracket content split on commas and white space, quotes stripped.
- refusal = the `refused` field when present, else normalised claim == "not in context".
- gold_claim phrases = maximal runs of ``[alnum][alnum - whitespace]{4,}`` in the casefolded
  gold claim, stripped, length >= 5; punctuation (. , : $ ; ...) ends a phrase.
- H (scoped, default) = every cited id is retrieved, and cited ∩ gold_ids != ∅.
- recall@5: gold_ids ⊆ the first 5 retrieved ids.

Per question (A = answerable, U = unanswerable; "retr" = retrieved ids in order):

LIB-01 A. Joined by text. Cites [doc-2#1], retr doc-2#1,... (in scope, gold) -> H.
       Gold phrases "adult cards", "up to 30 items at once"; the claim contains the second -> C.
       -> OK in both settings. recall hit (doc-2#1 is rank 1). citation share 1/1.
LIB-02 A. Joined by q_id. "Citations: [doc-2#2, doc-2#3]" (capital C still parses); both
       retrieved, doc-2#2 is gold -> H. Phrases: "dvds" is only 4 characters, so "7 days",
       "renewable once"; the claim contains "7 days" -> C. -> OK in both. recall hit.
       citation share 1/2 (doc-2#3 is not gold).
LIB-03 U. Answer "Not in context" -> casefolded equals the token -> refused -> REFUSAL_OK.
       Refused, so compliant although it has no citation list.
LIB-04 U. Answer "not in context citations: []" -> claim "not in context" -> refused
       -> REFUSAL_OK. Compliant (refused, and a citation list is present).
LIB-05 U. Answered ("Yes, the ground-floor café ...") -> HALLUCINATION in both.
       Cites doc-9#1, which is not among its retrieved ids -> fabricated. Compliant (has a list).
LIB-06 A. `refused: true` decides -> OVER_REFUSAL in both. recall hit (doc-1#2 is rank 1).
LIB-07 A. Cites [doc-3#1]: retrieved and gold -> H. Phrase "capped at 5 dollars per item"
       occurs -> C. But the claim contains the forbidden "50 cents" -> FORBIDDEN in both.
       gold_ids = {doc-3#1, doc-3#2}, doc-3#2 never retrieved -> recall miss. share 1/1.
LIB-08 A. No citation list in the answer -> cites nothing, non-compliant, H false (gold is
       non-empty). C true ("study rooms"). -> NO_CITATION_HIT in both. Not in citation
       precision (cites nothing). Gold doc-5#1 is retrieved at rank 6 -> recall miss.
LIB-09 A. chunks is a plain list of ids (one of them the integer 24); "CITATIONS:[doc-2#3]"
       parses; doc-2#3 is gold but NOT retrieved -> fabricated; scoped: H false ->
       NO_CITATION_HIT; unscoped: H true, C true ("renewals") -> OK. recall miss. share 1/1.
LIB-10 A. Joined by q_id. Cites ["doc-4#1"] (quotes stripped): retrieved and gold -> H.
       Phrases "saturday hours", "10 am to 4 pm"; the claim says "10:00 ... 16:00" -> not C.
       -> CLAIM_MISMATCH by default, OK with --no-require-claim. Gold doc-4#3 is at rank 6
       -> recall miss. share 1/1.
LIB-11 A. No trace -> MISSING_TRACE, scored as refused (counts in R ∩ A). recall miss.
LIB-12 A. `citations` list field ["doc-6#1"] (retrieved, gold) -> H; phrase "e-books"
       occurs -> C. -> OK in both. recall hit. share 1/1.

Sets: A = {01,02,06,07,08,09,10,11,12} (9), U = {03,04,05} (3),
S = {01,02,05,07,08,09,10,12} (8), R = {03,04,06,11} (4), S ∩ A = 7 items, traces = 11.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import checked_report
from ragscore.cli import main

EX = Path(__file__).resolve().parents[1] / "examples" / "alt-shape"

ALL_LABELS = (
    "OK",
    "REFUSAL_OK",
    "OVER_REFUSAL",
    "HALLUCINATION",
    "NO_CITATION_HIT",
    "CLAIM_MISMATCH",
    "FORBIDDEN",
    "MISSING_TRACE",
)

DEFAULT_LABELS = {
    "LIB-01": "OK",
    "LIB-02": "OK",
    "LIB-03": "REFUSAL_OK",
    "LIB-04": "REFUSAL_OK",
    "LIB-05": "HALLUCINATION",
    "LIB-06": "OVER_REFUSAL",
    "LIB-07": "FORBIDDEN",
    "LIB-08": "NO_CITATION_HIT",
    "LIB-09": "NO_CITATION_HIT",  # cites gold doc-2#3, which was not retrieved
    "LIB-10": "CLAIM_MISMATCH",  # "10:00 ... 16:00" misses "10 am to 4 pm"
    "LIB-11": "MISSING_TRACE",
    "LIB-12": "OK",
}

RELAXED_LABELS = {
    **DEFAULT_LABELS,
    "LIB-09": "OK",  # scoping off: doc-2#3 hits gold
    "LIB-10": "OK",  # require_claim off: containment no longer needed
}

# H per answered answerable question, in each setting.
DEFAULT_HIT = {
    "LIB-01": True,
    "LIB-02": True,
    "LIB-07": True,
    "LIB-08": False,
    "LIB-09": False,
    "LIB-10": True,
    "LIB-12": True,
}
RELAXED_HIT = {**DEFAULT_HIT, "LIB-09": True}
# C per answered answerable question (it does not depend on the two options).
CONTAINED = {
    "LIB-01": True,
    "LIB-02": True,
    "LIB-07": True,
    "LIB-08": True,
    "LIB-09": True,
    "LIB-10": False,
    "LIB-12": True,
}
ANSWERED = {"LIB-01", "LIB-02", "LIB-05", "LIB-07", "LIB-08", "LIB-09", "LIB-10", "LIB-12"}

# Rates that do not depend on --no-require-claim / --no-scope-citations.
COMMON_RATES = {
    # |S ∩ U| / |U|: LIB-05 answered, LIB-03 and LIB-04 refused.
    "under_refusal": 1 / 3,
    # |R ∩ A| / |A|: LIB-06 (refused field) and LIB-11 (missing trace counts as refused).
    "over_refusal": 2 / 9,
    # |S ∩ A with C| / |A|: 01, 02, 07, 08, 09, 12 (LIB-10 misses; 06 and 11 are not answered).
    "containment": 6 / 9,
    # 11 traces; only LIB-08 neither refuses nor carries a citation list.
    "compliance": 10 / 11,
    # S ∩ A items that cite anything: 01 (1/1), 02 (1/2), 07 (1/1), 09 (1/1), 10 (1/1),
    # 12 (1/1); LIB-08 cites nothing and is left out. Mean = 5.5 / 6.
    "citation_precision": (1 + 1 / 2 + 1 + 1 + 1 + 1) / 6,
    # S items citing an id not among their retrieved ids: LIB-05 (doc-9#1), LIB-09 (doc-2#3).
    "fabricated_citation_rate": 2 / 8,
    # S items containing a forbidden substring: LIB-07 ("50 cents").
    "forbidden_rate": 1 / 8,
    # A items with gold_ids ⊆ top-5 retrieved: 01, 02, 06, 12. Misses: 07 (doc-3#2 never
    # retrieved), 08 (gold at rank 6), 09 (not retrieved), 10 (doc-4#3 at rank 6), 11 (no trace).
    "recall@k": 4 / 9,
}

DEFAULT_RATES = {
    **COMMON_RATES,
    # H ∧ C ∧ not forbidden over S ∩ A: 01, 02, 12. (07 forbidden, 08/09 no hit, 10 no C.)
    "precision": 3 / 8,
    # H over S ∩ A: 01, 02, 07, 10, 12.
    "chr": 5 / 8,
    "chr_answerable": 5 / 9,
}

RELAXED_RATES = {
    **COMMON_RATES,
    # H ∧ not forbidden over S ∩ A: 01, 02, 09, 10, 12.
    "precision": 5 / 8,
    # H over S ∩ A: 01, 02, 07, 09, 10, 12.
    "chr": 6 / 8,
    "chr_answerable": 6 / 9,
}

DEFAULT_COUNTS = {
    "OK": 3,
    "REFUSAL_OK": 2,
    "OVER_REFUSAL": 1,
    "HALLUCINATION": 1,
    "NO_CITATION_HIT": 2,
    "CLAIM_MISMATCH": 1,
    "FORBIDDEN": 1,
    "MISSING_TRACE": 1,
}
RELAXED_COUNTS = {**DEFAULT_COUNTS, "OK": 5, "NO_CITATION_HIT": 1, "CLAIM_MISMATCH": 0}

SETTINGS = {
    "default": ([], DEFAULT_LABELS, DEFAULT_HIT, DEFAULT_RATES, DEFAULT_COUNTS),
    "relaxed": (
        ["--no-require-claim", "--no-scope-citations"],
        RELAXED_LABELS,
        RELAXED_HIT,
        RELAXED_RATES,
        RELAXED_COUNTS,
    ),
}


def run_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: list[str]) -> dict:
    """Run ragscore in-process on example (b) from an empty folder; return the JSON report."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report.json"
    argv = [
        "--gold", str(EX / "gold.json"),
        "--trace", str(EX / "trace.jsonl"),
        "--json", str(out),
        "--format", "none",
        "--no-fail",
        "--per-question",
        *extra,
    ]
    rc = main(argv)
    assert rc == 0
    return checked_report(out.read_text(encoding="utf-8"))


def metric(report: dict, name: str) -> float | None:
    """Read a rate from the report: top-level keys first, then the metrics map."""
    if name in ("precision", "chr", "under_refusal", "over_refusal", "recall@k"):
        return report[name]
    return report["metrics"][name]


@pytest.mark.parametrize("setting", SETTINGS)
def test_labels(setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra, labels, _, _, _ = SETTINGS[setting]
    report = run_example(tmp_path, monkeypatch, extra)
    got = {q["qid"]: q["label"] for q in report["questions"]}
    assert got == labels


@pytest.mark.parametrize("setting", SETTINGS)
def test_label_counts(setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra, _, _, _, counts = SETTINGS[setting]
    report = run_example(tmp_path, monkeypatch, extra)
    got = {label: report["labels"].get(label, 0) for label in ALL_LABELS}
    assert got == counts
    assert sum(report["labels"].values()) == 12


def test_default_run_has_every_label(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = run_example(tmp_path, monkeypatch, [])
    assert {q["label"] for q in report["questions"]} == set(ALL_LABELS)


@pytest.mark.parametrize("setting", SETTINGS)
def test_per_question_flags(setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra, _, hits, _, _ = SETTINGS[setting]
    report = run_example(tmp_path, monkeypatch, extra)
    by_qid = {q["qid"]: q for q in report["questions"]}
    assert {qid for qid, q in by_qid.items() if q["answered"]} == ANSWERED
    for qid in ("LIB-03", "LIB-04", "LIB-06", "LIB-11"):
        assert by_qid[qid]["answered"] is False
    for qid, hit in hits.items():
        assert by_qid[qid]["hit"] is hit, qid
    for qid, contained in CONTAINED.items():
        assert by_qid[qid]["contained"] is contained, qid


@pytest.mark.parametrize("setting", SETTINGS)
def test_counts(setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = SETTINGS[setting][0]
    report = run_example(tmp_path, monkeypatch, extra)
    assert report["answered"] == 8
    assert report["refused"] == 4  # LIB-03, LIB-04, LIB-06 and the missing LIB-11
    assert report["answerable"] == 9
    assert report["unanswerable"] == 3
    counts = report["counts"]
    assert counts["total"] == 12
    assert counts["missing"] == 1
    assert counts["unknown_traces"] == 0
    assert counts["duplicate_traces"] == 0


@pytest.mark.parametrize("setting", SETTINGS)
def test_rates(setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra, _, _, rates, _ = SETTINGS[setting]
    report = run_example(tmp_path, monkeypatch, extra)
    got = {name: metric(report, name) for name in rates}
    assert got == {name: pytest.approx(value, abs=1e-12) for name, value in rates.items()}


@pytest.mark.parametrize("setting", SETTINGS)
def test_metrics_map_agrees_with_top_level(
    setting: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra, _, _, rates, _ = SETTINGS[setting]
    report = run_example(tmp_path, monkeypatch, extra)
    for name in ("precision", "chr", "under_refusal", "over_refusal"):
        assert report["metrics"][name] == pytest.approx(rates[name], abs=1e-12), name
    # In the metrics map the seed-compatible recall@k is called full_recall@K (SPEC §2).
    assert report["metrics"]["full_recall@5"] == pytest.approx(rates["recall@k"], abs=1e-12)


def test_settings_differ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default = run_example(tmp_path, monkeypatch, [])
    relaxed = run_example(tmp_path, monkeypatch, ["--no-require-claim", "--no-scope-citations"])
    before = {q["qid"]: q["label"] for q in default["questions"]}
    after = {q["qid"]: q["label"] for q in relaxed["questions"]}
    changed = {qid for qid in before if before[qid] != after[qid]}
    assert changed == {"LIB-09", "LIB-10"}
    assert relaxed["precision"] > default["precision"]
    assert relaxed["chr"] > default["chr"]
