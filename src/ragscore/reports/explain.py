"""Explain one question's label step by step (``--explain QID``)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragscore.loaders.jsonl import InputFile
from ragscore.loaders.provider_responses import ProviderResponse
from ragscore.loaders.records import Records
from ragscore.loaders.tool_calls import GoldTools, ReadCalls
from ragscore.loaders.trace import Cites
from ragscore.metrics.answer import LABEL_ORDER, Outcome
from ragscore.quoting import visible
from ragscore.reports.reasons import citation_reason, containment_reason, quote, reason, refusal_reason
from ragscore.results import Explained
from ragscore.settings import DEFAULT_REFUSAL_PATTERNS, Settings
from ragscore.text import normalise


def _rank(retrieved: Sequence[str], ident: str) -> str:
    try:
        return f"rank {retrieved.index(ident) + 1}"
    except ValueError:
        return "not retrieved"


def _pattern_match(outcome: Outcome, claim: str) -> str:
    """Quote what a refusal pattern matched in the claim, for an outcome refused by one."""
    if outcome.refused_by != "pattern" or outcome.matched is None:
        return ""
    found = re.search(outcome.matched, normalise(claim).strip(), re.IGNORECASE)
    if found is None or not found.group():
        return ""
    from ragscore.metrics.leaks import leaks

    if leaks(claim):  # what the pattern took in may hold the secret, lower-cased past recognising: not shown
        return " (it matched text that holds a leaked value, not shown)"
    return f" (it matched {quote(found.group())})"


def _lines(lines: list[str]) -> str:
    """Join the lines; a control character from the input (a qid, a file name) shows as an escape, never raw."""
    return "".join(visible(line) + "\n" for line in lines)


def render_explanation(explained: Explained, settings: Settings, traces: InputFile | Records) -> str:
    """Walk through the rules for one question, in the order the label rules apply."""
    trace_name = traces.name
    gold, outcome, trace = explained.item, explained.outcome, explained.trace
    duplicates = explained.lines - 1
    lines = [f"qid: {gold.qid}"]
    if gold.question is not None:
        lines.append(f"question: {quote(gold.question)}")
    lines.append(f"answerable: {'yes' if gold.answerable else 'no'}")
    samples = explained.sampled
    if samples is not None and trace is not None:  # repeated samples: all of them, then the last one in full
        counts = ", ".join(f"{label.value} {n}" for label, n in zip(LABEL_ORDER, samples.labels, strict=True) if n)
        lines.append(f"samples: {samples.correct} of {samples.n} correct ({counts}); below, the last of them")
    lines.append(f"label: {outcome.label.value}: {reason(outcome, gold)}")
    for number, (doc, start, end, grade) in enumerate(gold.spans or (), 1):
        text = "" if explained.span_texts is None else f": {quote(explained.span_texts[number - 1])}"
        graded = f", grade {grade}" if grade != 1 else ""
        lines.append(f"gold span {number}: {quote(doc)} characters {start:,}-{end:,}{graded}{text}")
    if trace is None:
        lines.append(f"trace: none in {trace_name}; scored as a refusal")
        if gold.tools is not None:
            lines += tool_lines(gold.tools, None)
        return _lines(lines)
    if samples is not None:
        later = f" (sample {samples.n} of {samples.n})"
    else:
        later = f" (the last of {duplicates + 1} lines for this question)" if duplicates else ""
    trace_name, line = traces.locate(trace.line)
    lines.append(f"trace: {trace_name} line {line}{later}")
    shown = trace.claim
    if "grounding" in settings.families:  # a leak's value is never shown: its kind stands for it
        from ragscore.metrics.leaks import masked

        shown = masked(shown)
    lines.append(f"claim (normalised): {quote(normalise(shown))}" + ("" if trace.claim_from else " (no claim)"))
    tokens = ", ".join(map(quote, settings.refusal_tokens))
    if outcome.answered:
        how = (f'"{trace.refused_from}" is false' if trace.refused is not None
               else f"the claim is not a refusal token ({tokens})")
        if trace.refused is None and settings.refusal_patterns:
            named = ("the default ones, anchored at its start" if settings.refusal_patterns == DEFAULT_REFUSAL_PATTERNS
                     else ", ".join(map(quote, settings.refusal_patterns)))
            how += f" and matches no refusal pattern ({named})"
        lines.append(f"refusal: no, {how}")
    else:
        lines.append(f"refusal: yes, {refusal_reason(outcome)}"
                     + (f" ({tokens})" if outcome.refused_by == "token" else "")
                     + _pattern_match(outcome, trace.claim))
    if trace.cites is Cites.ABSENT:
        lines.append("citations: none given (non-compliant)")
    elif trace.cites is Cites.INVALID:
        lines.append(f"citations: {trace.citations_from} is not a list of ids (non-compliant, never hits)")
    else:
        cited = ", ".join(f"{quote(c)} ({_rank(trace.retrieved, c)})" for c in trace.citations) or "empty list"
        lines.append(f"citations (from {trace.citations_from}): {cited}")
    gold_ranks = ", ".join(f"{quote(c)} ({_rank(trace.retrieved, c)})" for c in gold.citations) or "none"
    lines.append(f"gold citations: {gold_ranks}; {len(trace.retrieved)} ids retrieved, k = {settings.k}")
    if outcome.answered:
        scope = "on" if settings.scope_citations else "off"
        lines.append(f"citation hit: {'yes' if outcome.hit else 'no'}, {citation_reason(outcome, gold)} "
                     f"(scoping {scope})")
        needles = ", ".join(map(quote, gold.needles))
        checked = f" (looked for: {needles})" if needles and outcome.matched is None else ""
        lines.append(f"containment ({gold.rule.value}): {'yes' if outcome.contained else 'no'}, "
                     f"{containment_reason(outcome, gold)}{checked}")
        if gold.forbidden:
            found = f"yes, {quote(outcome.forbidden)}" if outcome.forbidden is not None else "no"
            lines.append(f"forbidden substring: {found}")
        if "grounding" in settings.families:
            lines += grounding_lines(trace.claim, trace.retrieved, trace.citations, explained.passages,
                                     trace.question if trace.question is not None else gold.question)
            lines += provider_lines(explained.response, trace.retrieved, explained.passages)
    if gold.tools is not None:
        lines += tool_lines(gold.tools, explained.tool_calls)
    return _lines(lines)


def tool_lines(gold: GoldTools, read: ReadCalls | None) -> list[str]:
    """The tool calls of one question: each gold call, paired with the predicted call that matches it or missed;
    each predicted call no gold call pairs with (extra, or its arguments not JSON); the trajectory verdicts."""
    from ragscore.metrics.tools import describe_calls, tools_row

    predicted = read.calls if read is not None else ()
    rule = f"arguments {gold.arguments}, trajectory {gold.match}"
    out = [f"tool calls: {len(gold.calls)} expected, {len(predicted)} made ({rule})"]
    if read is not None and not read.found:
        out.append("tool calls: the trace holds none in a shape ragscore reads (no \"tool_calls\" list, no provider "
                   "response): scored as calling no tool")
    if read is not None and read.unreadable:
        out.append(f"tool calls: {read.unreadable} entr{'y' if read.unreadable == 1 else 'ies'} of \"tool_calls\" "
                   "no call in a shape ragscore reads (left out)")
    out += describe_calls(predicted, gold.calls, gold.arguments)
    row = dict(zip(("exact", "in_order", "any_order"), tools_row(predicted, gold)[5:8], strict=True))
    verdicts = ", ".join(f"{name} {'yes' if value else 'no'}" for name, value in row.items())
    correct = "correct" if row[gold.match] else "not correct"
    out.append(f"trajectory: {verdicts}; tool use {correct} by tool_match {gold.match}")
    return out


def grounding_lines(claim: str, ids: Sequence[str], cited: Sequence[str], passages: Sequence[str],
                    question: str | None) -> list[str]:
    """What --metrics grounding found in one claim: each quote, each unsupported number and each leak, at its
    characters in the claim (a leak by its kind alone: its value is never shown)."""
    from ragscore.metrics.grounding import SHORT, grounding_findings
    from ragscore.metrics.leaks import masked

    found = grounding_findings(claim, ids, cited, passages, question)
    if found.evidence == "cited":
        out = [f"grounding evidence: the {found.passages} cited passage{'s' if found.passages != 1 else ''}"]
    elif found.evidence == "retrieved":
        out = [f"grounding evidence: every retrieved passage ({found.passages})"]
    else:
        out = ["grounding evidence: none (the trace has no passage texts): quotes and numbers not judged"]
    by_kind = {kind: [f for f in found.items if f.kind == kind] for kind in ("quote", "number", "leak")}
    for f in by_kind["quote"]:
        shown = "short, not judged" if f.verdict == SHORT else f.verdict
        out.append(f"quote at characters {f.start}-{f.end}: {quote(masked(claim[f.start:f.end]))}: {shown}")
    out += [f"number at characters {f.start}-{f.end}: {quote(masked(claim[f.start:f.end]))}: unsupported"
            for f in by_kind["number"]]
    if found.numbers and not by_kind["number"]:
        out.append(f"numbers: {found.numbers}, each supported by the evidence")
    out += [f"leak at characters {f.start}-{f.end}: {f.detail.replace('_', ' ')} ({f.verdict.replace('_', ' ')})"
            for f in by_kind["leak"]]
    return out


def provider_lines(response: ProviderResponse | None, ids: Sequence[str], passages: Sequence[str]) -> list[str]:
    """Each citation of the provider response a trace keeps, judged: what it cites, where, and its verdict
    (metrics/provider_citations.py); no cited text is shown, only offsets."""
    from ragscore.metrics.provider_citations import INVALID, MISPLACED, UNCHECKED, judge_response

    if response is None or not response.citations:
        return []
    count = len(response.citations)
    out = [f"provider citations: {count} in {response.key} ({response.provider})"]
    for n, (c, j) in enumerate(zip(response.citations, judge_response(response, ids, passages), strict=True), 1):
        document = (f"document {c.document}" if isinstance(c.document, int)
                    else quote(c.document) if c.document is not None else "no document")
        if j.position is None:
            document += " (not retrieved)"
        elif j.position < len(ids) and ids[j.position] != c.document:  # an index, or Cohere's own id
            document += f" ({quote(ids[j.position])}, rank {j.position + 1})"
        else:
            document += f" (rank {j.position + 1})"
        where = f" {c.location.unit} {c.location.start}-{c.location.end}" if c.location is not None else ""
        answer = (c.given.unit, c.given.start, c.given.end) if c.given is not None else (
            ("characters", *c.span) if c.span is not None else None)
        part = f"; answer {answer[0]} {answer[1]}-{answer[2]}" if answer is not None else ""
        why = ""
        if j.verdict == MISPLACED:
            at, of = (j.found, "its document") if j.document == MISPLACED else (j.found_segment, "the answer")
            what = "the cited text" if of == "its document" else "the answer part"
            why = f" ({what} is at characters {at[0]}-{at[1]} of {of})" if at is not None else ""
        elif j.verdict == INVALID:
            why = (" (the cited text is not in its document)" if j.document == INVALID
                   else " (the answer part is not in the answer)" if c.segment is not None
                   else " (its answer offsets lie outside the answer)")
        elif j.verdict == UNCHECKED:
            why = (" (it gives no text of its document)" if c.cited is None
                   else " (the trace has no text of its document)")
        out.append(f"provider citation {n}: {c.kind} of {document}{where}{part}: {j.verdict}{why}")
    return out
