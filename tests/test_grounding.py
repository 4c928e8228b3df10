"""The grounding checks' pure functions (issue 34; metrics/grounding.py): quotes and numbers.

Properties, on random passages: a quote cut from a passage verifies whatever its typography;
changing a letter of it or inserting "not" verifies only where the changed text is itself in the
passage (the check is exact, after folding); a number copied from its evidence is supported; one
with a changed digit or another unit class is not.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ragscore.metrics.figures import numbers, supports, unsupported
from ragscore.metrics.grounding import MISATTRIBUTED, SHORT, UNVERIFIED, VERIFIED, judge_quote, quotes
from ragscore.text import fold, fold_text

WORDS = st.lists(st.sampled_from(["the", "river", "Rhine", "flows", "north", "it's", "well-known", "city", "of",
                                  "Basel", "and", "\u00e9t\u00e9", "Stra\u00dfe", "report", "said"]),
                 min_size=6, max_size=30)
# Typography a model may change in a quote it copies: quotes, apostrophes, dashes, case and spacing.
TYPOGRAPHY = {"'": ["\u2019", "\u2018"], "-": ["\u2013", "\u2014"], " ": ["  ", "\n", "\u00a0"]}


@given(WORDS, st.data())
@settings(max_examples=300, deadline=None)
def test_a_quote_cut_from_its_passage_verifies_whatever_its_typography(words, data):
    passage = " ".join(words)
    start = data.draw(st.integers(0, len(passage) - 1))
    end = data.draw(st.integers(start + 1, len(passage)))
    quote = passage[start:end]
    assume(len(fold(quote).text.strip(" .,;:!?'\"-")) >= 12)
    styled = "".join(data.draw(st.sampled_from([c, *TYPOGRAPHY.get(c, [])])) for c in quote)
    styled = data.draw(st.sampled_from([styled, styled.upper(), styled.title()]))
    assert judge_quote(styled, [passage]) == VERIFIED


@given(WORDS, st.data())
@settings(max_examples=300, deadline=None)
def test_a_changed_quote_verifies_only_where_the_changed_text_is_in_the_passage(words, data):
    passage = " ".join(words)
    start = data.draw(st.integers(0, len(passage) - 13))
    quote = passage[start:start + data.draw(st.integers(13, len(passage) - start))]
    letters = [i for i, c in enumerate(quote) if c.isalpha()]
    assume(letters)
    i = data.draw(st.sampled_from(letters))
    new = data.draw(st.sampled_from([c for c in "xqzj" if c != quote[i].lower()]))
    for changed in (quote[:i] + new + quote[i + 1:], quote.replace(" ", " not ", 1)):
        assume(changed != quote)
        inside = fold(changed).text.strip(" .,;:!?'\"-") in fold(passage).text
        assert (judge_quote(changed, [passage]) == VERIFIED) is inside


def test_a_quote_is_judged_against_its_evidence_then_the_other_passages():
    evidence, other = "Refunds are accepted within 30 days of purchase.", "Shipping takes a week to most countries."
    assert judge_quote("accepted within 30 days", [evidence], [other]) == VERIFIED
    assert judge_quote("Shipping takes a week", [evidence], [other]) == MISATTRIBUTED
    assert judge_quote("accepted within 60 days", [evidence], [other]) == UNVERIFIED
    assert judge_quote("30 days", [evidence]) == SHORT  # under 12 characters: not judged


def test_quotes_are_found_in_straight_and_typographic_marks_with_their_offsets():
    claim = 'It says "refunds are accepted" and \u201cwithin thirty days\u201d.'
    found = quotes(claim)
    assert [q.text for q in found] == ["refunds are accepted", "within thirty days"]
    assert [claim[q.start:q.end] for q in found] == ["refunds are accepted", "within thirty days"]


def test_folding_keeps_the_original_offsets():
    text = "Caf\u00e9\u00a0\u00a0\u201cBasel\u201d \u2014 ok"
    folded = fold(text)
    assert folded.text == 'caf\u00e9 "basel" - ok'
    start = folded.text.index("basel")
    assert text[slice(*folded.original(start, start + 5))] == "Basel"


NUMBER_CASES = [
    ("87%", "87.3%", True), ("87.3%", "87%", False), ("3.5 million", "3,500,000", True),
    ("3.5 million", "3,456,789", True), ("1,200", "1200", True), ("$35M", "35%", False),
    ("$35M", "$35,000,000", True), ("2022", "2021", False), ("85%", "87%", False), ("12k", "12,400", True),
    ("\u20ac12.50", "\u20ac12.5", True), ("\u20ac12.50", "$12.50", False), ("5 percent", "5%", True),
    ("-3%", "3%", False),
]


@pytest.mark.parametrize(("claimed", "evidence", "supported"), NUMBER_CASES)
def test_the_issue_s_number_cases(claimed, evidence, supported):
    [c], [e] = numbers(claimed), numbers(evidence)
    assert supports(e, c) is supported


@given(st.integers(0, 10**9), st.integers(0, 3), st.sampled_from(["", "%", "$", "\u20ac"]), st.data())
@settings(max_examples=300, deadline=None)
def test_a_copied_number_is_supported_and_a_changed_one_is_not(whole, decimals, unit, data):
    digits = f"{whole:,}" if data.draw(st.booleans()) else str(whole)
    written = digits + ("." + "".join(data.draw(st.sampled_from("0123456789")) for _ in range(decimals))
                        if decimals else "")
    text = (unit + written) if unit in ("$", "\u20ac") else written + unit
    evidence = f"The figure was {text} last year."
    assert unsupported(f"It was {text}.", [evidence]) == []
    # One digit changed: the value moves by at least the claim's precision.
    positions = [i for i, c in enumerate(text) if c.isdigit()]
    i = data.draw(st.sampled_from(positions))
    changed = text[:i] + str((int(text[i]) + data.draw(st.integers(1, 9))) % 10) + text[i + 1:]
    assume(numbers(changed) and numbers(changed)[0].value != numbers(text)[0].value)
    assert [str(n.value) for n in unsupported(f"It was {changed}.", [evidence])] == [str(numbers(changed)[0].value)]
    # Another unit class: never supported.
    other = data.draw(st.sampled_from([u for u in ("", "%", "$") if u != unit]))
    moved = (other + written) if other == "$" else written + other
    assert len(unsupported(f"It was {moved}.", [evidence])) == 1


def _written(value: Decimal, unit: str, data) -> str:
    """A number near a claimed one as a passage may write it: separators, leading zeros, a magnitude."""
    text = f"{abs(value):f}"
    form = data.draw(st.sampled_from(["plain", "thousands", "zeros", "magnitude"]))
    if form == "thousands":
        text = f"{abs(value):,f}"
    elif form == "zeros":
        text = "0" * data.draw(st.integers(1, 2)) + text
    elif form == "magnitude" and unit != "%":
        word, shift = data.draw(st.sampled_from([(" thousand", 3), ("k", 3), (" million", 6), ("M", 6), (" bn", 9)]))
        text = f"{abs(value).scaleb(-shift):f}{word}"
    if unit == "%":
        text += data.draw(st.sampled_from(["%", " %", " percent", " per cent"]))
    elif unit:
        text = unit + data.draw(st.sampled_from(["", " "])) + text
    return ("-" if value < 0 else "") + text


@given(st.integers(0, 10**6), st.integers(0, 3), st.sampled_from(["", "%", "$", "\u20ac"]), st.data())
@settings(max_examples=1500, deadline=None)
def test_the_number_search_finds_what_reading_every_number_finds(whole, places, unit, data):
    """``unsupported`` looks in a passage only where a supporting number may start; reading every number of the
    evidence (the definition) gives the same, on numbers around the claim's rounding interval, written in every
    way, glued to words, separators and signs."""
    value = Decimal(whole).scaleb(-places) * data.draw(st.sampled_from([1, 1, 1, -1]))
    claim = f"It was {_written(value, unit, data)} then."
    glue = st.sampled_from(["", " ", "a", ",", ".", "-", "(", "0", "1", "x.", "\uff10", "\u2212", "B2B", ", "])
    evidence = []
    for _ in range(data.draw(st.integers(1, 3))):
        words = []
        for _ in range(data.draw(st.integers(0, 5))):
            step = Decimal(data.draw(st.integers(-30, 30))).scaleb(data.draw(st.integers(-4, 1)) - places)
            near = value + step * data.draw(st.sampled_from([1, 10, 100]))
            near_unit = data.draw(st.sampled_from([unit, unit, "", "%", "$"]))
            words.append(data.draw(glue) + _written(near, near_unit, data) + data.draw(glue) + " ")
        evidence.append("".join(words))
    everything: dict[str, list[Decimal]] = {}
    for passage in evidence:
        for n in numbers(passage):
            everything.setdefault(n.unit, []).append(n.value)
    expected = [n for n in numbers(claim) if not any(supports(n._replace(value=v, unit=u), n)
                                                      for u, vs in everything.items() for v in vs)]
    assert unsupported(claim, evidence) == expected


def test_numbers_are_read_with_their_unit_precision_and_offsets():
    text = "Sales rose 87.3% to $3.5 million in 2021 (GPT-4 said 12k)."
    found = [(str(n.value), n.unit, str(n.precision), text[n.start:n.end]) for n in numbers(text)]
    assert found == [("87.3", "%", "0.1", "87.3%"), ("3.5E+6", "$", "1E+5", "$3.5 million"),
                     ("2021", "", "1", "2021"), ("4", "", "1", "4"), ("1.2E+4", "", "1E+3", "12k")]
    # "5 m" is five (metres, not millions); digits glued to letters (a word, an ordinal) are no number
    assert [str(n.value) for n in numbers("5 m and B2B and 3rd")] == ["5"]
    assert numbers("1,200")[0].value == Decimal(1200)


# --- the family: --metrics grounding ---------------------------------------------------------------

PASSAGES = ["Refunds are accepted within 30 days of purchase.", "Revenue grew 87% in 2021."]
GOLD = [{"qid": f"q{i}", "question": f"q{i}?", "answerable": True, "gold_citations": ["d1"]} for i in range(1, 5)]
TRACES = [
    # a verified quote, a supported number (30)
    {"qid": "q1", "answer_json": {"claim": 'It says "refunds are accepted within 30 days".', "citations": ["d1"]}},
    # an unverified quote; 85% and 2022 unsupported
    {"qid": "q2", "answer_json": {"claim": 'Revenue grew 85% in 2022, "as the report says clearly".',
                                  "citations": ["d2"]}},
    # a misattributed quote (in d2, cites d1); a short one, not judged
    {"qid": "q3", "answer_json": {"claim": '"revenue grew 87% in 2021" and "in short"', "citations": ["d1"]}},
    # no citation: every passage is its evidence; 87% supported
    {"qid": "q4", "answer_json": {"claim": "Revenue grew 87%.", "citations": []}},
]


@pytest.fixture
def grounding_run(isolated):
    from conftest import write

    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{**t, "retrieved_ids": ["d1", "d2"], "retrieved_chunks": PASSAGES} for t in TRACES])
    return isolated


def test_the_family_counts_the_run_s_quotes_and_numbers(ragscore, grounding_run):
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--no-fail",
                   "--per-question").json()
    metrics = doc["metrics"]
    # Judged quotes: q1 verified, q2 unverified, q3 misattributed (its "in short" is short): 3.
    # Numbers: q1 30 (supported), q2 85% and 2022 (not), q3 87% and 2021 (supported: d2 is retrieved, but only
    # the cited d1 is its evidence, so not), q4 87% (supported). 6 numbers, 4 unsupported.
    assert (metrics["quote_verified_rate"], metrics["quote_misattributed_rate"], metrics["quote_unverified_rate"],
            metrics["number_unsupported_rate"]) == (1 / 3, 1 / 3, 1 / 3, 4 / 6)
    rows = {q["qid"]: q["metrics"] for q in doc["questions"]}
    assert rows["q3"]["quote_misattributed_rate"] == 1.0 and rows["q4"]["quote_verified_rate"] is None
    assert (metrics["leak_rate"], metrics["leak_from_context_rate"]) == (0.0, 0.0)
    # The counts the rates divide, in the report's top-level "grounding" object.
    assert doc["grounding"] == {"quotes_judged": 3, "quotes_verified": 1, "quotes_misattributed": 1,
                                "quotes_unverified": 1, "quotes_short": 1, "numbers": 6, "numbers_unsupported": 4,
                                "answered": 4, "leaked": 0, "leaked_from_context": 0, "provider_citations": 0,
                                "provider_citations_valid": 0, "provider_citations_misplaced": 0,
                                "provider_citations_invalid": 0, "provider_citations_retrieved": 0}
    assert (metrics["provider_citation_valid_rate"], metrics["provider_citation_retrieved_rate"]) == (None, None)


def test_leaks_are_counted_by_where_they_came_from(ragscore, isolated):
    from conftest import write

    write(isolated / "g.jsonl", [{"qid": f"q{i}", "question": q, "answerable": True} for i, q in enumerate(
        ["Who owns it?", "My mail is bob@example.org: is it on file?", "Card?", "Contact?"])])
    passages = ["The owner is Jane, jane.doe@example.com.", "Card on file: 4111 1111 1111 1111."]
    claims = ["Write to jane.doe@example.com.",   # from the context
              "Yes, bob@example.org is on file.",  # echoed from the question: no leak
              "The card is 4111-1111-1111-1111.",  # from the context, written otherwise
              "Try mallory@example.net."]          # invented
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "answer": c, "retrieved_ids": ["d1", "d2"],
                                  "retrieved_chunks": passages} for i, c in enumerate(claims)])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--no-fail",
                   "--per-question")
    metrics = run.json()["metrics"]
    assert (metrics["leak_rate"], metrics["leak_from_context_rate"]) == (3 / 4, 2 / 4)
    assert "jane.doe" not in run.out.replace('"Write to jane.doe@example.com."', "")  # no report quotes a leak


def test_the_family_is_the_same_in_jobs_and_partials_and_gates(ragscore, grounding_run):
    args = ("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--no-fail")
    whole = ragscore(*args)
    assert ragscore(*args, "--jobs", "2").out == whole.out
    for part in (1, 2):
        assert ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding",
                        "--part", f"{part}/2", "-o", f"p{part}.json").status == 0
    assert ragscore("merge", "p1.json", "p2.json", "--no-fail").json()["metrics"] == whole.json()["metrics"]
    gated = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", "number_unsupported_rate<=0.5")
    assert gated.status == 1 and "FAIL    number_unsupported_rate = 0.6667 (gate <= 0.5)" in gated.err


def test_explain_shows_each_finding_at_its_characters_and_never_a_leaked_value(ragscore, grounding_run):
    from conftest import write

    traces = [{"qid": "q1", "answer_json": {"claim": 'It says "refunds are accepted within 30 days"; ask jane@corp.io.',
                                            "citations": ["d1"]}},
              {"qid": "q2", "answer_json": {"claim": 'Revenue grew 85% in 2022, "as the report says clearly".',
                                            "citations": ["d2"]}}]
    write(grounding_run / "t.jsonl", [{**t, "retrieved_ids": ["d1", "d2"], "retrieved_chunks": PASSAGES}
                                      for t in traces])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--no-fail", "-q",
                   "--explain", "q1", "--explain", "q2")
    assert "jane@corp.io" not in run.out
    lines = run.out.splitlines()
    assert 'claim (normalised): "it says \\"refunds are accepted within 30 days\\"; ask [email]."' in lines
    assert [line for line in lines if line.startswith(("grounding", "quote at", "number", "leak"))] == [
        "grounding evidence: the 1 cited passage",
        'quote at characters 9-44: "refunds are accepted within 30 days": verified',
        "numbers: 1, each supported by the evidence",
        "leak at characters 51-63: email (invented)",
        "grounding evidence: the 1 cited passage",
        'quote at characters 27-53: "as the report says clearly": unverified',
        'number at characters 13-16: "85%": unsupported',
        'number at characters 20-24: "2022": unsupported',
    ]


# --- the fast paths give what the plain definitions give -----------------------------------------------

PASSAGE_PIECES = st.lists(st.sampled_from(["the", "River", "rhine", "flows", "north", "  ", "\n", "\t", "\u00e9t\u00e9",
                                          "-", "\u2013", "'", "\u2019", "Basel", ".", " ", "\x1f", "\u00a0",
                                          "\u0301", "\ufb01"]),
                          min_size=1, max_size=40)


@given(st.lists(PASSAGE_PIECES, min_size=1, max_size=4), st.data())
@settings(max_examples=400, deadline=None)
def test_passages_hold_a_needle_exactly_when_a_folded_text_does(passages, data):
    from ragscore.metrics.grounding import _any_holds
    from ragscore.text import folded

    passages = [" ".join(p) if data.draw(st.booleans()) else "".join(p) for p in passages]
    passage = data.draw(st.sampled_from(passages))
    start = data.draw(st.integers(0, len(passage)))
    needle = folded(passage[start:start + data.draw(st.integers(1, 40))]).strip()
    assume(needle)
    if data.draw(st.booleans()):  # a needle changed by one letter
        i = data.draw(st.integers(0, len(needle) - 1))
        needle = needle[:i] + data.draw(st.sampled_from("xyz ")) + needle[i + 1:]
        needle = " ".join(needle.split())
        assume(needle)
    assert _any_holds(passages, needle) is any(needle in folded(p) for p in passages)


@given(st.lists(PASSAGE_PIECES, min_size=2, max_size=4), st.data())
@settings(max_examples=600, deadline=None)
def test_a_quote_is_judged_as_its_folded_text_in_the_folded_passages(passages, data):
    """judge_quote's shortcuts (a quote copied as it is; a passage lower-cased, unfolded) give what folding
    everything gives."""
    passages = [" ".join(p) if data.draw(st.booleans()) else "".join(p) for p in passages]
    source = data.draw(st.sampled_from(passages))
    start = data.draw(st.integers(0, len(source)))
    quote = source[start:start + data.draw(st.integers(1, 60))]
    assume(quote)
    if data.draw(st.booleans()):  # changed: one character, or its case
        i = data.draw(st.integers(0, len(quote) - 1))
        quote = quote[:i] + data.draw(st.sampled_from(["x", "A", " ", "\u00e9", "\n"])) + quote[i + 1:]
    split = data.draw(st.integers(1, len(passages) - 1))
    evidence, others = passages[:split], passages[split:]
    needle = fold_text(quote).strip(" .,;:!?'\"-")
    expected = (SHORT if len(needle) < 12 else VERIFIED if any(needle in fold_text(p) for p in evidence)
                else MISATTRIBUTED if any(needle in fold_text(p) for p in others) else UNVERIFIED)
    assert judge_quote(quote, evidence, others) == expected


def test_a_quote_copied_into_a_passage_that_folds_otherwise_is_not_taken_as_copied():
    # The passage's accent joins the quote's last letter once folded: "flowś" is not "flows".
    assert judge_quote("the river flows", ["the river flows\u0301 north"]) == UNVERIFIED
    assert judge_quote("the river flows", ["the river flows north"]) == VERIFIED


# What a quote is, as one expression: a mark, one or more characters but a closing mark or a line break, the
# closing mark (inside typographic marks, no opening one either).
QUOTE = re.compile(r'"([^"\n]+)"|\u201c([^\u201c\u201d\n]+)\u201d')


@given(st.lists(st.sampled_from(['"', "\u201c", "\u201d", "\n", "a", "b c", " ", '""', "\u201c\u201d", "\u2018"]),
                max_size=14).map("".join))
@settings(max_examples=2000, deadline=None)
def test_quotes_are_the_spans_one_expression_finds(claim):
    expected = [(m.group(1) if m.group(1) is not None else m.group(2), m.start(m.lastindex), m.end(m.lastindex))
                for m in QUOTE.finditer(claim)]
    assert [tuple(q) for q in quotes(claim)] == expected


@given(st.text(st.sampled_from("aB \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x00\x7f.-'"), max_size=30))
@settings(max_examples=500, deadline=None)
def test_a_plain_text_is_folded_as_the_long_way_folds_it(text):
    from ragscore.text import fold_plain, spaced_singly

    assert fold_text(text) == " ".join(text.lower().split())
    plain = fold_plain(text)
    assert plain is None or plain == fold_text(text)
    assert spaced_singly(text) is (all(c == " " or not c.isspace() for c in text) and "  " not in text)


@given(st.lists(st.tuples(st.integers(-10**7, 10**7), st.integers(0, 3), st.sampled_from(["", "%", "$"])),
                min_size=0, max_size=8),
       st.integers(-10**7, 10**7), st.integers(-3, 3), st.sampled_from(["", "%", "$"]))
@settings(max_examples=400, deadline=None)
def test_the_interval_check_is_supports_for_every_value(found, mantissa, exponent, unit):
    from ragscore.metrics.figures import Number, _supported

    precision = Decimal(1).scaleb(exponent)
    claimed = Number(Decimal(mantissa) * precision, unit, precision, 0, 1)
    evidence = [Number(Decimal(m).scaleb(-d), u, Decimal(1).scaleb(-d), 0, 1) for m, d, u in found]
    # Ties included: an evidence value half a precision away rounds away from zero.
    evidence.append(Number(claimed.value + precision / 2, unit, precision, 0, 1))
    evidence.append(Number(claimed.value - precision / 2, unit, precision, 0, 1))
    for e in evidence:
        assert _supported(claimed, [e.value] if e.unit == unit else []) is supports(e, claimed)
