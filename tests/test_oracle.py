"""Check ragscore against an independent, deliberately naive restatement of SPEC section 2.

The oracle below shares no code with the package: it re-reads the gold and trace objects
itself, with plain loops and sets, and computes every section-2 number the slow, literal way.
Hypothesis then feeds both sides random gold/trace pairs (qid / ``answer_json`` shape) drawn
from small alphabets, so that hits and misses, refusals, duplicates and Unicode look-alikes
all happen often.  Where SPEC is silent, the oracle follows the decisions written in the
docs (docs/design.md: missing trace = refusal, explicit ``refused`` decides, invalid citations never hit, …).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import checked_report
from ragscore.cli import main
from ragscore.settings import DEFAULT_REFUSAL_PATTERNS

DEFAULT_TOKEN = "not in context"

LABELS = [
    "OK",
    "REFUSAL_OK",
    "OVER_REFUSAL",
    "HALLUCINATION",
    "NO_CITATION_HIT",
    "CLAIM_MISMATCH",
    "FORBIDDEN",
    "MISSING_TRACE",
]

# Default gates (SPEC section 4); used only to restate `pass`.
DEFAULT_MIN_GATES = {"precision": 0.80, "chr": 0.75}
DEFAULT_MAX_GATES = {"under_refusal": 0.05, "over_refusal": 0.10}


# --------------------------------------------------------------------------------------------
# The oracle: SPEC section 2 said again, as plainly as possible.
# --------------------------------------------------------------------------------------------


def normalise(text: str) -> str:
    """NFC first, then casefold, as SPEC section 2 says."""
    return unicodedata.normalize("NFC", text).casefold()


PHRASE_PATTERN = re.compile(r"[^\W_](?:[^\W_]|[-\s]){4,}")


def gold_phrases(gold_claim: str) -> list[str]:
    """Return the phrases of a reference claim: maximal runs, stripped, 5 characters or more."""
    phrases = []
    for match in PHRASE_PATTERN.finditer(normalise(gold_claim)):
        phrase = match.group(0).strip()
        if len(phrase) >= 5:
            phrases.append(phrase)
    return phrases


def is_refusal(trace: dict, tokens: list[str]) -> bool:
    """Explicit bool `refused` (top level, then answer_json) decides, else the refusal tokens."""
    if "refused" in trace and isinstance(trace["refused"], bool):
        return trace["refused"]
    answer_json = trace.get("answer_json")
    if isinstance(answer_json, dict):
        if "refused" in answer_json and isinstance(answer_json["refused"], bool):
            return answer_json["refused"]
    claim = normalise(claim_of(trace)).strip()
    for token in tokens:
        # Compared without the white space and quotes around them and final stops (no token drawn
        # here is all stops, which ragscore compares as written).
        if trim_refusal(claim) and trim_refusal(claim) == trim_refusal(normalise(token).strip()):
            return True
    # The default refusal patterns (no settings file here), searched in the normalised claim.
    return any(re.search(p, claim, re.IGNORECASE) for p in DEFAULT_REFUSAL_PATTERNS)


QUOTE_CHARS = "\"'`\u201c\u201d\u201e\u201f\u2018\u2019\u201a\u201b\u00ab\u00bb\u2039\u203a"


def trim_refusal(text: str) -> str:
    """Drop the white space and quotes around ``text``, and with them a final ".", "!" or "\u2026"."""
    return re.sub(f"^[\\s{QUOTE_CHARS}]+|[\\s{QUOTE_CHARS}.!\u2026]+$", "", text)


def claim_of(trace: dict) -> str:
    """Return the claim; a missing or non-string claim is the empty string."""
    answer_json = trace.get("answer_json")
    if not isinstance(answer_json, dict):
        return ""
    claim = answer_json.get("claim")
    if isinstance(claim, str):
        return claim
    return ""


def has_claim(trace: dict) -> bool:
    """Tell whether the trace carries a claim at all (SPEC 1.2: without one there is no hit)."""
    answer_json = trace.get("answer_json")
    return isinstance(answer_json, dict) and isinstance(answer_json.get("claim"), str)


def citations_of(trace: dict) -> tuple[str, list[str]]:
    """Return ("absent" | "invalid" | "valid", citation ids as strings)."""
    answer_json = trace.get("answer_json")
    if not isinstance(answer_json, dict) or "citations" not in answer_json:
        return "absent", []
    raw = answer_json["citations"]
    if not isinstance(raw, list):
        return "invalid", []
    ids = []
    for item in raw:
        if isinstance(item, bool):
            # JSON true/false is not an id (and not an integer in JSON).
            return "invalid", []
        if isinstance(item, str):
            ids.append(item)
        elif isinstance(item, int):
            ids.append(str(item))
        else:
            return "invalid", []
    return "valid", ids


def citation_hit(status: str, cited: list[str], retrieved: list[str], gold_ids: list[str],
                 scope: bool) -> bool:
    """Return H for one answered item."""
    if status == "invalid":
        return False
    if scope:
        for c in cited:
            if c not in retrieved:
                return False
    if len(gold_ids) > 0:
        for c in cited:
            if c in gold_ids:
                return True
        return False
    return cited == []


def contained(gold: dict, claim: str) -> bool:
    """Return C for one answered item."""
    answer = normalise(claim)
    if "gold_claim_substr" in gold:
        substrings = gold["gold_claim_substr"]
        if len(substrings) == 0:
            return True
        for s in substrings:
            ns = normalise(s)
            if len(ns) >= 5 and ns in answer:
                return True
        return False
    if "gold_claim" in gold:
        for phrase in gold_phrases(gold["gold_claim"]):
            if phrase in answer:
                return True
        return False
    return True


def has_forbidden(gold: dict, claim: str) -> bool:
    answer = normalise(claim)
    for f in gold.get("forbidden_substr", []):
        if normalise(f) in answer:
            return True
    return False


def share(numerator: int, denominator: int) -> float | None:
    if denominator == 0:
        return None
    return numerator / denominator


def oracle(gold_items: list[dict], traces: list[dict], k: int, require_claim: bool,
           scope: bool, extra_tokens: list[str]) -> dict:
    """Compute the expected report (section-2 part only) the long way round."""
    tokens = [DEFAULT_TOKEN] + list(extra_tokens)
    gold_qids = [g["qid"] for g in gold_items]

    # Join: the last trace line for a qid counts.
    trace_for: dict[str, dict] = {}
    unknown = 0
    duplicates = 0
    for t in traces:
        if t["qid"] not in gold_qids:
            unknown += 1
            continue
        if t["qid"] in trace_for:
            duplicates += 1
        trace_for[t["qid"]] = t

    rows = []
    for g in gold_items:
        row: dict[str, Any] = {"qid": g["qid"], "answerable": g["answerable"]}
        if g["qid"] not in trace_for:
            row.update(has_trace=False, refused=True, answered=False, retrieved=[],
                       status="absent", cited=[], hit=None, contained=None, forbidden=False,
                       label="MISSING_TRACE")
            rows.append(row)
            continue
        t = trace_for[g["qid"]]
        retrieved = list(t.get("retrieved_ids", []))
        refused = is_refusal(t, tokens)
        claim = claim_of(t)
        status, cited = citations_of(t)
        row.update(has_trace=True, refused=refused, answered=not refused, retrieved=retrieved,
                   status=status, cited=cited, has_claim=has_claim(t))
        # A trace with no claim is an empty, non-compliant answer with no hit (SPEC 1.2).
        hit = has_claim(t) and citation_hit(status, cited, retrieved, g.get("gold_citations", []), scope)
        cont = contained(g, claim)
        forbidden = (not refused) and has_forbidden(g, claim)
        row.update(hit=hit, contained=cont, forbidden=forbidden)
        if not g["answerable"]:
            label = "REFUSAL_OK" if refused else "HALLUCINATION"
        elif refused:
            label = "OVER_REFUSAL"
        elif forbidden:
            label = "FORBIDDEN"
        elif not hit:
            label = "NO_CITATION_HIT"
        elif require_claim and not cont:
            label = "CLAIM_MISMATCH"
        else:
            label = "OK"
        row["label"] = label
        rows.append(row)

    S = [r for r in rows if r["answered"]]
    R = [r for r in rows if r["refused"]]
    A = [r for r in rows if r["answerable"]]
    U = [r for r in rows if not r["answerable"]]
    SA = [r for r in S if r["answerable"]]
    SU = [r for r in S if not r["answerable"]]
    RA = [r for r in R if r["answerable"]]

    correct = 0
    for r in SA:
        if r["hit"] and (r["contained"] or not require_claim) and not r["forbidden"]:
            correct += 1
    hits = len([r for r in SA if r["hit"]])
    contained_count = len([r for r in SA if r["contained"]])

    traced = [r for r in rows if r["has_trace"]]
    compliant = len([r for r in traced if r["refused"] or (r["status"] == "valid" and r["has_claim"])])

    cp_values = []
    for r in SA:
        if r["status"] == "valid" and len(r["cited"]) > 0:
            unique_cited = set(r["cited"])
            gold_ids = set(next(g for g in gold_items if g["qid"] == r["qid"]).get("gold_citations", []))
            cp_values.append(len(unique_cited & gold_ids) / len(unique_cited))
    citation_precision = (sum(cp_values) / len(cp_values)) if cp_values else None

    fabricated = 0
    for r in S:
        if r["status"] == "valid":
            if any(c not in r["retrieved"] for c in r["cited"]):
                fabricated += 1
    forbidden_count = len([r for r in S if r["forbidden"]])

    recalled = 0
    for g in gold_items:
        if not g["answerable"]:
            continue
        retrieved = next(r for r in rows if r["qid"] == g["qid"])["retrieved"]
        top = set(retrieved[:k])
        if set(g.get("gold_citations", [])) <= top:
            recalled += 1

    metrics = {
        "precision": share(correct, len(S)),
        "chr": share(hits, len(S)),
        "chr_answerable": share(hits, len(A)),
        "under_refusal": share(len(SU), len(U)),
        "over_refusal": share(len(RA), len(A)),
        "containment": share(contained_count, len(A)),
        "compliance": share(compliant, len(traced)),
        "citation_precision": citation_precision,
        "fabricated_citation_rate": share(fabricated, len(S)),
        "forbidden_rate": share(forbidden_count, len(S)),
        f"full_recall@{k}": share(recalled, len(A)),
    }
    if S and all(r["status"] == "absent" for r in S):
        # No answered trace writes citations (issue 32): the metrics that need citations are undefined,
        # and precision counts the claims alone. (An empty list is written citations: they cite nothing.)
        metrics.update(chr=None, chr_answerable=None, citation_precision=None, fabricated_citation_rate=None)
        metrics["precision"] = share(len([r for r in SA if r["has_claim"] and not r["forbidden"]
                                          and (r["contained"] or not require_claim)]), len(S))
    missing = len([r for r in rows if not r["has_trace"]])

    passed = missing <= 0
    for name, threshold in DEFAULT_MIN_GATES.items():
        if metrics[name] is not None and not metrics[name] >= threshold:
            passed = False
    for name, threshold in DEFAULT_MAX_GATES.items():
        if metrics[name] is not None and not metrics[name] <= threshold:
            passed = False

    labels = {name: 0 for name in LABELS}
    for r in rows:
        labels[r["label"]] += 1

    return {
        "answered": len(S),
        "refused": len(R),
        "answerable": len(A),
        "unanswerable": len(U),
        "precision": metrics["precision"],
        "chr": metrics["chr"],
        "under_refusal": metrics["under_refusal"],
        "over_refusal": metrics["over_refusal"],
        "recall@k": metrics[f"full_recall@{k}"],
        "k": k,
        "pass": passed,
        "counts": {"total": len(gold_items), "missing": missing,
                   "unknown_traces": unknown, "duplicate_traces": duplicates},
        "metrics": metrics,
        "labels": labels,
        "rows": rows,
    }


# --------------------------------------------------------------------------------------------
# Running ragscore and comparing.
# --------------------------------------------------------------------------------------------


def run_ragscore(gold_items: list[dict], traces: list[dict], *, k: int | None = None,
                 require_claim: bool = True, scope: bool = True,
                 extra_tokens: list[str] = (), gold_as_array: bool = False) -> dict:
    """Write fresh input files in an empty folder, run ragscore there, return the JSON report."""
    previous = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            gold_path = Path(folder) / ("gold.json" if gold_as_array else "gold.jsonl")
            trace_path = Path(folder) / "traces.jsonl"
            out_path = Path(folder) / "report.json"
            if gold_as_array:
                gold_path.write_text(json.dumps(gold_items, ensure_ascii=False), encoding="utf-8")
            else:
                gold_path.write_text(
                    "".join(json.dumps(g, ensure_ascii=False) + "\n" for g in gold_items),
                    encoding="utf-8")
            trace_path.write_text(
                "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in traces), encoding="utf-8")
            argv = ["--gold", str(gold_path), "--trace", str(trace_path), "--json", str(out_path),
                    "--format", "none", "--no-fail", "--per-question"]
            if k is not None:
                argv += ["--k", str(k)]
            if not require_claim:
                argv.append("--no-require-claim")
            if not scope:
                argv.append("--no-scope-citations")
            for token in extra_tokens:
                argv += ["--refusal-token", token]
            rc = main(argv)
            assert rc == 0, f"ragscore exited {rc} on {argv}"
            return checked_report(out_path.read_text(encoding="utf-8"))
        finally:
            os.chdir(previous)


def same_number(actual: Any, expected: float | None) -> bool:
    if expected is None:
        return actual is None
    if actual is None or isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return False
    return math.isclose(actual, expected, rel_tol=0.0, abs_tol=1e-12)


def differences(report: dict, expected: dict) -> list[str]:
    """List every place where the report and the oracle disagree."""
    diffs = []
    for key in ["answered", "refused", "answerable", "unanswerable", "k", "pass"]:
        if report.get(key) != expected[key] or type(report.get(key)) is not type(expected[key]):
            diffs.append(f"{key}: ragscore {report.get(key)!r}, oracle {expected[key]!r}")
    for key in ["precision", "chr", "under_refusal", "over_refusal", "recall@k"]:
        if not same_number(report.get(key), expected[key]):
            diffs.append(f"{key}: ragscore {report.get(key)!r}, oracle {expected[key]!r}")
    counts = report.get("counts", {})
    for key, value in expected["counts"].items():
        if counts.get(key) != value:
            diffs.append(f"counts.{key}: ragscore {counts.get(key)!r}, oracle {value!r}")
    metrics = report.get("metrics", {})
    for key, value in expected["metrics"].items():
        if key not in metrics:
            diffs.append(f"metrics.{key}: missing from the report")
        elif not same_number(metrics[key], value):
            diffs.append(f"metrics.{key}: ragscore {metrics[key]!r}, oracle {value!r}")
    labels = report.get("labels", {})
    for key, value in expected["labels"].items():
        if labels.get(key, 0) != value:
            diffs.append(f"labels.{key}: ragscore {labels.get(key)!r}, oracle {value!r}")
    for key in labels:
        if key not in expected["labels"] and labels[key]:
            diffs.append(f"labels.{key}: unexpected label with count {labels[key]!r}")

    questions = report.get("questions", [])
    by_qid = {q.get("qid"): q for q in questions}
    if len(questions) != len(expected["rows"]) or set(by_qid) != {r["qid"] for r in expected["rows"]}:
        diffs.append(f"questions: ragscore qids {[q.get('qid') for q in questions]!r}, "
                     f"oracle {[r['qid'] for r in expected['rows']]!r}")
    for row in expected["rows"]:
        q = by_qid.get(row["qid"])
        if q is None:
            continue
        for key in ["label", "answered", "refused"]:
            if q.get(key) != row[key]:
                diffs.append(f"{row['qid']}.{key}: ragscore {q.get(key)!r}, oracle {row[key]!r}")
        if row["answered"]:
            # H and C are defined for every answered item (SPEC section 2).
            for key in ["hit", "contained"]:
                if q.get(key) != row[key]:
                    diffs.append(f"{row['qid']}.{key}: ragscore {q.get(key)!r}, oracle {row[key]!r}")
    return diffs


# --------------------------------------------------------------------------------------------
# Random gold/trace pairs from small alphabets.
# --------------------------------------------------------------------------------------------

QIDS = ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7", "Q8"]
UNKNOWN_QIDS = ["Z9", "q1"]  # "q1" is not "Q1": qids are matched exactly
IDS = ["p1", "p2", "p3", "P1", "1", "2"]
FRAGMENTS = [
    "alpha", "ALPHA", "beta", "Gamma-ray", "Straße", "STRASSE", "strasse", "\u00c9t\u00e9",
    "E\u0301te\u0301", "paris", "PARIS", "42", " ", "  ", "-", "_", ",", ".", "x", "ab",
    "not in context",
]
WORDS = ["alpha beta ", "Été court", "gamma-ray burst", "straße-nord", "x_y", "São Paulo", "IBM.",
         # casefold lengthens these: "İ" -> "i" + U+0307, and "ǰ" -> "j" + U+030C, which stays
         # two characters because NFC comes before casefold
         "İstanbul", "ǰabc", "naïve café"]
EXTRA_TOKENS = ["Straße unbekannt", "  Je ne sais pas ", "E\u0301chec"]
REFUSAL_LOOKALIKES = [
    "not in context", "  Not In Context ", "NOT IN CONTEXT", "not in context\n", "\tnot in CONTEXT",
    "not  in context", "not in context.", "not in", "STRASSE UNBEKANNT", "straße unbekannt ",
    "je ne sais pas", "\u00c9CHEC", "e\u0301chec", "Echec",
]
ODD_REFUSED = [None, "yes", 1, 0, "true"]

text_from_fragments = st.lists(st.sampled_from(FRAGMENTS), max_size=4).map("".join)
small_text = st.one_of(
    text_from_fragments,
    st.text(alphabet="ab -_.ßSsEÉe\u0301x1ǰ", max_size=8),
)
# Reference claims: several words, so that phrases (runs of 5+ characters) are common.
claim_text = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS + WORDS), min_size=1, max_size=5).map("".join),
    small_text,
)
non_empty_text = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=3).map("".join),
    st.text(alphabet="ab -_.ßSsEÉe\u0301x1ǰ", min_size=1, max_size=6),
)
# A forbidden substring of white space only is an input error (it would match nearly every claim).
forbidden_text = non_empty_text.filter(lambda text: normalise(text).strip() != "")


@st.composite
def gold_items(draw: st.DrawFn, qid: str) -> dict:
    item: dict[str, Any] = {"qid": qid, "question": f"question {qid}?"}
    item["answerable"] = draw(st.booleans())
    substr_mode = draw(st.sampled_from(["absent", "absent", "empty", "list", "list"]))
    if substr_mode == "empty":
        item["gold_claim_substr"] = []
    elif substr_mode == "list":
        # Padding with white space checks that entries are not stripped.
        padded = st.tuples(st.sampled_from(["", "", " "]), small_text, st.sampled_from(["", "", " "]))
        item["gold_claim_substr"] = draw(st.lists(padded.map("".join), min_size=1, max_size=3))
    if draw(st.integers(0, 2)) > 0:
        item["gold_claim"] = draw(claim_text)
    item["gold_citations"] = draw(st.lists(st.sampled_from(IDS), max_size=3))
    if draw(st.booleans()):
        item["forbidden_substr"] = draw(st.lists(forbidden_text, min_size=1, max_size=2))
    return item


def strip_accents(text: str) -> str:
    """Drop combining marks ("São" -> "Sao"): a look-alike that must not match."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


# Ways to disguise a piece of gold text inside a claim (generator only, not oracle logic).
CASE_CHANGES = [str, str.upper, str.lower, str.swapcase, str.title]
FORM_CHANGES = [
    str,
    lambda t: unicodedata.normalize("NFD", t),  # same text, other normal form: NFC equates them
    lambda t: unicodedata.normalize("NFC", t),
    strip_accents,
    lambda t: t.replace("ß", "SS"),  # casefold equates these, lower() does not
    lambda t: t.replace("ss", "ß").replace("SS", "ß"),
]


@st.composite
def claims(draw: st.DrawFn, gold: dict | None) -> str:
    """Draw a claim; often built from pieces of the gold strings so containment is true."""
    pieces: list[str] = []
    if gold is not None:
        # the text that decides containment first, then the forbidden substrings
        if "gold_claim_substr" in gold:
            pieces += gold["gold_claim_substr"]
        elif "gold_claim" in gold:
            pieces.append(gold["gold_claim"])
        pieces += gold.get("forbidden_substr", [])
    kind = draw(st.sampled_from(["token", "fragments", "gold", "gold", "gold", "gold"]))
    if kind == "token":
        return draw(st.sampled_from(REFUSAL_LOOKALIKES))
    if kind == "fragments" or not pieces:
        return draw(text_from_fragments)
    piece = draw(st.sampled_from(pieces))
    cut = draw(st.sampled_from(["whole", "slice", "part"]))
    if cut == "slice":
        start = draw(st.integers(0, len(piece)))
        end = draw(st.integers(start, len(piece)))
        piece = piece[start:end]
    elif cut == "part":
        # one part between punctuation, often where a phrase ends
        piece = draw(st.sampled_from(re.split(r"[.,_]", piece)))
    if draw(st.booleans()):
        piece = piece.strip()
    piece = draw(st.sampled_from(CASE_CHANGES))(piece)
    piece = draw(st.sampled_from(FORM_CHANGES))(piece)
    prefix = draw(st.sampled_from(["", "", "x", " ", "a"]))
    suffix = draw(st.sampled_from(["", "", "x", " ", "."]))
    if draw(st.integers(0, 3)) == 0:
        prefix = draw(text_from_fragments) + prefix
    return prefix + piece + suffix


@st.composite
def traces_for(draw: st.DrawFn, qid: str, gold: dict | None) -> dict:
    trace: dict[str, Any] = {"qid": qid}
    gold_ids = gold.get("gold_citations", []) if gold is not None else []
    # Gold ids are drawn more often, so that hits (and full recall) happen.
    id_pool = st.sampled_from(IDS + gold_ids * 2) if gold_ids else st.sampled_from(IDS)
    trace["retrieved_ids"] = draw(st.lists(id_pool, max_size=5))
    refused_mode = draw(st.sampled_from(["none"] * 6 + ["top", "inner", "both", "odd"]))
    answer_json: dict[str, Any] = {}
    if refused_mode in ("top", "both"):
        trace["refused"] = draw(st.booleans())
    if refused_mode in ("inner", "both"):
        answer_json["refused"] = draw(st.booleans())
    if refused_mode == "odd":
        where = draw(st.sampled_from(["top", "inner"]))
        (trace if where == "top" else answer_json)["refused"] = draw(st.sampled_from(ODD_REFUSED))

    claim_mode = draw(st.sampled_from(["text"] * 8 + ["absent", "null", "number", "list"]))
    if claim_mode == "text":
        answer_json["claim"] = draw(claims(gold))
    elif claim_mode == "null":
        answer_json["claim"] = None
    elif claim_mode == "number":
        answer_json["claim"] = 42
    elif claim_mode == "list":
        answer_json["claim"] = ["alpha"]

    citation_mode = draw(st.sampled_from(["list"] * 6 + ["absent", "string", "ints", "invalid"]))
    if citation_mode == "list":
        if trace["retrieved_ids"] and draw(st.booleans()):
            # cite only what was retrieved (so scoping rarely decides)
            answer_json["citations"] = draw(st.lists(st.sampled_from(trace["retrieved_ids"]), max_size=3))
        else:
            answer_json["citations"] = draw(st.lists(id_pool, max_size=3))
    elif citation_mode == "string":
        answer_json["citations"] = draw(st.sampled_from(IDS))
    elif citation_mode == "ints":
        answer_json["citations"] = draw(st.lists(st.one_of(id_pool, st.sampled_from([1, 2, 3])),
                                                 min_size=1, max_size=3))
    elif citation_mode == "invalid":
        bad = draw(st.sampled_from([None, 1.5, True, False, ["p1"], {"id": "p1"}]))
        good = draw(st.lists(id_pool, max_size=2))
        position = draw(st.integers(0, len(good)))
        answer_json["citations"] = good[:position] + [bad] + good[position:]

    # Key order of answer_json does not matter; keep claim first for readable examples.
    trace["answer_json"] = dict(sorted(answer_json.items(), key=lambda kv: kv[0] != "claim"))
    return trace


@st.composite
def scenarios(draw: st.DrawFn) -> dict:
    n = draw(st.integers(1, 8))
    qids = draw(st.lists(st.sampled_from(QIDS), min_size=n, max_size=n, unique=True))
    gold = [draw(gold_items(q)) for q in qids]
    gold_by_qid = {g["qid"]: g for g in gold}
    # Most gold items get a trace; some get several lines (the last counts); a few lines are
    # for qids the gold set does not know.  The lines are then shuffled.
    trace_qids = [q for q in qids if draw(st.integers(0, 9)) < 8]
    trace_qids += draw(st.lists(st.sampled_from(qids), max_size=3))
    trace_qids += draw(st.lists(st.sampled_from(UNKNOWN_QIDS), max_size=2))
    trace_qids = draw(st.permutations(trace_qids)) or [UNKNOWN_QIDS[0]]  # a run of no trace is an input error
    traces = [draw(traces_for(q, gold_by_qid.get(q))) for q in trace_qids]
    return {
        "gold": gold,
        "traces": traces,
        "k": draw(st.integers(1, 5)),
        "require_claim": draw(st.booleans()),
        "scope": draw(st.booleans()),
        "extra_tokens": draw(st.lists(st.sampled_from(EXTRA_TOKENS), max_size=2, unique=True)),
        "gold_as_array": draw(st.booleans()),
    }


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_ragscore_agrees_with_naive_oracle(case: dict) -> None:
    report = run_ragscore(case["gold"], case["traces"], k=case["k"],
                          require_claim=case["require_claim"], scope=case["scope"],
                          extra_tokens=case["extra_tokens"], gold_as_array=case["gold_as_array"])
    expected = oracle(case["gold"], case["traces"], case["k"], case["require_claim"],
                      case["scope"], case["extra_tokens"])
    diffs = differences(report, expected)
    assert not diffs, "\n".join(diffs)


@st.composite
def text_scenarios(draw: st.DrawFn) -> dict:
    """Many answered items per run, each decided by the text rules only (H is always true)."""
    n = draw(st.integers(1, 8))
    separators = st.sampled_from(["", " ", ".", ",", "_", " - ", ". ", "  "])
    reference = st.lists(st.tuples(st.sampled_from(WORDS + FRAGMENTS), separators),
                         min_size=1, max_size=4).map(lambda parts: "".join(a + b for a, b in parts))
    gold, traces = [], []
    for qid in QIDS[:n]:
        item: dict[str, Any] = {"qid": qid, "question": f"question {qid}?",
                                "answerable": draw(st.integers(0, 4)) > 0, "gold_citations": []}
        mode = draw(st.sampled_from(["substr", "claim", "claim", "empty"]))
        if mode == "substr":
            # entries near the 5-character limit, where the order NFC-then-casefold matters
            edge = st.sampled_from(["ǰabc", "ǰabc", "abcd", "İstb", "ßabc"])
            padded = st.tuples(st.sampled_from(["", " "]), st.one_of(reference, small_text, edge, edge),
                               st.sampled_from(["", " "])).map("".join)
            item["gold_claim_substr"] = draw(st.lists(padded, min_size=1, max_size=2))
        elif mode == "empty":
            item["gold_claim_substr"] = []
        if mode == "claim" or draw(st.booleans()):
            item["gold_claim"] = draw(reference)
        if draw(st.integers(0, 3)) == 0:
            item["forbidden_substr"] = draw(st.lists(forbidden_text, min_size=1, max_size=2))
        gold.append(item)
        traces.append({"qid": qid, "retrieved_ids": [],
                       "answer_json": {"claim": draw(claims(item)), "citations": []}})
    return {
        "gold": gold,
        "traces": traces,
        "require_claim": draw(st.booleans()),
        "extra_tokens": draw(st.lists(st.sampled_from(EXTRA_TOKENS), max_size=2, unique=True)),
    }


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_scenarios())
def test_text_rules_agree_with_naive_oracle(case: dict) -> None:
    report = run_ragscore(case["gold"], case["traces"], require_claim=case["require_claim"],
                          extra_tokens=case["extra_tokens"])
    expected = oracle(case["gold"], case["traces"], 5, case["require_claim"], True,
                      case["extra_tokens"])
    diffs = differences(report, expected)
    assert not diffs, "\n".join(diffs)


# --------------------------------------------------------------------------------------------
# Hand-written examples for the trickiest rules (expected values worked out by hand).
# --------------------------------------------------------------------------------------------


def labels_of(report: dict) -> dict[str, str]:
    return {q["qid"]: q["label"] for q in report["questions"]}


def test_refusal_token_ignores_case_and_surrounding_whitespace() -> None:
    gold = [
        {"qid": "U1", "question": "u1", "answerable": False, "gold_citations": []},
        {"qid": "U2", "question": "u2", "answerable": False, "gold_citations": []},
        {"qid": "A1", "question": "a1", "answerable": True, "gold_citations": ["p1"]},
        {"qid": "U3", "question": "u3", "answerable": False, "gold_citations": []},
    ]
    traces = [
        # odd case and padding: still the token
        {"qid": "U1", "retrieved_ids": [], "answer_json": {"claim": "  Not In Context ", "citations": []}},
        # a final question mark makes it an answer (a full stop would not: issue 32)
        {"qid": "U2", "retrieved_ids": [], "answer_json": {"claim": "Not in context?", "citations": []}},
        # explicit refused=false beats the token
        {"qid": "A1", "retrieved_ids": ["p1"], "refused": False,
         "answer_json": {"claim": "NOT IN CONTEXT", "citations": ["p1"]}},
        # added token, matched after NFC + casefold ("ß" casefolds to "ss")
        {"qid": "U3", "retrieved_ids": [], "answer_json": {"claim": "STRASSE UNBEKANNT", "citations": []}},
    ]
    report = run_ragscore(gold, traces, extra_tokens=["Straße unbekannt"])
    assert labels_of(report) == {"U1": "REFUSAL_OK", "U2": "HALLUCINATION", "A1": "OK",
                                 "U3": "REFUSAL_OK"}
    assert report["answered"] == 2 and report["refused"] == 2
    assert report["under_refusal"] == pytest.approx(1 / 3, abs=1e-12)
    # Without the added token the U3 claim is an answer.
    report = run_ragscore(gold, traces)
    assert labels_of(report)["U3"] == "HALLUCINATION"


def test_gold_substrings_shorter_than_five_characters_never_match() -> None:
    gold = [
        # "ab" is too short, "Paris" matches case-insensitively
        {"qid": "Q1", "question": "1", "answerable": True, "gold_claim_substr": ["ab", "Paris"],
         "gold_citations": ["p1"]},
        # every entry too short: C is false even though "abcd" is in the claim
        {"qid": "Q2", "question": "2", "answerable": True, "gold_claim_substr": ["ab", "cd"],
         "gold_citations": ["p1"]},
        # "  abc" is 5 characters with its spaces, and the spaces must be there in the claim
        {"qid": "Q3", "question": "3", "answerable": True, "gold_claim_substr": ["  abc"],
         "gold_citations": ["p1"]},
        {"qid": "Q4", "question": "4", "answerable": True, "gold_claim_substr": ["  abc"],
         "gold_citations": ["p1"]},
        # an empty list: nothing to check
        {"qid": "Q5", "question": "5", "answerable": True, "gold_claim_substr": [],
         "gold_citations": ["p1"]},
    ]
    claims_by_qid = {"Q1": "AB in PARIS", "Q2": "abcd", "Q3": "x  abc", "Q4": "abc", "Q5": "zzz"}
    traces = [{"qid": q, "retrieved_ids": ["p1"], "answer_json": {"claim": c, "citations": ["p1"]}}
              for q, c in claims_by_qid.items()]
    report = run_ragscore(gold, traces)
    assert labels_of(report) == {"Q1": "OK", "Q2": "CLAIM_MISMATCH", "Q3": "OK",
                                 "Q4": "CLAIM_MISMATCH", "Q5": "OK"}
    assert report["metrics"]["containment"] == pytest.approx(3 / 5, abs=1e-12)
    assert report["precision"] == pytest.approx(3 / 5, abs=1e-12)
    assert report["chr"] == 1.0
    report = run_ragscore(gold, traces, require_claim=False)
    assert report["precision"] == 1.0
    assert report["metrics"]["containment"] == pytest.approx(3 / 5, abs=1e-12)


def test_phrase_rule_on_gold_claim_with_punctuation() -> None:
    # "only domain example.com is allowed." has the phrases "only domain example" and
    # "com is allowed" (the full stops cut the runs).  "x_yz, 12-34 5" has only "12-34 5"
    # ("_" and "," are not in the run class).  "abcd  ," has one run "abcd  ", which strips
    # to "abcd" (4 characters), so there is no phrase and C is false.
    gold = [
        {"qid": "P1", "question": "1", "answerable": True,
         "gold_claim": "Only domain example.com is allowed.", "gold_citations": []},
        {"qid": "P2", "question": "2", "answerable": True,
         "gold_claim": "Only domain example.com is allowed.", "gold_citations": []},
        {"qid": "P3", "question": "3", "answerable": True,
         "gold_claim": "Only domain example.com is allowed.", "gold_citations": []},
        {"qid": "P4", "question": "4", "answerable": True,
         "gold_claim": "x_yz, 12-34 5", "gold_citations": []},
        {"qid": "P5", "question": "5", "answerable": True,
         "gold_claim": "abcd  ,", "gold_citations": []},
        {"qid": "P6", "question": "6", "answerable": True,
         "gold_claim": "x_yz, 12-34 5", "gold_citations": []},
    ]
    claims_by_qid = {
        "P1": "Domain example.com",              # neither phrase
        "P2": "the COM IS ALLOWED list",         # second phrase
        "P3": "ONLY DOMAIN EXAMPLE",             # first phrase
        "P4": "see 12-34 5",                     # the only phrase
        "P5": "abcd  ,",                         # no phrase at all
        "P6": "x_yz",                            # not a phrase
    }
    traces = [{"qid": q, "retrieved_ids": [], "answer_json": {"claim": c}} for q, c in claims_by_qid.items()]
    report = run_ragscore(gold, traces)
    assert labels_of(report) == {"P1": "CLAIM_MISMATCH", "P2": "OK", "P3": "OK", "P4": "OK",
                                 "P5": "CLAIM_MISMATCH", "P6": "CLAIM_MISMATCH"}
    assert report["metrics"]["containment"] == pytest.approx(3 / 6, abs=1e-12)
    assert report["chr"] is None  # no trace cites anything: undefined (issue 32), though each question is a hit


def test_scope_citations() -> None:
    gold = [
        {"qid": "S1", "question": "1", "answerable": True, "gold_claim_substr": [],
         "gold_citations": ["p1"]},
        {"qid": "S2", "question": "2", "answerable": True, "gold_claim_substr": [],
         "gold_citations": ["p1"]},
        {"qid": "S3", "question": "3", "answerable": True, "gold_claim_substr": [],
         "gold_citations": ["p1"]},
    ]
    traces = [
        # cites the gold id, which was never retrieved
        {"qid": "S1", "retrieved_ids": ["p2"], "answer_json": {"claim": "c", "citations": ["p1"]}},
        # cites the gold id (retrieved) and an id that was not retrieved
        {"qid": "S2", "retrieved_ids": ["p1"], "answer_json": {"claim": "c", "citations": ["p1", "p9"]}},
        # all within the retrieved ids
        {"qid": "S3", "retrieved_ids": ["p2", "p1"],
         "answer_json": {"claim": "c", "citations": ["p1", "p2"]}},
    ]
    scoped = run_ragscore(gold, traces)
    assert labels_of(scoped) == {"S1": "NO_CITATION_HIT", "S2": "NO_CITATION_HIT", "S3": "OK"}
    assert scoped["chr"] == pytest.approx(1 / 3, abs=1e-12)
    assert scoped["metrics"]["fabricated_citation_rate"] == pytest.approx(2 / 3, abs=1e-12)
    # citation precision: S1 1/1, S2 1/2, S3 1/2
    assert scoped["metrics"]["citation_precision"] == pytest.approx(2 / 3, abs=1e-12)
    # recall@5: S1 retrieved [p2] -> miss, S2 [p1] -> hit, S3 [p2, p1] -> hit
    assert scoped["k"] == 5
    assert scoped["recall@k"] == pytest.approx(2 / 3, abs=1e-12)
    # recall@1: S3's top 1 is [p2] -> miss
    unscoped = run_ragscore(gold, traces, scope=False, k=1)
    assert labels_of(unscoped) == {"S1": "OK", "S2": "OK", "S3": "OK"}
    assert unscoped["chr"] == 1.0
    assert unscoped["metrics"]["fabricated_citation_rate"] == pytest.approx(2 / 3, abs=1e-12)
    assert unscoped["recall@k"] == pytest.approx(1 / 3, abs=1e-12)
    assert unscoped["metrics"]["full_recall@1"] == pytest.approx(1 / 3, abs=1e-12)
