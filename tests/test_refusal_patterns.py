"""Refusal patterns: regular expressions that make a claim a refusal (issue 14); the defaults and
refusal tokens matched without quotes and final stops (issue 32).

``[scoring] refusal_patterns`` and ``--refusal-pattern``: searched (``re.search``) in the claim as
the refusal tokens see it (NFC, case-folded, stripped), ignoring case, only when the trace has no
explicit ``refused`` field and the claim is not a refusal token. Unless a settings file says
otherwise they are ``DEFAULT_REFUSAL_PATTERNS`` (``refusal_patterns = []``: none); a command line's
patterns add to them, so the tests of what a pattern of its own does turn them off (``OFF``).
"""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import write
from ragscore.config import Overrides, load_config
from ragscore.metrics.answer import judge_for, score_question
from ragscore.settings import (
    DEFAULT_REFUSAL_PATTERNS,
    Settings,
    compile_refusal_patterns,
    refusal_form,
    refusal_pattern_problem,
)
from ragscore.starter import STARTER_GATES

GOLD = [
    {"qid": "A1", "question": "Where is the tower?", "answerable": True, "gold_claim_substr": ["in paris"],
     "gold_citations": ["d1"]},
    {"qid": "U1", "question": "What is the tower's secret?", "answerable": False},
    {"qid": "U2", "question": "Who owns the moon?", "answerable": False},
    {"qid": "U3", "question": "What is the moon made of?", "answerable": False},
]


def _trace(qid: str, claim: str, **extra: object) -> dict[str, object]:
    return {"qid": qid, "retrieved_ids": ["d1"], "answer_json": {"claim": claim, "citations": [], **extra}}


OFF = "[scoring]\nrefusal_patterns = []\n"  # no default patterns: only the command line's


def _questions(ragscore, *args: object) -> dict[str, dict[str, object]]:
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--no-fail", "-q", *args)
    assert run.status == 0, run.err
    return {q["qid"]: q for q in run.json()["questions"]}


# --- bad patterns ---------------------------------------------------------------------------


def test_a_pattern_that_does_not_compile_is_an_error_at_its_line(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("A1", "in paris")])
    write(isolated / "gates.toml", "[scoring]\nk = 5\nrefusal_patterns = [\n    'i don.?t know',\n"
                                   "    \"i (do not|don't know\",\n]\nstrict = false\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.out) == (2, "")
    assert run.err == ('ragscore: error: gates.toml:5: [scoring] "refusal_patterns" entry "i (do not|don\'t know": '
                       "not a valid regular expression: missing ), unterminated subpattern at position 2\n")


def test_pyproject_patterns_are_checked_too(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("A1", "in paris")])
    write(isolated / "pyproject.toml", "[project]\nname = 'x'\n\n[tool.ragscore.scoring]\n"
                                       "refusal_patterns = ['a{2,1}']\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.err == ('ragscore: error: pyproject.toml:5: [tool.ragscore.scoring] "refusal_patterns" entry "a{2,1}": '
                       "not a valid regular expression: min repeat greater than max repeat at position 2\n")


@pytest.mark.parametrize(("value", "message"), [
    ('"i don.?t know"', 'expected "refusal_patterns" to be a list of non-empty strings'),
    ('["ok", 3]', 'expected "refusal_patterns" to be a list of non-empty strings'),
    ('["ok", "  "]', 'expected "refusal_patterns" to be a list of non-empty strings'),
    ("['i don.?t know|']",
     '"refusal_patterns" entry "i don.?t know|": matches empty text, so almost every claim would be a refusal'),
    ("['x*']", '"refusal_patterns" entry "x*": matches empty text, so almost every claim would be a refusal'),
    (r"['\d{99999999999}']",
     r'"refusal_patterns" entry "\\d{99999999999}": not a valid regular expression: the repetition number is too large'),
    (r"['\q']", r'"refusal_patterns" entry "\\q": not a valid regular expression: bad escape \q at position 0'),
    ("['" + "(" * 1200 + ")" * 1200 + "']",
     '"refusal_patterns" entry "' + "(" * 80 + "…[2,280 characters]…" + ")" * 40
     + '": not a valid regular expression: groups nested too deeply'),
])
def test_bad_pattern_lists_in_a_settings_file(ragscore, isolated, value, message):
    write(isolated / "gates.toml", f"[scoring]\n\nrefusal_patterns = {value}\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, f"ragscore: error: gates.toml:3: [scoring] {message}\n")


@pytest.mark.parametrize(("pattern", "message"), [
    ("i (do not|don't know", "not a valid regular expression: missing ), unterminated subpattern at position 2"),
    ("(?<=a+)b", "not a valid regular expression: look-behind requires fixed-width pattern"),
    ("x(?i)", "not a valid regular expression: global flags not at the start of the expression at position 1"),
    ("", "expected a regular expression, got blank text"),
    ("  ", "expected a regular expression, got blank text"),
    ("(no information)?", "matches empty text, so almost every claim would be a refusal"),
])
def test_a_bad_pattern_on_the_command_line_is_a_one_line_usage_error(ragscore, isolated, pattern, message):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("A1", "in paris")])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--refusal-pattern", "ok", "--refusal-pattern", pattern)
    assert (run.status, run.out) == (2, "")
    assert run.err == f"ragscore: error: --refusal-pattern {json.dumps(pattern)}: {message}\n"


def test_the_command_line_is_checked_before_the_settings_file(ragscore, isolated):
    write(isolated / "gates.toml", "[scoring]\nrefusal_patterns = ['(']\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--refusal-pattern", ")")
    assert run.err.startswith('ragscore: error: --refusal-pattern ")": not a valid regular expression: unbalanced')


# --- patterns that can take exponential time (issue 31) ---------------------------------------

EXPONENTIAL = "matching it can take time exponential in the claim's length"
NESTED = "holds a repeat of varying count (?, *, +, {m,n}): " + EXPONENTIAL
ALIKE = "holds alternatives that can start alike or match nothing: " + EXPONENTIAL


@pytest.mark.parametrize(("pattern", "problem"), [
    ("^(a+)+$", f"a repeated group at position 1 {NESTED}"),
    ("(a*)*", f"a repeated group at position 0 {NESTED}"),
    ("i (?:a?a)+ know", f"a repeated group at position 2 {NESTED}"),
    (r"(?:\w+\s?)+$", f"a repeated group at position 0 {NESTED}"),
    ("(?:a+){2,20}", f"a repeated group at position 0 {NESTED}"),  # bounded, but a power of 20
    ("x(a{1,2}){3,}", f"a repeated group at position 1 {NESTED}"),
    ("x((a+)+)y", f"a repeated group at position 1 {NESTED}"),  # the group that holds it
    ("^(a|a)*$", f"a repeated group at position 1 {ALIKE}"),  # re's parser makes it a(?:|): empty branches
    ("(?:i|i don.t)+ know", f"a repeated group at position 0 {ALIKE}"),
    (r"(?:.|\s)*x", f"a repeated group at position 0 {ALIKE}"),  # "." is any character
    ("(?:no|)+ idea", f"a repeated group at position 0 {ALIKE}"),  # an empty branch
    ("(?:S|ſ)+x", None),  # one class to re's parser: it cannot backtrack
    ("(?:s|ſx)+x", f"a repeated group at position 0 {ALIKE}"),  # ſ is s, ignoring case
    # No repeat, but ways that multiply: (?:a|a) written 30 times ran for minutes on 33 characters
    ("(?:a|a)" * 30 + "c", f"it can try more than 256 ways at each place in the claim (alternatives that can start alike, optional pieces x?, one after another): {EXPONENTIAL}"),
    ("a?" * 9 + "a" * 9, f"it can try more than 256 ways at each place in the claim (alternatives that can start alike, optional pieces x?, one after another): {EXPONENTIAL}"),
    ("(?:a|a)" * 8 + "c", None),  # 256 ways: within the bound
    (r"(no)\1", f"a back-reference (\\1 or (?P=name)) at position 4: {EXPONENTIAL}"),
    ("(?P<w>no) (?P=w)", f"a back-reference (\\1 or (?P=name)) at position 10: {EXPONENTIAL}"),
])
def test_a_pattern_that_can_take_exponential_time_is_refused_at_its_position(pattern, problem):
    assert refusal_pattern_problem(pattern) == problem


ADVERSARIAL = ["a" * 40 + "!", "ab" * 20 + "!", " " * 40 + "!", "i don't " * 5 + "!"]


@pytest.mark.parametrize("pattern", [
    r"\bi (do not|don.?t) know\b", "(?:a+)?x", "(?>a+)+x", "(?:a++)+x", "(?:ab|ac)+x", "(?:[a-z]|[0-9])+!x",
    r"(?:(?!not)\w)+x", "(?:x(?=a+))+", "(?:a{2}){3,}x", r"^(?:\w|\s)+x", "(a)(?(1)b|c)+x", "no (?:relevant )?idea",
    "(?:a|a)" * 8 + "c", r"i\s?don.?t\s?know\s?(?:the|an)?\s?answer",
])
def test_patterns_the_rule_accepts_search_the_worst_claims_quickly(pattern):
    import time

    assert refusal_pattern_problem(pattern) is None
    compiled = re.compile(pattern, re.IGNORECASE)
    started = time.perf_counter()
    for claim in ADVERSARIAL:
        compiled.search(claim)
    assert time.perf_counter() - started < 1.0  # an exponential one takes hours on 40 characters


def test_exponential_patterns_are_refused_wherever_patterns_come_from(ragscore, isolated, monkeypatch):
    import ragscore as rs
    from ragscore.errors import UsageError

    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("U1", "a" * 33 + "!")])  # the claim that hangs ^(a+)+$
    expected = f"a repeated group at position 1 {NESTED}"
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--refusal-pattern", "^(a+)+$")
    assert (run.status, run.out, run.err) == (2, "", f'ragscore: error: --refusal-pattern "^(a+)+$": {expected}\n')
    run = ragscore("monitor", "--trace", "t.jsonl", "--refusal-pattern", "^(a+)+$")
    assert (run.status, run.err) == (2, f'ragscore: error: --refusal-pattern "^(a+)+$": {expected}\n')
    write(isolated / "gates.toml", "[scoring]\nrefusal_patterns = [\n    'ok',\n    '^(a+)+$',\n]\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, 'ragscore: error: gates.toml:4: [scoring] "refusal_patterns" entry '
                                        f'"^(a+)+$": {expected}\n')
    Path("gates.toml").unlink()
    write(isolated / "s.toml", "[tasks.qa]\ncommand = \"score\"\ngold = \"g.jsonl\"\ntrace = \"t.jsonl\"\n"
                               "refusal_pattern = '^(a+)+$'\n")
    run = ragscore("run", "s.toml")
    assert (run.status, run.err) == (2, f'ragscore: error: s.toml:5: [tasks.qa] refusal_pattern: "^(a+)+$": {expected}\n')
    with pytest.raises(UsageError) as caught:
        rs.score("g.jsonl", "t.jsonl", refusal_patterns=["^(a+)+$"])
    assert str(caught.value) == f"refusal_patterns: '^(a+)+$': {expected}"
    # Patterns that reach the matcher some other way (a partial's settings) are checked there too.
    with pytest.raises(UsageError) as caught:
        compile_refusal_patterns(("ok", "^(a+)+$"))
    assert str(caught.value) == f'refusal pattern "^(a+)+$": {expected}'


def test_a_long_pattern_is_refused_without_a_position_quickly():
    import time

    started = time.perf_counter()
    assert refusal_pattern_problem("x" * 995 + "(a+)+") == f"a repeated group at position 995 {NESTED}"
    assert refusal_pattern_problem("x" * 996 + "(a+)+") == f"a repeated group {NESTED}"  # longer than 1,000: not placed
    assert time.perf_counter() - started < 2.0


# --- matching -------------------------------------------------------------------------------


def test_matching_semantics(ragscore, isolated):
    write(isolated / "g.jsonl", [
        {"qid": f"Q{i}", "question": f"q{i}?", "answerable": False} for i in range(10)
    ])
    write(isolated / "gates.toml", OFF)
    write(isolated / "t.jsonl", [
        _trace("Q0", "Sorry, I DON'T KNOW that."),            # search, not fullmatch; case
        _trace("Q1", "I don\u2019t know"),                    # a typographic apostrophe, matched by "."
        _trace("Q2", "Ich wei\u00df es nicht"),               # case folding: "ß" reads "ss"
        _trace("Q3", "Cafe\u0301 unknown"),                   # NFC: a decomposed é matches a composed one
        _trace("Q4", "   nothing at all   "),                 # anchors see the stripped claim
        _trace("Q5", "I don't know", refused=False),          # an explicit field decides
        {**_trace("Q6", "i don't know"), "refused": False},   # the top-level one too
        _trace("Q7", "Not in context"),                       # a token stays a token
        _trace("Q8", "The tower is tall."),                   # no pattern: answered
        _trace("Q9", "well, nothing at all"),                 # ^ anchors at the start of the claim
    ])
    found = _questions(ragscore, "--refusal-pattern", "I DON.?T KNOW", "--refusal-pattern", "weiss es",
                       "--refusal-pattern", "caf\u00e9 unknown", "--refusal-pattern", "^nothing at all$",
                       "--refusal-pattern", "context")
    refused = {qid: q["refused"] for qid, q in found.items()}
    assert refused == {"Q0": True, "Q1": True, "Q2": True, "Q3": True, "Q4": True, "Q5": False, "Q6": False,
                       "Q7": True, "Q8": False, "Q9": False}
    prefix = "unanswerable and refused: the claim matches the refusal pattern "
    assert found["Q0"]["reason"] == prefix + '"I DON.?T KNOW"'
    assert found["Q2"]["reason"] == prefix + '"weiss es"'
    assert found["Q3"]["reason"] == prefix + '"caf\u00e9 unknown"'
    assert found["Q4"]["reason"] == prefix + '"^nothing at all$"'
    assert found["Q7"]["reason"] == "unanswerable and refused: the claim is a refusal token"
    assert found["Q5"]["label"] == found["Q8"]["label"] == "HALLUCINATION"


def test_the_first_matching_pattern_is_named_and_an_answerable_refusal_is_over_refusal(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("A1", "No relevant information in the context.")])
    write(isolated / "gates.toml", OFF)
    found = _questions(ragscore, "--refusal-pattern", "in the (context|documents)",
                       "--refusal-pattern", "no (relevant )?information")
    assert found["A1"]["label"] == "OVER_REFUSAL"
    assert found["A1"]["reason"] == 'answerable but refused: the claim matches the refusal pattern "in the (context|documents)"'


def test_a_pattern_refusal_is_scored_exactly_as_a_token_refusal(ragscore, isolated):
    """Same metrics and labels as a run where each refusing claim is a refusal token."""
    claims = ["I don't know.", "in paris [d1]", "I don't know either", "The moon is cheese.", "in paris"]
    write(isolated / "g.jsonl", GOLD + [{"qid": "A2", "question": "q?", "answerable": True,
                                        "gold_claim_substr": ["in paris"], "gold_citations": ["d1"]}])
    write(isolated / "t.jsonl", [{"qid": q["qid"], "retrieved_ids": ["d1"],
                                  "answer_json": {"claim": c, "citations": ["d1"]}}
                                 for q, c in zip(GOLD + [{"qid": "A2"}], claims, strict=True)])
    by_pattern = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "-q", "--per-question",
                          "--refusal-pattern", "^i don.t know").json()
    by_token = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "-q", "--per-question",
                        "--refusal-token", "I don't know.", "--refusal-token", "i don't know either").json()
    for doc in (by_pattern, by_token):
        for key in ("signature", "settings", "inputs"):
            doc.pop(key, None)
        for q in doc["questions"]:
            q.pop("reason")
    assert by_pattern == by_token
    assert by_pattern["labels"]["OVER_REFUSAL"] == 1 and by_pattern["labels"]["REFUSAL_OK"] == 1


def test_no_patterns_costs_nothing_per_question():
    assert judge_for(Settings(refusal_patterns=())) is score_question
    assert judge_for(Settings(refusal_patterns=("x",))) is not score_question


def test_patterns_are_compiled_once():
    one = Settings(refusal_patterns=("i don.?t know",))
    assert one.refusal_regexes() is Settings(refusal_patterns=("i don.?t know",)).refusal_regexes()
    assert one.refusal_regexes()[0].flags & re.IGNORECASE


# A small alphabet so that patterns, tokens and explicit fields collide often.
_WORDS = ["I", "don't", "DON\u2019T", "know", "not", "in", "context", "Stra\u00dfe", "strasse", "e\u0301", "\u00e9", " ",
          "context.", "\u201c", "'", "!", "?"]
_PATTERNS = ["know", "^i don.t", "strasse$", "\u00e9", "not in", r"\bin\b", "^$"]


def _oracle_refused(trace: dict, tokens: list[str], patterns: list[str]) -> tuple[bool, str]:
    for where in (trace, trace["answer_json"]):
        if isinstance(where.get("refused"), bool):
            return where["refused"], "field"
    claim = unicodedata.normalize("NFC", trace["answer_json"]["claim"]).casefold().strip()
    # Tokens and claims compared without the quotes and spaces around them and final stops.
    trim = re.compile("^[\\s\"'`\u201c\u201d\u201e\u201f\u2018\u2019\u201a\u201b\u00ab\u00bb\u2039\u203a]*|"
                      "[\\s\"'`\u201c\u201d\u201e\u201f\u2018\u2019\u201a\u201b\u00ab\u00bb\u2039\u203a.!\u2026]*$")
    if trim.sub("", claim) in {trim.sub("", unicodedata.normalize("NFC", t).casefold()) for t in tokens}:
        return True, "token"
    for p in patterns:
        if re.search(p, claim, re.IGNORECASE):
            return True, p
    return False, ""


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    claims=st.lists(st.lists(st.sampled_from(_WORDS), max_size=5).map(" ".join), min_size=1, max_size=8),
    fields=st.lists(st.sampled_from([None, True, False]), min_size=8, max_size=8),
    patterns=st.lists(st.sampled_from(_PATTERNS), min_size=1, max_size=3, unique=True),
)
def test_refusals_agree_with_a_plain_restatement(ragscore, tmp_path_factory, claims, fields, patterns):
    folder = tmp_path_factory.mktemp("p")
    gold = [{"qid": f"Q{i}", "question": f"q{i}?", "answerable": i % 2 == 0, "gold_claim_substr": ["know"],
             "gold_citations": []} for i in range(len(claims))]
    traces = [_trace(f"Q{i}", c, **({} if fields[i] is None else {"refused": fields[i]})) for i, c in enumerate(claims)]
    write(folder / "g.jsonl", gold)
    write(folder / "t.jsonl", traces)
    write(folder / "off.toml", OFF)
    args = ["--gold", folder / "g.jsonl", "--trace", folder / "t.jsonl", "--per-question", "--no-fail", "-q",
            "--gates-file", folder / "off.toml"]
    for p in patterns:
        args += ["--refusal-pattern", p]
    run = ragscore(*args)
    assert run.status == 0, run.err
    for q, trace in zip(run.json()["questions"], traces, strict=True):
        refused, by = _oracle_refused(trace, ["not in context"], patterns)
        assert q["refused"] is refused, (q, trace)
        if refused and by not in ("field", "token"):
            assert q["reason"].endswith(f"refused: the claim matches the refusal pattern {json.dumps(by, ensure_ascii=False)}")


# --- explanations, settings and parallel runs ------------------------------------------------


def test_explain_names_the_pattern_and_what_it_matched(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("A1", "in paris", citations=["d1"]), _trace("U1", "Sorry, I don\u2019t know!")])
    write(isolated / "gates.toml", OFF)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--explain", "U1", "--explain", "A1",
                   "--refusal-pattern", r"\bi don.?t know\b", "--refusal-pattern", "no information", "--no-fail")
    assert run.status == 0
    assert run.out.split("\n\n")[0].splitlines() == [
        "qid: U1",
        'question: "What is the tower\'s secret?"',
        "answerable: no",
        r'label: REFUSAL_OK: unanswerable and refused: the claim matches the refusal pattern "\\bi don.?t know\\b"',
        "trace: t.jsonl line 2",
        'claim (normalised): "sorry, i don\u2019t know!"',
        r'refusal: yes, the claim matches the refusal pattern "\\bi don.?t know\\b" (it matched "i don' "\u2019" 't know")',
        "citations (from answer_json.citations): empty list",
        "gold citations: none; 1 ids retrieved, k = 5",
    ]
    assert ('refusal: no, the claim is not a refusal token ("not in context") and matches no refusal pattern '
            r'("\\bi don.?t know\\b", "no information")') in run.out.split("\n\n")[1].splitlines()


def test_explain_without_patterns_is_unchanged(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("A1", "in paris", citations=["d1"])])
    write(isolated / "gates.toml", OFF)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--explain", "A1")
    assert 'refusal: no, the claim is not a refusal token ("not in context")\n' in run.out


def test_settings_and_signature_record_the_patterns(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("A1", "in paris")])
    write(isolated / "gates.toml", "[scoring]\nrefusal_patterns = ['i don.?t know', 'stra\u00dfe\\b']\n")
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "-q",
                   "--refusal-pattern", "no information", "--refusal-pattern", "i don.?t know").json()
    # The file's list, then the command line's additions, each once.
    assert doc["settings"]["refusal_patterns"] == ["i don.?t know", "stra\u00dfe\\b", "no information"]
    assert '|refusal_patterns:["i don.?t know", "stra\u00dfe\\\\b", "no information"]|' in doc["signature"]
    # No settings file: the defaults, in full in the settings and by name in the signature; an empty
    # list: none, which the signature says (a report scored before the defaults has no such part).
    plain = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "-q", "--gates-file", "/dev/null").json()
    assert plain["settings"]["refusal_patterns"] == list(DEFAULT_REFUSAL_PATTERNS)
    assert "|metrics:answer|refusal_patterns:default|ci:" in plain["signature"]
    write(isolated / "gates.toml", OFF)
    off = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "-q").json()
    assert off["settings"]["refusal_patterns"] == [] and "|metrics:answer|refusal_patterns:[]|ci:" in off["signature"]


def test_a_later_settings_file_replaces_the_patterns(isolated):
    write(isolated / "pyproject.toml", "[tool.ragscore.scoring]\nrefusal_patterns = ['a+b']\n")
    assert load_config(Overrides()).settings.refusal_patterns == ("a+b",)
    write(isolated / "gates.toml", "[scoring]\nrefusal_patterns = ['c+d']\n")
    config = load_config(Overrides(refusal_patterns=("e+f", "c+d")))
    assert config.settings.refusal_patterns == ("c+d", "e+f")


def test_parallel_runs_give_the_same_report_with_patterns(ragscore, isolated):
    from test_parallel import _make

    _make(isolated, n=3000)
    outputs = []
    for jobs in ("1", "2"):
        run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--jobs", jobs, "--per-question", "--bootstrap", "50",
                       "--refusal-pattern", "^secret", "--refusal-pattern", r"fact \d*7 stra(ss|ß)e", "--no-fail",
                       "--markdown", f"r{jobs}.md")
        outputs.append((run.status, run.out, run.err, (isolated / f"r{jobs}.md").read_text()))
    assert outputs[0] == outputs[1]
    reasons = [q["reason"] for q in json.loads(outputs[0][1])["questions"]]
    assert any(r.endswith('the claim matches the refusal pattern "^secret"') for r in reasons)
    assert any(r.endswith(r'the claim matches the refusal pattern "fact \\d*7 stra(ss|ß)e"') for r in reasons)


# --- validate, init and the docs --------------------------------------------------------------


def test_validate_warns_about_a_gold_claim_that_matches_a_pattern(ragscore, isolated):
    write(isolated / "g.jsonl", [
        {"qid": "A1", "answerable": True, "gold_claim": "No information leaks to third parties.", "gold_citations": ["d1"]},
        {"qid": "A2", "answerable": True, "gold_claim_substr": ["paris is big"], "gold_citations": ["d1"]},
        {"qid": "U1", "answerable": False, "gold_claim": "No information"},
    ])
    write(isolated / "gates.toml", "[scoring]\nrefusal_patterns = ['^no (relevant )?information']\n")
    run = ragscore("validate", "--gold", "g.jsonl")
    assert run.out == ('g.jsonl:1: warning: the gold claim of an answerable item matches the refusal pattern '
                       '"^no (relevant )?information"\n')
    write(isolated / "gates.toml", "[scoring]\nrefusal_patterns = ['(']\n")
    assert ragscore("validate", "--gold", "g.jsonl").err.startswith(
        'ragscore: error: gates.toml:2: [scoring] "refusal_patterns" entry "(": not a valid regular expression:')


def _uncommented_starter() -> str:
    lines, inside = [], False
    for line in STARTER_GATES.splitlines():
        if line.startswith("# refusal_patterns = ["):
            inside = True
        if inside:
            line = line.removeprefix("# ")
            inside = line != "]"
        lines.append(line)
    return "\n".join(lines) + "\n"


REFUSALS = [
    "I don't know.", "I don\u2019t know the answer to that.", "I do not know", "Sorry, I cannot tell from these sources.",
    "The answer is not mentioned in the context.", "This is not found in the provided documents.",
    "It is not stated in the sources.", "I cannot answer this question.", "I'm unable to find that in the passages.",
    "I couldn\u2019t find it.", "There is no relevant information about it.", "No information is available.",
    "The context does not mention the price.", "The documents do not contain an answer.", "The context doesn't say.",
    "Unfortunately, the context does not mention it.", "Based on the provided context, I cannot determine the answer.",
    "The CEO's shoe size is not mentioned in the provided context.", '"I don\'t know."',
    "Insufficient information to answer.", "There is not enough context to say.",
    "I don't have enough information to answer.", "I do not have the data.",
]
ANSWERS = [
    # answers that hedge part of themselves: the default patterns are anchored at the claim's start
    "Refunds are accepted within 30 days of purchase, though I can't say whether sale items count.",
    "Ada Lovelace founded it; there is no information about the year.", "The port is 8420; the docs do not mention TLS.",
    "The Eiffel Tower is in Paris [d1].", "The warranty does not cover water damage.", "The drug does not contain gluten.",
    "Knowledge graphs store facts.", "It is mentioned in chapter 3 that the price is 10 euros.",
    "Information retrieval is the task.", "The contextual model is better.", "Nowhere else: only in Berlin.",
]


def test_init_writes_a_commented_starter_list_that_works_once_uncommented(ragscore, isolated):
    assert ragscore("init").status == 0
    written = (isolated / "gates.toml").read_text(encoding="utf-8")
    assert written == STARTER_GATES and "\n# refusal_patterns = [\n" in written
    # Commented: the defaults, which are the commented list.
    assert load_config(Overrides()).settings.refusal_patterns == DEFAULT_REFUSAL_PATTERNS

    (isolated / "gates.toml").write_text(_uncommented_starter(), encoding="utf-8")
    assert load_config(Overrides()).settings.refusal_patterns == DEFAULT_REFUSAL_PATTERNS
    patterns = load_config(Overrides()).settings.refusal_regexes()
    assert len(patterns) == 7
    claims = {c: unicodedata.normalize("NFC", c).casefold().strip() for c in REFUSALS + ANSWERS}
    assert [c for c in REFUSALS if not any(p.search(claims[c]) for p in patterns)] == []
    assert [c for c in ANSWERS if any(p.search(claims[c]) for p in patterns)] == []


def test_the_uncommented_starter_scores_refusals(ragscore, isolated):
    (isolated / "gates.toml").write_text(_uncommented_starter(), encoding="utf-8")
    write(isolated / "g.jsonl", [{"qid": f"U{i}", "answerable": False} for i in range(len(REFUSALS))])
    write(isolated / "t.jsonl", [_trace(f"U{i}", c) for i, c in enumerate(REFUSALS)])
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "-q").json()
    assert doc["labels"]["REFUSAL_OK"] == len(REFUSALS) and doc["under_refusal"] == 0.0


def test_the_docs_settings_example_loads_with_its_pattern(isolated):
    from docs import doc_section

    toml = doc_section("Gates and settings").split("```toml\n", 1)[1].split("```", 1)[0]
    write(isolated / "gates.toml", toml)
    settings_ = load_config(Overrides()).settings
    assert settings_.refusal_patterns == (r"\bi don.?t know\b",)
    assert settings_.refusal_regexes()[0].search("well, i don't know")


def test_the_docs_error_and_reason_examples_are_true(ragscore, isolated):
    from docs import doc_section

    readme = " ".join(doc_section("Gates and settings").split())
    write(isolated / "gates.toml", "[scoring]\nk = 5\nrefusal_patterns = [\n    \"i (do not|don't know\",\n]\n")
    error = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl").err.removeprefix("ragscore: error: ").rstrip("\n")
    assert f"(`{error}`)" in readme
    Path("gates.toml").unlink()
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("A1", "I don't know")])
    reason = _questions(ragscore)["A1"]["reason"]  # the default patterns
    assert f"(`{reason}`," in readme
    slow = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--refusal-pattern", "^(a+)+$").err
    assert f"(`{slow.removeprefix('ragscore: error: ').rstrip()}`)" in readme


def test_a_pattern_re_warns_about_prints_no_warning(ragscore, isolated):
    import warnings

    # re warns "Possible nested set" (a FutureWarning) about "[[": a line of stderr that is no message of ragscore's.
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("U1", "[no] idea")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--refusal-pattern", r"[[]no\] idea", "-q",
                       "--per-question", "--no-fail")
    assert run.status == 0 and run.json()["questions"][1]["label"] == "REFUSAL_OK"
    assert [str(w.message) for w in caught] == []


# --- refusals as models write them (issue 32) -------------------------------------------------

TOKEN_REFUSAL = "unanswerable and refused: the claim is a refusal token"


@pytest.mark.parametrize(("claim", "refused"), [
    ("Not in context.", True),                  # a final full stop
    ('"Not in context."', True),                # quotes around, the stop inside them
    ('"not in context".', True),                # ... or outside
    ("\u201cNot in context\u2026\u201d", True),  # typographic quotes and an ellipsis
    ("\u00ab not in context \u00bb", True),     # guillemets, spaces inside them
    ("'not in context'!", True),
    ("not in context...!!", True),              # a run of stops
    ("\u00a0not in context.\u3000", True),      # any white space str.strip() removes
    ("not in context?", False),                 # a question back is not the token's statement
    ("not in context,", False),                 # nor a sentence cut short
    ("not in context;", False),
    ("not in context:", False),
    ("(not in context)", False),                # brackets are no quotes
    ("not  in context.", False),                # the inside is compared as it is
    (".not in context", False),                 # a stop only at the end
])
def test_a_token_matches_a_claim_without_quotes_spaces_and_final_stops(ragscore, isolated, claim, refused):
    write(isolated / "g.jsonl", [{"qid": "U1", "question": "q?", "answerable": False}])
    write(isolated / "t.jsonl", [_trace("U1", claim)])
    write(isolated / "gates.toml", OFF)  # the token alone decides
    question = _questions(ragscore)["U1"]
    assert question["refused"] is refused
    assert question["reason"] == (TOKEN_REFUSAL if refused else "unanswerable but answered")


def test_a_token_is_trimmed_as_the_claim_is(ragscore, isolated):
    claims = ["i dunno", "I dunno!", "\u2018I dunno\u2019", "...", " ... ", "", ".", "\u2026", "I dunno?"]
    write(isolated / "g.jsonl", [{"qid": f"U{i}", "question": f"q{i}?", "answerable": False}
                                 for i in range(len(claims))])
    write(isolated / "t.jsonl", [_trace(f"U{i}", c) for i, c in enumerate(claims)])
    write(isolated / "gates.toml", OFF)
    # A token written with its stop and quotes; one that is all stops matches itself, so that no
    # claim that trims to nothing (an empty claim, a lone ".") is a refusal by it.
    found = _questions(ragscore, "--refusal-token", '"I dunno."', "--refusal-token", "...")
    assert [found[f"U{i}"]["refused"] for i in range(len(claims))] == [True, True, True, True, True, False, False,
                                                                       False, False]
    settings_ = Settings(refusal_tokens=('"I dunno."', "...", " \u201c \u201d "), refusal_patterns=())
    assert settings_.refusal_forms() == frozenset({"i dunno", "...", "\u201c \u201d"})


def test_the_trimmed_white_space_is_what_str_strip_removes():
    import ragscore.settings as module

    assert module._SPACE == "".join(c for c in map(chr, range(0x110000)) if c.isspace())
    assert refusal_form(' \t\u201c"I don\u2019t know."\u201d \n') == "I don\u2019t know"
    assert refusal_form("?not in context?") == "?not in context?"


def test_the_default_patterns_are_the_starter_list_and_pass_the_backtracking_check():
    from ragscore.backtracking import backtracking_problem

    assert Settings().refusal_patterns == DEFAULT_REFUSAL_PATTERNS and len(DEFAULT_REFUSAL_PATTERNS) == 7
    assert [p for p in DEFAULT_REFUSAL_PATTERNS if backtracking_problem(p) or refusal_pattern_problem(p)] == []
    assert tuple(tomllib.loads(_uncommented_starter())["scoring"]["refusal_patterns"]) == DEFAULT_REFUSAL_PATTERNS


# LangChain's stock RetrievalQA ("stuff") prompt, langchain/chains/question_answering/stuff_prompt.py
# (langchain_classic/... in LangChain 1.x): "Use the following pieces of context to answer the
# question at the end. If you don't know the answer, just say that you don't know, don't try to make
# up an answer." A model that follows it answers "I don't know." -- with its full stop.
RETRIEVALQA_REFUSAL = "I don't know."
DEFAULT_FIRST = '"I don\'t know"'


def test_retrievalqa_stock_refusal_is_a_refusal_with_no_option_given(ragscore, isolated):
    import ragscore as rs

    write(isolated / "g.jsonl", GOLD)
    traces = [_trace("U1", RETRIEVALQA_REFUSAL), _trace("A1", RETRIEVALQA_REFUSAL), _trace("U2", "The moon is cheese.")]
    write(isolated / "t.jsonl", traces)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--no-fail", "-q")
    found = {q["qid"]: q for q in run.json()["questions"]}
    assert (found["U1"]["label"], found["U1"]["reason"]) == (
        "REFUSAL_OK", "unanswerable and refused: the claim matches the default refusal pattern " + DEFAULT_FIRST)
    assert (found["A1"]["label"], found["U2"]["label"]) == ("OVER_REFUSAL", "HALLUCINATION")
    assert run.json()["under_refusal"] == 1 / 3 and run.json()["over_refusal"] == 1.0  # U3: no trace, a refusal
    # The Python API, with records: the same.
    api = rs.score([json.loads(line) for line in (isolated / "g.jsonl").read_text().splitlines()], traces,
                   per_question=True)
    assert [q["label"] for q in api.questions()] == ["OVER_REFUSAL", "REFUSAL_OK", "HALLUCINATION", "MISSING_TRACE"]
    # Turned off: a hallucination, and a note says why and what would make it a refusal.
    write(isolated / "gates.toml", OFF)
    off = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--no-fail", "--format", "none")
    assert [line for line in off.err.splitlines() if "like refusals" in line] == [(
        "ragscore: 2 answered claims read like refusals but match no refusal token or pattern (scored as answers; "
        "refusal_patterns = [] turned the default patterns off): U1, A1; if they are refusals, add "
        '--refusal-pattern "^i don.?t know" (or a [scoring] refusal_patterns entry)')]
    again = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--refusal-pattern", "^i don.?t know", "--no-fail",
                     "--format", "none")
    assert "read like" not in again.err and "reads like" not in again.err


def test_an_empty_list_in_pyproject_turns_the_defaults_off_and_a_later_file_can_bring_them_back(isolated):
    write(isolated / "pyproject.toml", "[tool.ragscore.scoring]\nrefusal_patterns = []\n")
    assert load_config(Overrides()).settings.refusal_patterns == ()
    assert load_config(Overrides(refusal_patterns=("x+y",))).settings.refusal_patterns == ("x+y",)
    write(isolated / "gates.toml", "[scoring]\nk = 5\n")  # names no patterns: pyproject's stand
    assert load_config(Overrides()).settings.refusal_patterns == ()
    write(isolated / "gates.toml", _uncommented_starter())
    assert load_config(Overrides()).settings.refusal_patterns == DEFAULT_REFUSAL_PATTERNS


def test_the_api_refuses_an_empty_pattern_list_that_would_turn_nothing_off(isolated):
    import ragscore as rs
    from ragscore.errors import UsageError

    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("U1", RETRIEVALQA_REFUSAL)])
    with pytest.raises(UsageError) as caught:
        rs.score("g.jsonl", "t.jsonl", refusal_patterns=[])
    assert str(caught.value) == (
        "refusal_patterns: expected patterns to add to those of the settings files (the default ones unless a file "
        "lists its own), got an empty list: to use none, write refusal_patterns = [] under [scoring] in a settings "
        "file (config=load_config(path))")
    write(isolated / "off.toml", OFF)
    run = rs.score("g.jsonl", "t.jsonl", config=rs.load_config("off.toml"))
    assert run.labels["HALLUCINATION"] == 1 and run.settings["refusal_patterns"] == []


REFUSAL_LIKE = [  # claims that begin as refusals do and that no default pattern matches
    ("I'm afraid the passages say nothing about it.", "^i.?m afraid"),
    ("Unfortunately, that is not covered.", "^unfortunately"),
    ("\u201cSorry, no idea.\u201d", "\\\\bsorry"),
    ("Based on the provided context, I was unable to locate it.", "\\\\bi was unable"),
    ("I am not sure.", "^i am not sure"),
    ("The context doesn\u2019t cover it.", "^the context doesn.?t"),
]


def test_one_note_names_answers_that_read_like_refusals(ragscore, isolated):
    claims = [c for c, _ in REFUSAL_LIKE] + ["In Paris [d1].", "The context does not mention it.", "Paris, sorry."]
    write(isolated / "g.jsonl", [{"qid": f"U{i}", "question": f"q{i}?", "answerable": False}
                                 for i in range(len(claims))])
    write(isolated / "t.jsonl", [_trace(f"U{i}", c) for i, c in enumerate(claims)]
          + [_trace("U0", "I'm afraid I cannot say.", refused=False)])  # an explicit field: no note for it
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none")
    notes = [line for line in run.err.splitlines() if "like refusals" in line or "like a refusal" in line]
    assert notes == [
        "ragscore: 6 answered claims read like refusals but match no refusal token or pattern (scored as answers): "
        'e.g. U0, U1, U2, U3, U4; if they are refusals, add --refusal-pattern "^i.?m afraid" (or a [scoring] '
        "refusal_patterns entry)"]
    # Each suggestion is a pattern that is accepted and makes its claim a refusal.
    from ragscore.metrics.answer import refusal_like

    for claim, pattern in REFUSAL_LIKE:
        suggested = refusal_like(claim)
        assert suggested == pattern.replace("\\\\", "\\")
        assert refusal_pattern_problem(suggested) is None
        assert re.search(suggested, unicodedata.normalize("NFC", claim).casefold().strip(), re.IGNORECASE)
    assert [refusal_like(c) for c in claims[len(REFUSAL_LIKE):]] == [None, "^the context does not", None]


def test_the_note_survives_partials_and_merge(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"U{i}", "question": f"q{i}?", "answerable": False} for i in range(4)])
    write(isolated / "t.jsonl", [_trace(f"U{i}", f"I'm afraid not ({i}).") for i in range(4)])
    def note(err: str) -> list[str]:
        return [line for line in err.splitlines() if "like refusals" in line]

    [whole] = note(ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none").err)
    assert whole.startswith("ragscore: 4 answered claims read like refusals") and "U0, U1, U2, U3;" in whole
    for i in (1, 2):
        assert ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", f"{i}/2", "-o", f"p{i}.json",
                        "-q").status == 0
    assert note(ragscore("merge", "p1.json", "p2.json", "--no-fail", "--format", "none").err) == [whole]


def test_a_baseline_report_from_before_the_defaults_is_refused(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("U1", RETRIEVALQA_REFUSAL)])
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "-q").json()
    # A report written before issue 32 had no refusal_patterns part when it had none.
    doc["signature"] = doc["signature"].replace("|refusal_patterns:default", "")
    write(isolated / "old.json", json.dumps(doc))
    run = ragscore("compare", "--gold", "g.jsonl", "--baseline-report", "old.json", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: old.json: the baseline report was scored with other "
                                        "settings (refusal_patterns: [] vs default)\n")


def test_monitor_counts_the_default_refusals(ragscore, isolated):
    write(isolated / "t.jsonl", [{**_trace("Q1", RETRIEVALQA_REFUSAL), "ts": 1_700_000_000},
                                 {**_trace("Q2", "In Paris."), "ts": 1_700_000_001}])
    doc = json.loads(ragscore("monitor", "--trace", "t.jsonl").out)
    assert doc["metrics"]["refusal_rate"] == 0.5 and "|refusal_patterns:default|" in doc["signature"]
    write(isolated / "gates.toml", OFF)
    doc = json.loads(ragscore("monitor", "--trace", "t.jsonl").out)
    assert doc["metrics"]["refusal_rate"] == 0.0 and "|refusal_patterns:[]|" in doc["signature"]


def test_the_docs_note_example_is_true(ragscore, isolated):
    from docs import doc_section

    readme = " ".join(doc_section("Refusals").split())
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace("U1", "I'm afraid not."), _trace("U2", "I'm afraid the passages say nothing.")])
    err = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none").err
    [note] = [line for line in err.splitlines() if "like refusals" in line]
    assert f"(`{note}`)" in readme


def test_patterns_that_do_not_combine_into_one_search_are_searched_one_by_one(ragscore, isolated):
    from ragscore.settings import refusal_screen

    # The alternation of all patterns finds whether any matches in one search; two patterns that
    # name one group cannot be joined, and each is searched on its own, with the same outcome.
    assert refusal_screen(DEFAULT_REFUSAL_PATTERNS) is not None and refusal_screen(()) is None
    named = ("(?P<w>abc)d", "(?P<w>xyz)w")
    assert refusal_screen(named) is None
    write(isolated / "g.jsonl", [{"qid": f"U{i}", "question": f"q{i}?", "answerable": False} for i in range(3)])
    write(isolated / "t.jsonl", [_trace("U0", "ABCD"), _trace("U1", "so xyzw"), _trace("U2", "abc")])
    write(isolated / "gates.toml", OFF)
    found = _questions(ragscore, "--refusal-pattern", named[0], "--refusal-pattern", named[1])
    assert [found[q]["refused"] for q in ("U0", "U1", "U2")] == [True, True, False]
    assert found["U1"]["reason"] == 'unanswerable and refused: the claim matches the refusal pattern "(?P<w>xyz)w"'
