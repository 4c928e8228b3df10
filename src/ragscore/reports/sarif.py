"""SARIF 2.1.0 (the Static Analysis Results Interchange Format, which GitHub code scanning reads): ``validate``'s
problems, and ``score``'s failed gates and grounding findings, each a result of its rule at its file and line.

- Each kind of problem or finding is a rule (``VALIDATE_RULES``, ``SCORE_RULES``): id, name, descriptions, help
  and default level. A result's level is its own (a near miss under ``--lenient`` is a warning).
- Paths are relative to the folder ragscore runs in (the repository's root in CI), with ``uriBaseId``
  ``%SRCROOT%``. A file outside that folder is named by its file name alone, with no base, as every other
  report names it (no machine's folders are written), and standard input as ``-``: code scanning cannot show
  either in the repository.
- Each result's ``partialFingerprints`` (``ragscore/v1``, and ``primaryLocationLineHash``, the one GitHub code
  scanning matches alerts by) hash what stays when lines are added above it: the record it is in (its qid,
  else the sha256 of its text), its rule, its column within the record (a finding's first character in the
  claim; 0 when it has none), and how many results before it in the same file have all three alike. Never
  its line: an alert is not reopened when lines move. A failed gate is named by its metric.
- The same inputs give the same bytes: no time, no absolute path, keys sorted.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Final, NamedTuple
from urllib.parse import quote as quote_uri

from ragscore.quoting import quote, visible
from ragscore.reports.common import gate_finding, gate_table, shown_path
from ragscore.reports.json_report import dumps_json
from ragscore.version import __version__

if TYPE_CHECKING:
    from ragscore.gates import GateResult
    from ragscore.loaders.jsonl import InputFile
    from ragscore.loaders.records import Records
    from ragscore.metrics.grounding import Findings
    from ragscore.results import Evaluation
    from ragscore.validate import Problem

SCHEMA_URI: Final = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT: Final = "%SRCROOT%"
FINGERPRINT: Final = "ragscore/v1"
# The key GitHub code scanning matches results across runs by; upload-sarif computes it from the line's text
# when a result lacks it (and warns when a result has its own, which it keeps).
GITHUB_FINGERPRINT: Final = "primaryLocationLineHash"
_STDIN: Final = ("-", "<stdin>")


class Rule(NamedTuple):
    """One kind of result: its id, a name (an identifier), a one-line and a full description, and its level."""

    id: str
    name: str
    level: str  # "error" or "warning": a result's level unless it says otherwise
    short: str
    full: str

    def descriptor(self) -> dict[str, Any]:
        """The SARIF reportingDescriptor."""
        return {"id": self.id, "name": self.name, "shortDescription": {"text": self.short},
                "fullDescription": {"text": self.full}, "help": {"text": self.full},
                "defaultConfiguration": {"level": self.level}}


def _rules(*rules: Rule) -> dict[str, Rule]:
    return {rule.id: rule for rule in rules}


_GOLD: Final = "docs/inputs.md gives the gold contract."
_TRACE: Final = "docs/inputs.md gives the trace contract and the formats ragscore reads."

# The kinds of ragscore.validate's problems.
VALIDATE_RULES: Final = _rules(
    Rule("input/unreadable", "InputUnreadable", "error", "An input cannot be read.",
         "The file cannot be opened or read on: it does not exist, is a folder, is binary or cannot be "
         "decompressed, has a line longer than ragscore reads, or is a CSV export among several trace files. What "
         "follows the point it stopped at is not checked."),
    Rule("input/malformed", "MalformedRecord", "error", "A record is not valid JSON (or a valid CSV row).",
         "The text here cannot be read as a record: invalid JSON or UTF-8 (JSON Lines hold one JSON value a line), "
         "or a malformed row of a CSV export. ragscore score refuses the file."),
    Rule("gold/invalid-item", "InvalidGoldItem", "error", "A gold record breaks the gold contract.",
         "The record is no valid gold item: a required field (qid, answerable) is missing, or a field has the "
         "wrong type or value. " + _GOLD),
    Rule("gold/duplicate-qid", "DuplicateQid", "error", "Two gold items have the same qid.",
         "Each gold item needs a qid of its own: traces join the gold set by it. The message names the line "
         "that defined it first."),
    Rule("gold/empty", "EmptyGoldSet", "error", "The gold set holds no question.",
         "A gold set needs at least one item to score against."),
    Rule("gold/short-claim-substring", "ShortClaimSubstring", "warning", "A claim substring is too short to match.",
         "A gold_claim_substr entry shorter than the shortest text claim containment looks for never matches, "
         "so no answer can contain it."),
    Rule("gold/nothing-to-cite", "NothingToCite", "warning", "An answerable item has no gold citations.",
         "Without gold_citations a citation can only hit by citing nothing: chr and precision judge citations "
         "by id (cited_evidence_recall judges gold_spans by the text they cover)."),
    Rule("gold/refusal-in-claim", "RefusalInGoldClaim", "warning", "The gold claim of an answerable item reads as "
         "a refusal.", "The gold claim contains a refusal phrase, or matches a refusal pattern ([scoring] "
         "refusal_tokens, refusal_patterns): an answer that says it would be scored as a refusal."),
    Rule("gold/similar-qids", "SimilarQids", "warning", "Qids differ only by case or white space.",
         "Two or more qids are the same but for case or white space: most likely one question written twice, "
         "or a trace meant for one joining the other."),
    Rule("contract/near-miss-field", "NearMissField", "error", "A key is a typo of a contract field.",
         "A key one edit or a plural away from a field of the gold or trace contract (gold_citation for "
         "gold_citations) is almost certainly that field, which ragscore then does not read. An error, or with "
         "--lenient a warning; the message names the field and how many records have the key."),
    Rule("trace/invalid-record", "InvalidTraceRecord", "error", "A trace record breaks the trace contract.",
         "The record is no JSON object, gives no qid or question text to join on (or a qid that is neither text "
         "nor an integer), or its scores are not numbers. " + _TRACE),
    Rule("trace/no-answer", "NoAnswerField", "warning", "A trace has no claim or refusal field.",
         "The trace gives neither a claim (the answer) nor a refusal: it is scored as an empty answer. With a "
         "trace format or --map, check the path the claim is read from. " + _TRACE),
    Rule("trace/invalid-refused", "InvalidRefused", "warning", "\"refused\" is neither true nor false.",
         "A refused field that is not a boolean is read as absent: the claim decides whether the trace refused."),
    Rule("trace/retrieved-without-id", "RetrievedWithoutId", "warning", "A retrieved entry gives no id.",
         "An entry of the retrieved list gives no document id: the trace is read as having retrieved nothing."),
    Rule("trace/ambiguous-question", "AmbiguousQuestion", "error", "A trace's question text matches several gold "
         "items.", "A trace without a qid joins the gold set by its question's text, which several gold items "
         "share here: give the trace a qid."),
    Rule("trace/unmatched", "UnmatchedTrace", "warning", "A trace matches no gold question.",
         "The trace's qid (or question text) is not in the gold set: it is ignored."),
    Rule("trace/duplicate", "DuplicateTrace", "warning", "Another trace for the same question.",
         "A question has more than one trace: the last one counts (score --repeats samples reads each as a "
         "sample)."),
    Rule("trace/cites-unretrieved", "CitesUnretrieved", "warning", "A trace cites ids it did not retrieve.",
         "Citations outside the retrieved ids are not counted as hits while citations are scoped to the "
         "retrieved ones (the default; --no-scope-citations)."),
    Rule("trace/invalid-citations", "InvalidCitations", "warning", "The citations are not a list of ids.",
         "The citations field is not a list of document ids: the trace is read as citing nothing."),
    Rule("trace/nothing-read", "NothingRead", "error", "Most traces hold nothing ragscore reads.",
         "Over half of the traces have no claim, refusal, retrieved list, scores or tool calls in the format "
         "they are read as: ragscore score refuses such a file. The message says which format was read and what "
         "the first record looks like. " + _TRACE),
    Rule("trace/nothing-joins", "NothingJoins", "error", "No trace joins a gold question.",
         "None of the traces joins a gold question by qid (or question text): the message shows the first keys "
         "of both sides."),
    Rule("trace/untraced-questions", "UntracedQuestions", "warning", "Gold questions have no trace.",
         "These gold questions have no trace: score counts each as MISSING_TRACE, and the default gate "
         "missing <= 0 fails."),
)

GATE_FAILED: Final = "gate/failed"
UNVERIFIED_QUOTE: Final = "grounding/unverified-quote"
MISATTRIBUTED_QUOTE: Final = "grounding/misattributed-quote"
UNSUPPORTED_NUMBER: Final = "grounding/unsupported-number"
INVALID_PROVIDER_CITATION: Final = "grounding/invalid-provider-citation"
LEAK: Final = "grounding/leak"
# score's failed gates and the grounding family's findings in each question's answer (--metrics grounding).
SCORE_RULES: Final = _rules(
    Rule(GATE_FAILED, "GateFailed", "error", "A quality gate failed.",
         "The run's value of a metric is on the wrong side of its gate's threshold, so ragscore exits 1. The "
         "result is at the gate's line in its settings file when it was set in one, else at the traces."),
    Rule(UNVERIFIED_QUOTE, "UnverifiedQuote", "warning", "A quote in an answer is in none of its passages.",
         "A quoted span of the answer (in double quotes) is in none of the passages it was judged against (the "
         "ones it cites, else every one it retrieved), nor in any other it retrieved. The result is at the "
         "trace's line; its properties give the quote's characters in the claim."),
    Rule(MISATTRIBUTED_QUOTE, "MisattributedQuote", "warning", "A quote is in a passage the answer does not cite.",
         "A quoted span of the answer is not in the passages it cites, but in another passage it retrieved: the "
         "citation is wrong. The result is at the trace's line; its properties give the quote's characters."),
    Rule(UNSUPPORTED_NUMBER, "UnsupportedNumber", "warning", "A number in an answer is not in its evidence.",
         "A number the answer states (a quantity, a percentage, an amount, a date) is supported by none of the "
         "numbers of its evidence. The result is at the trace's line; its properties give the number's "
         "characters in the claim."),
    Rule(INVALID_PROVIDER_CITATION, "InvalidProviderCitation", "warning", "A model provider's citation is "
         "invalid.", "A citation the model provider returned cites text that is not in the document it names, or "
         "an answer part that is not in the answer (or lies outside it). The result is at the trace's line."),
    Rule(LEAK, "Leak", "error", "An answer holds a secret or personal data.",
         "The answer holds a credential, key, token, card number, IBAN, e-mail address or phone number that the "
         "user did not give in the question: copied from a retrieved passage (from_context) or in none "
         "(invented). Its value is never written, only its kind and its characters in the claim."),
)


def _artifact(path: str) -> dict[str, str]:
    """A file as SARIF names it: relative to the working folder with ``%SRCROOT%``; outside it, by its name alone
    (no folder of the machine is written); standard input as ``-``."""
    if path in _STDIN:
        return {"uri": "-"}
    cwd = os.getcwd()
    absolute = os.path.abspath(path)  # normalised (.. resolved), symbolic links kept as named
    try:
        relative = os.path.relpath(absolute, cwd)
    except ValueError:  # another drive on Windows
        relative = os.pardir
    if relative == os.pardir or relative.startswith(os.pardir + os.sep) or os.path.isabs(relative):
        return {"uri": quote_uri(PurePath(path).name, safe="")}
    return {"uri": quote_uri(PurePath(relative).as_posix(), safe="/"), "uriBaseId": SRCROOT}


class _Result(NamedTuple):
    rule: Rule
    level: str
    message: str
    path: str | None  # None: no file (records given to the Python API)
    line: int | None
    column: int | None  # in the file, where known
    record: str  # what names the record wherever it moves (validate.record_key)
    position: int  # the column within the record the fingerprint takes (0: none)
    properties: Mapping[str, Any] | None = None


def fingerprint(record: str, rule: str, position: int, occurrence: int) -> str:
    """The result's fingerprint: the sha256 of its record, rule, column within the record and occurrence."""
    text = "\x1f".join((FINGERPRINT, record, rule, str(position), str(occurrence)))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _results(results: Iterable[_Result], rules: Mapping[str, Rule]) -> Iterator[dict[str, Any]]:
    index = {rule_id: n for n, rule_id in enumerate(rules)}
    seen: dict[tuple[str, str, str, int], int] = {}
    for r in results:
        artifact = _artifact(r.path) if r.path is not None else None
        key = (artifact["uri"] if artifact else "", r.record, r.rule.id, r.position)
        seen[key] = occurrence = seen.get(key, 0) + 1
        found = fingerprint(r.record, r.rule.id, r.position, occurrence)
        out: dict[str, Any] = {
            "ruleId": r.rule.id,
            "ruleIndex": index[r.rule.id],
            "level": r.level,
            "message": {"text": visible(r.message)},
            "partialFingerprints": {FINGERPRINT: found, GITHUB_FINGERPRINT: found},
        }
        if artifact is not None:
            physical: dict[str, Any] = {"artifactLocation": artifact}
            if r.line:
                physical["region"] = {"startLine": r.line, **({"startColumn": r.column} if r.column else {})}
            out["locations"] = [{"physicalLocation": physical}]
        if r.properties:
            out["properties"] = dict(r.properties)
        yield out


def render_sarif(command: str, rules: Mapping[str, Rule], results: Iterable[_Result]) -> Iterator[str]:
    """The SARIF log of one run of ``command``, piece by piece: one result a line, the rest indented."""
    run = {
        "automationDetails": {"id": f"ragscore/{command}/"},  # code scanning's category: one per command
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {SRCROOT: {"description": {"text": "The folder ragscore ran in."}}},
        "tool": {"driver": {"name": "ragscore", "semanticVersion": __version__, "version": __version__,
                            "rules": [rule.descriptor() for rule in rules.values()]}},
    }
    yield "{\n"
    yield f'  "$schema": {dumps_json(SCHEMA_URI)},\n'
    yield '  "runs": [\n    {\n'
    for key, value in run.items():
        yield f"      {dumps_json(key)}: " + dumps_json(value, indent=2, sort_keys=True).replace("\n", "\n      ")
        yield ",\n"
    yield '      "results": ['
    empty = True
    for result in _results(results, rules):
        yield ("\n        " if empty else ",\n        ") + dumps_json(result, sort_keys=True)
        empty = False
    yield "]\n" if empty else "\n      ]\n"
    yield '    }\n  ],\n  "version": "2.1.0"\n}\n'


# --- validate -----------------------------------------------------------------------------------------


def validate_sarif(problems: Sequence[Problem]) -> Iterator[str]:
    """``ragscore validate``'s problems as SARIF: each at its file, line and column."""
    return render_sarif("validate", VALIDATE_RULES, (
        _Result(VALIDATE_RULES[p.kind], p.severity, p.message, p.source, p.line, p.column, p.record, p.column or 0)
        for p in problems))


# --- score ------------------------------------------------------------------------------------------


def _input_path(file: InputFile | Records, line: int | None = None) -> tuple[str | None, int | None]:
    """The file (and its own line) that a line of an input is in: one of several files read as one; None for
    records given to the Python API."""
    from ragscore.loaders.jsonl import InputFile
    from ragscore.loaders.shards import Shards

    if not isinstance(file, InputFile):
        return None, None
    if line:
        return file.locate(line)
    return (file.spec.paths[0] if isinstance(file.spec, Shards) else file.name), None


def _gate_results(ev: Evaluation, results: Sequence[GateResult]) -> Iterator[_Result]:
    rule = SCORE_RULES[GATE_FAILED]
    for result in results:
        if result.status.value != "fail":
            continue
        gate = result.gate
        entry = gate_table([result])[gate.metric]
        message = f"ragscore gate {gate.metric}: {gate_finding(gate.metric, entry)}"
        path: str | None
        if os.path.isfile(gate.source):  # set in a settings file (not a default, nor --gates)
            path, line = gate.source, gate.line
            where = f"set in {quote(shown_path(gate.source))}" + (f" line {line}" if line else "")
        else:
            path, line = _input_path(ev.traces)
            where = "a built-in default gate" if gate.source == "default" else f"set by {gate.source}"
        yield _Result(rule, rule.level, f"{message} ({where})", path, line, None, f"gate:{gate.metric}", 0,
                      {"metric": gate.metric, "value": result.value, "threshold": gate.threshold, "op": gate.op})


_QUOTES: Final = {"unverified": UNVERIFIED_QUOTE, "misattributed": MISATTRIBUTED_QUOTE}
_LEAKED: Final = {"from_context": "copied from a retrieved passage", "invented": "in no retrieved passage and not "
                  "in the question"}


def _evidence(found: Findings) -> str:
    """What a claim was judged against: ``its evidence (the 2 passages it cites)``."""
    what = "it cites" if found.evidence == "cited" else "it retrieved"
    passages = "the passage" if found.passages == 1 else f"the {found.passages:,} passages"
    return f"its evidence ({passages} {what})"


def _finding_results(ev: Evaluation) -> Iterator[_Result]:
    """Each question's grounding findings (quotes unverified or misattributed, numbers unsupported, leaks not
    echoed from the question, invalid provider citations), at the line of the trace that counted."""
    from ragscore.metrics.families import enabled
    from ragscore.reports.document import GROUNDING_COUNTS

    names = [family.name for family in enabled(ev.settings.families)]
    if "grounding" not in names or ev.rows is None:
        return
    family = names.index("grounding")
    invalid = GROUNDING_COUNTS.index("provider_citations_invalid")
    for row in ev.rows:
        path, line = _input_path(ev.traces, row.outcome.line)
        record, qid = f"qid:{row.qid}", quote(row.qid)
        found = row.grounding
        for f in found.items if found is not None else ():
            where = f"claim characters {f.start}-{f.end}"
            properties = {"qid": row.qid, "claimStart": f.start, "claimEnd": f.end, "verdict": f.verdict}
            if f.kind == "quote" and f.verdict in _QUOTES:
                assert found is not None
                rule = SCORE_RULES[_QUOTES[f.verdict]]
                message = (f"{qid}: the quote at {where} is not in {_evidence(found)}"
                           + (", nor in another passage it retrieved" if found.evidence == "cited" else "")
                           if f.verdict == "unverified" else
                           f"{qid}: the quote at {where} is not in the passages it cites, but in another passage it "
                           "retrieved")
            elif f.kind == "number":
                assert found is not None
                rule = SCORE_RULES[UNSUPPORTED_NUMBER]
                message = f"{qid}: the number at {where} is supported by no number of {_evidence(found)}"
            elif f.kind == "leak" and f.verdict in _LEAKED:
                rule = SCORE_RULES[LEAK]
                properties["leak"] = f.detail
                message = f"{qid}: a leaked {f.detail.replace('_', ' ')} at {where}, {_LEAKED[f.verdict]}"
            else:
                continue
            yield _Result(rule, rule.level, message, path, line, None, record, f.start + 1, properties)
        counts = row.family_rows[family]
        bad = round(counts[invalid]) if counts is not None else 0
        if bad:
            rule = SCORE_RULES[INVALID_PROVIDER_CITATION]
            message = (f"{qid}: {bad} of the model provider's citations cite{'s' * (bad == 1)} text that is not where "
                       "it says (ragscore --explain shows each)")
            yield _Result(rule, rule.level, message, path, line, None, record, 0, {"qid": row.qid, "invalid": bad})


def score_sarif(ev: Evaluation, results: Sequence[GateResult]) -> Iterator[str]:
    """``ragscore score``'s failed gates, then each question's grounding findings (with ``--metrics grounding``,
    when the run kept its rows), as SARIF."""
    from itertools import chain

    return render_sarif("score", SCORE_RULES, chain(_gate_results(ev, results), _finding_results(ev)))
